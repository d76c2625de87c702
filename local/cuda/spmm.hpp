#pragma once
// Y = alpha*A*X + beta*Y on one GPU: X is A.cols x k, Y is A.rows x k, both dense in the same
// layout (row-major: leading dimension k; column-major: leading dimension = row count),
// k = 1..128 (k == 1 runs the SpMV kernels unless tiles are asked for). beta == 0 never reads Y.
//   tiles (FP64, rows of well-filled 8x8 tiles: elasticity): the tensor-core tile SpMM of
//     tile_spmm.hpp, both layouts read in place; the plan keeps A's tile pattern (12 bytes a
//     tile), never a second copy of its values.
//   row-major, balanced: a group of G lanes per row (G = k rounded up to a power of two, at
//     most 32) splits the columns, each lane accumulating R = ceil(k/G) outputs in registers;
//     the group loads G nonzeros at once and broadcasts them with shuffles. Even k moves
//     pairs of columns per lane (16-byte loads in fp64) when X and Y are aligned to a pair.
//   column-major, balanced, short rows (mean <= 12): one thread per row accumulating R (up to
//     16) columns in registers, k/R passes over the row's nonzeros (the block's slice of A
//     stays in L1 between passes); consecutive threads read consecutive entries of each column
//     of X and Y.
//   column-major otherwise: X is first copied to a row-major scratch (col_to_row_major, from
//     the stream-ordered pool: cols*k values, 2|X| bytes of traffic), then the row-major
//     kernels run and write Y column-major. Reading a column-major X along a row (lanes over
//     columns) touches a sector per column: rmat k=32 took 11.5 ms in place against cuSPARSE's
//     6.0 ms. ColMajorX::in_place keeps the old group kernel (8/16 lanes per row) for the sweep.
//   nnz_split (skewed rows, cv > 1, or too few rows to fill the SMs): a group of G lanes (as
//     in row-major) per equal chunk of nonzeros, walking its rows in order and adding each row
//     that ends in the chunk into Y scaled by beta beforehand; the pieces of a row that crosses
//     chunk boundaries are summed by a fix-up pass in a fixed order (bitwise repeatable, as
//     every path here). The plan holds k partial sums per chunk for it.
#include <cuda_runtime_api.h>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"
#include "local/cuda/tile_spmm.hpp"
#include "local/formats/dense.hpp"

namespace tessera::cuda {

enum class SpmmAlgorithm { automatic, balanced, nnz_split, tiles };
const char* to_string(SpmmAlgorithm a);

/// How a column-major X reaches the CSR kernels (see above); automatic stages it whenever the
/// one-thread-per-row kernel does not apply. The tile SpMM always reads X in place.
enum class ColMajorX { automatic, in_place, staged_row_major };
const char* to_string(ColMajorX c);

/// Automatic tile choice (FP64, k >= kTileSpmmMinColumns, mean row >= kTileSpmmMinMeanRow,
/// then tile fill >= kTileSpmmMinFill): see docs/performance.md for the measurements.
inline constexpr std::int64_t kTileSpmmMinColumns = 4;
inline constexpr double kTileSpmmMinMeanRow = 16;
inline constexpr double kTileSpmmMinFill = 12;

struct SpmmPlan {
  RowStats stats;
  const std::int64_t* row_ptr = nullptr;  // the pattern it was made from (compared, never read)
  std::int64_t k = 0;
  SpmmAlgorithm algorithm = SpmmAlgorithm::balanced;
  NnzChunks chunks;  // nnz_split only
  CsrTilePattern tiles;  // tiles only
  ColMajorX col_major_x = ColMajorX::automatic;  // may be set after make_spmm_plan (sweeps)
};

/// Largest supported k.
inline constexpr std::int64_t kMaxSpmmColumns = 128;

/// Analyses A once for products with k columns (InputError unless 1 <= k <= 128; tiles
/// asked for in FP32 is an InputError too).
template <class T>
SpmmPlan make_spmm_plan(const DeviceCsr<T>& a, std::int64_t k, SpmmAlgorithm algorithm = SpmmAlgorithm::automatic,
                        cudaStream_t stream = nullptr);

template <class T>
void spmm(const SpmmPlan& plan, T alpha, const DeviceCsr<T>& a, const T* x, T beta, T* y, Layout layout,
          cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
