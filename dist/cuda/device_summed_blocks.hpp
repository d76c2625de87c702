#pragma once
// The Galerkin product's C on the device from its outer product T left there (DistPtap's
// KeptOuterProduct, dist/ptap.hpp): C's rows that receive nothing are T's rows as they are, split
// at the owned column range (dist/summed_rows.hpp), so the GPU copies them from T; only the rows
// that receive (the surface between ranks) and both blocks' offsets come from the host C. The
// host C's two blocks exactly (the tests compare them). Why: the coarse level's device copy was
// C uploaded whole, 12 bytes an entry (21M entries a rank at poisson3d:192's level 1). Built only
// with CUDA.
#include <cuda_runtime_api.h>

#include <utility>

#include "dist/dist_matrix.hpp"
#include "dist/ptap.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::dist::gpu {

/// C's local and non-local blocks, equal to `c`'s, from `t` (T on the device: at least c's owned
/// rows, over the columns `kept.global_of` numbers) and, for the rows `kept.merged_rows`, `c`'s
/// own entries; on `stream` (synchronised before it returns).
std::pair<tessera::cuda::DeviceCsr<double>, tessera::cuda::DeviceCsr<double>> summed_blocks(
    const tessera::cuda::DeviceCsr<double>& t, const KeptOuterProduct& kept, const DistMatrix& c, cudaStream_t stream);

}  // namespace tessera::dist::gpu
