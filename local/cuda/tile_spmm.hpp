#pragma once
// Tile SpMM on the FP64 tensor cores: Y = alpha*A*X + beta*Y, A in CSR, walked through its
// 8x8 tile pattern (the bitmap tiles of tile_matrix.hpp without their values: A's CSR values
// are read in place, so the pattern is all a plan keeps and A's values may change between
// calls, as with every other SpMM/SpMV plan).
//
// Why tiles for SpMM: the CSR kernels gather one row of X (k values) per nonzero, nnz*k loads
// through L1/L2; a tile gathers the 8 rows of X its columns touch once for its 8 rows of A, so
// a tile holding f values cuts that traffic by f/8 (elasticity: about 3x) and drops A's column
// indices (12 bytes a tile instead of 4 a nonzero). The product of one tile with a 16-column
// slab of X is one m16n8k8 MMA, with the roles transposed so that X supplies the 16-row operand:
//   Y(I, n0:n0+16)^T (16x8) += X(K, n0:n0+16)^T (16x8) * A(I,K)^T (8x8),
// so lane (g, t) (lane = 4g + t) holds A(g,t), A(g,t+4) (its tile row g's CSR entries), X rows
// 8K+t and 8K+t+4 at columns n0+g and n0+g+8, and the outputs Y(8I+2t, 8I+2t+1; n0+g, n0+g+8).
// One warp per tile-row keeps its 16-column slabs' accumulators (4 doubles a lane each; 1, 2, 4
// or 8 slabs compiled, k <= 128). Unset entries enter the MMA as zeros, so a slab of X holding
// Inf or NaN is summed from the stored entries only (a warp vote, then shuffles and FMAs):
// non-finite values reach exactly the rows the CSR product sends them to.
// FP64 only: FP32 has no tensor-core MMA of FP32 accuracy (TF32 rounds the inputs to 10 bits).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/tile_pattern.hpp"
#include "local/formats/dense.hpp"

namespace tessera::cuda {

/// Y = alpha*A*X + beta*Y with X (a.cols x k) and Y (a.rows x k) in `layout`, 1 <= k <= 128;
/// `pattern` from make_tile_pattern on a's pattern. beta == 0 never reads Y.
void tile_spmm(const CsrTilePattern& pattern, double alpha, const DeviceCsr<double>& a, const double* x, double beta,
               double* y, std::int64_t k, Layout layout, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
