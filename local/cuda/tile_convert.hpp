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

/// to_tiles(transpose(a)), bit for bit, without forming the transpose: a's entries are keyed by
/// (column, row) for the same sort. (A distributed PtAP's P^T operand: tessera::dist::gpu.)
template <class T>
DeviceTileMatrix<T> to_tiles_transposed(const DeviceCsr<T>& a, cudaStream_t stream = nullptr);

/// For each entry of to_csr(a), in its order, the position of its value in a.values: the map
/// from a product's CSR entry order to its tile storage (the value maps of dist/cuda).
template <class T>
DeviceBuffer<std::int64_t> csr_positions(const DeviceTileMatrix<T>& a, cudaStream_t stream = nullptr);

// Value refreshes for operands whose pattern is fixed (AMG re-setup): a gather instead of a
// full conversion (no sort, no scan, no read-back, no allocation).

/// to_tiles that also returns where each tile value comes from: tile value k = a.values[source[k]].
template <class T>
DeviceTileMatrix<T> to_tiles(const DeviceCsr<T>& a, DeviceBuffer<std::int64_t>& source, cudaStream_t stream = nullptr);

/// t.values[k] = a.values[source[k]]: `t` and `source` from to_tiles(a, source) on a's pattern.
template <class T>
void refresh_tile_values(const DeviceCsr<T>& a, const DeviceBuffer<std::int64_t>& source, DeviceTileMatrix<T>& t,
                         cudaStream_t stream = nullptr);

/// c's values (and columns, rewritten unchanged) from `a`; c's row_ptr from to_csr on a's pattern.
template <class T>
void refresh_csr_values(const DeviceTileMatrix<T>& a, DeviceCsr<T>& c, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
