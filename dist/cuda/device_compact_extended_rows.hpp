#pragma once
// dist::compact_extended_rows on the device: B_ext, the right operand of a distributed
// product's rank-local SpGEMM (dist/compact_spgemm.hpp), from B's two blocks already on the
// GPU (where the smoothing's merge made P) and the received rows uploaded: B's owned rows, then
// the received ones, every column renumbered into the product's compact columns. The host
// function's arrays exactly (its reference, in the tests). Built only with CUDA.
#include <cuda_runtime_api.h>

#include "dist/extended_operand.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::dist::gpu {

/// B_ext as `source` says, B's owned rows read from `local` and `nonlocal` (B's blocks, with
/// `source.b`'s patterns; only its partitions, ghosts and counts are read on the host), on
/// `stream` (synchronised before it returns).
tessera::cuda::DeviceCsr<double> compact_extended_rows(const tessera::cuda::DeviceCsr<double>& local,
                                                       const tessera::cuda::DeviceCsr<double>& nonlocal,
                                                       const ExtendedBSource& source, cudaStream_t stream);

}  // namespace tessera::dist::gpu
