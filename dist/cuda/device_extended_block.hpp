#pragma once
// dist::extended_block on the device: A's owned rows over [owned | ghost] columns (ghost g as
// column local.cols + g), assembled from a DeviceDistMatrix's two blocks. Each row is its
// local-block entries, then its non-local ones shifted past the owned columns: the host
// function's arrays exactly (its reference, in the tests). This is the left operand of the
// distributed products' rank-local SpGEMM (dist/compact_spgemm.hpp), so that a rank whose A is
// already on its GPU (an AMG level's copy) neither copies A on the host nor uploads it.
// Built only with CUDA.
#include <cuda_runtime_api.h>

#include "dist/cuda/device_dist_matrix.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::dist::gpu {

/// Writes every row offset, column and value of `ext` on `stream`, reallocating its arrays there
/// when their sizes differ from `a`'s (the caller synchronises before reading it from another
/// stream).
void fill_extended_block(const DeviceDistMatrix& a, tessera::cuda::DeviceCsr<double>& ext, cudaStream_t stream);

/// The same into a new device CSR.
tessera::cuda::DeviceCsr<double> extended_block(const DeviceDistMatrix& a, cudaStream_t stream);

/// extended_block(a)'s pattern with each value the index of its source in a's [local | non-local]
/// values (the tags of value_maps.hpp): the value map of an operand made from a's device copy.
tessera::cuda::DeviceCsr<double> tagged_extended_block(const DeviceDistMatrix& a, cudaStream_t stream);

}  // namespace tessera::dist::gpu
