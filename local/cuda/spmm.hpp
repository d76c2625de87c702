#pragma once
// Y = alpha*A*X + beta*Y on one GPU: X is A.cols x k, Y is A.rows x k, both dense in the same
// layout (row-major: leading dimension k; column-major: leading dimension = row count),
// k = 1..128 (k == 1 runs the SpMV kernels). beta == 0 never reads Y.
//   row-major, balanced: a group of G lanes per row (G = k rounded up to a power of two, at
//     most 32) splits the columns, each lane accumulating R = ceil(k/G) outputs in registers;
//     the group loads G nonzeros at once and broadcasts them with shuffles. Even k moves
//     pairs of columns per lane (16-byte loads in fp64) when X and Y are aligned to a pair.
//   column-major, balanced: one thread per row accumulating R (up to 16) columns in registers,
//     k/R passes over the row's nonzeros (the block's slice of A stays in L1 between passes);
//     consecutive threads read consecutive entries of each column of X and Y. Rows longer than
//     12 on average use a group of 8 or 16 lanes per row instead (coalesced loads of A, R <= 8
//     columns per pass, shuffle reductions).
//   nnz_split (skewed rows, cv > 1, or too few rows to fill the SMs): a warp per equal chunk of
//     nonzeros, lanes over the columns, walking its rows in order and adding each finished
//     row piece with atomics into Y scaled by beta beforehand.
#include <cuda_runtime_api.h>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"
#include "local/formats/dense.hpp"

namespace tessera::cuda {

enum class SpmmAlgorithm { automatic, balanced, nnz_split };
const char* to_string(SpmmAlgorithm a);

struct SpmmPlan {
  RowStats stats;
  const std::int64_t* row_ptr = nullptr;  // the pattern it was made from (compared, never read)
  std::int64_t k = 0;
  SpmmAlgorithm algorithm = SpmmAlgorithm::balanced;
  NnzChunks chunks;  // nnz_split only
};

/// Largest supported k.
inline constexpr std::int64_t kMaxSpmmColumns = 128;

/// Analyses A once for products with k columns (InputError unless 1 <= k <= 128).
template <class T>
SpmmPlan make_spmm_plan(const DeviceCsr<T>& a, std::int64_t k, SpmmAlgorithm algorithm = SpmmAlgorithm::automatic,
                        cudaStream_t stream = nullptr);

template <class T>
void spmm(const SpmmPlan& plan, T alpha, const DeviceCsr<T>& a, const T* x, T beta, T* y, Layout layout,
          cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
