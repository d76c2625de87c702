#pragma once
// Device-resident, exact conversions between DeviceCsr and DeviceTileMatrix (the device
// counterparts of tessera::to_tiles / to_csr in local/formats/convert.hpp: same results, bit
// for bit, explicit zeros included), so data never round-trips through the host.
#include "local/cuda/device_matrix.hpp"

namespace tessera::cuda {

template <class T>
DeviceTileMatrix<T> to_tiles(const DeviceCsr<T>& a, cudaStream_t stream = nullptr);

template <class T>
DeviceCsr<T> to_csr(const DeviceTileMatrix<T>& a, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
