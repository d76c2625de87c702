#pragma once
// ref::transpose(dist::extended_block(p)) on the device, from P's two device blocks: the left
// factor P_own^T of dist::DistPtap's outer product (P's owned rows over [owned | ghost] columns,
// transposed). The GPU backend makes it where it merged P (amg/cuda/dist_device_smoothing.hpp),
// so that the host does not transpose P again. Built only with CUDA.
//
// A stable radix sort of P's [local | non-local] entries by extended column keeps P's row order
// inside each column, so every row of the result is sorted: the host's counting sort exactly
// (the tests compare them bit for bit).
#include <cuda_runtime_api.h>

#include "local/cuda/device_matrix.hpp"

namespace tessera::dist::gpu {

/// P^T of the blocks `local` (rows x owned columns) and `nonlocal` (rows x ghost columns, ghost
/// g being extended column local.cols + g), on `stream` (synchronised before it returns).
/// Rows and extended columns must fit int32 (asserted; DistPtap asserts the same for rows).
tessera::cuda::DeviceCsr<double> transposed_extended_block(const tessera::cuda::DeviceCsr<double>& local,
                                                           const tessera::cuda::DeviceCsr<double>& nonlocal,
                                                           cudaStream_t stream);

}  // namespace tessera::dist::gpu
