#include "amg/cuda/dense_inverse.hpp"

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;  // warps (rows) a block in the warp-a-row kernels
constexpr int kResidualThreads = 256;

/// Lower triangle of the column-major `lower` into `rows` row-major: rows[k n + i] = L(k, i)
/// for i <= k. Through a 32 x 32 tile in shared memory, so reads and writes both coalesce.
__global__ void lower_to_row_major(std::int64_t n, const double* lower, double* rows) {
  __shared__ double tile[kWarp][kWarp + 1];
  const std::int64_t col0 = std::int64_t(blockIdx.x) * kWarp, row0 = std::int64_t(blockIdx.y) * kWarp;
  if (col0 > row0 + kWarp - 1) return;  // the tile lies above the diagonal (whole block alike)
  for (int r = threadIdx.y; r < kWarp; r += blockDim.y) {
    const std::int64_t row = row0 + threadIdx.x, col = col0 + r;  // reads down column col
    if (row < n && col < n) tile[r][threadIdx.x] = lower[col * n + row];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kWarp; r += blockDim.y) {
    const std::int64_t row = row0 + r, col = col0 + threadIdx.x;  // writes along row `row`
    if (row < n && col <= row) rows[row * n + col] = tile[threadIdx.x][r];
  }
}

// The blocked inverse (inverse_column_blocks): a block of kInverseThreads finds Shape::kColumns
// columns of X, panel by panel of kPanelRows rows, each panel's product with the rows found
// before it taken Shape::kDepth terms of the sum at a time through shared memory.
constexpr int kPanelRows = 32;
constexpr int kInverseThreads = 256;
constexpr int kInverseWarps = kInverseThreads / kWarp;
static_assert(kPanelRows == kWarp, "the panel solve runs a lane a row");

template <int kDepthT, int kColumnsT>
struct InverseShape {
  static constexpr int kDepth = kDepthT, kColumns = kColumnsT;
  // multiply_tile: a lane takes two adjacent columns and every kRowStride-th row of the panel.
  static constexpr int kPairs = kColumns / 2, kRowStride = kWarp / kPairs, kRowsPerThread = kPanelRows / kRowStride;
  static constexpr int kTermsPerWarp = kDepth / kInverseWarps;
  static constexpr int kFactorLoads = kPanelRows * kDepth / kInverseThreads;
  static constexpr int kFoundLoads = kDepth * kColumns / kInverseThreads;
  static_assert(kColumns % 2 == 0 && kWarp % kPairs == 0 && kColumns <= kInverseWarps,
                "column pairs fill a warp; the panel solve runs a warp a column");
  static_assert(kTermsPerWarp % 2 == 0 && kTermsPerWarp * kInverseWarps == kDepth, "two terms a step, every warp");
  static_assert(kFactorLoads * kInverseThreads == kPanelRows * kDepth &&
                    kFoundLoads * kInverseThreads == kDepth * kColumns && kPanelRows * kColumns <= kInverseThreads,
                "a tile's loads split evenly over the threads, and a panel's entries take a thread each");
};

/// The shape inverse_from_cholesky launches: 128 terms a tile, 4 columns a block (254 registers a
/// thread, one block an SM). On an H100 (CUDA events, against the kernel before: a block a
/// column), at 550 / 594 / 1429 / 2048 rows: 0.157 / 0.175 / 0.796 / 2.018 ms against 0.463 /
/// 0.524 / 2.004 / 4.077. Measured beside it: 64 terms and 4 columns 0.160 / 0.176 / 0.840 /
/// 2.247 ms; 64 and 8 columns 0.196 / 0.214 / 0.959 / 1.806 (half the blocks: fewer waves at
/// 2048 rows, longer chains below); 128 and 2 columns 0.150 / 0.165 / 1.442 / 3.800. Two blocks
/// an SM (128 registers; the 128-term shapes then spill) made every shape slower at 550-594 rows
/// and none faster than this one at 1429; at 2048 rows 64 terms and 4 columns then took 1.827 ms.
/// The recorded problems' coarsest levels have 550-1429 rows (AmgOptions::coarse_size is 2000).
/// docs/performance.md, eighty-fourth session.
using InverseLaunchShape = InverseShape<128, 4>;

/// What a block keeps in shared memory (54 KiB for 128 terms and 4 columns).
template <class Shape>
struct InverseShared {
  // A tile of L (forward) or L^T (backward). +2: rows 16-byte aligned for the two-term loads,
  // and the rows a warp reads at once in distinct banks (eight; sixteen in two wavefronts).
  double factor[kPanelRows][Shape::kDepth + 2];
  double found[Shape::kDepth][Shape::kColumns];  // the rows of Y or X the tile multiplies
  double partial[kInverseWarps][kPanelRows][Shape::kColumns];  // each warp's sums over its terms
  double diagonal[kPanelRows][kPanelRows + 1];                  // L's diagonal block of the panel
  double inverse_pivot[kPanelRows];                             // 1 / its diagonal entries
  double panel[kPanelRows][Shape::kColumns];                    // the panel's right-hand sides
};

/// L's diagonal block at rows and columns r0.. of the panel (pr rows), thread t's share of it
/// (from the row-major lower triangle) in registers: fetched before the panel's sums, so that its
/// loads wait behind them, and stored after (store_diagonal_block). The rows past n get a unit
/// diagonal and zeros, so that the panel solves need no bounds.
constexpr int kDiagonalLoads = kPanelRows * kPanelRows / kInverseThreads;
__device__ void fetch_diagonal_block(double (&d)[kDiagonalLoads], int n, int r0, int pr,
                                     const double* __restrict__ rows) {
#pragma unroll
  for (int j = 0; j < kDiagonalLoads; ++j) {
    const int e = threadIdx.x + j * kInverseThreads, r = e / kPanelRows, k = e % kPanelRows;
    d[j] = r < pr && k <= r ? __ldg(rows + std::int64_t(r0 + r) * n + r0 + k) : r >= pr && k == r ? 1.0 : 0.0;
  }
}

/// The block's fetched diagonal into shared memory, with the reciprocals of its pivots (the panel
/// solves multiply by them, rather than divide in their chain of steps).
template <class Shared>
__device__ void store_diagonal_block(Shared& sh, const double (&d)[kDiagonalLoads]) {
#pragma unroll
  for (int j = 0; j < kDiagonalLoads; ++j) {
    const int e = threadIdx.x + j * kInverseThreads, r = e / kPanelRows, k = e % kPanelRows;
    sh.diagonal[r][k] = d[j];
    if (k == r) sh.inverse_pivot[r] = 1.0 / d[j];
  }
}

/// One tile of the panel's sum: the thread's accumulators (rows lane / kPairs + i kRowStride,
/// columns (lane % kPairs) * 2 + 0..1) take the products over the warp's share of the tile's
/// terms, two terms a step (16-byte loads).
template <class Shape>
__device__ __forceinline__ void multiply_tile(const InverseShared<Shape>& sh,
                                              double (&acc)[Shape::kRowsPerThread][2]) {
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int r = lane / Shape::kPairs, c = (lane % Shape::kPairs) * 2;
#pragma unroll
  for (int t = 0; t < Shape::kTermsPerWarp; t += 2) {
    const int k = warp * Shape::kTermsPerWarp + t;
    const double2 y0 = *reinterpret_cast<const double2*>(&sh.found[k][c]);
    const double2 y1 = *reinterpret_cast<const double2*>(&sh.found[k + 1][c]);
#pragma unroll
    for (int i = 0; i < Shape::kRowsPerThread; ++i) {
      const double2 l = *reinterpret_cast<const double2*>(&sh.factor[r + i * Shape::kRowStride][k]);
      acc[i][0] += l.x * y0.x;
      acc[i][1] += l.x * y0.y;
      acc[i][0] += l.y * y1.x;
      acc[i][1] += l.y * y1.y;
    }
  }
}

/// The panel's right-hand sides: `start` (thread t's entry, row t / kColumns and column t %
/// kColumns, for t < 32 kColumns) minus the warps' sums, added in warp order (the same X every
/// run), into sh.panel.
template <class Shape>
__device__ void finish_panel_sums(InverseShared<Shape>& sh, double start,
                                  const double (&acc)[Shape::kRowsPerThread][2]) {
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int r = lane / Shape::kPairs, c = (lane % Shape::kPairs) * 2;
#pragma unroll
  for (int i = 0; i < Shape::kRowsPerThread; ++i) {
    sh.partial[warp][r + i * Shape::kRowStride][c] = acc[i][0];
    sh.partial[warp][r + i * Shape::kRowStride][c + 1] = acc[i][1];
  }
  __syncthreads();
  if (threadIdx.x < kPanelRows * Shape::kColumns) {
    const int pr = threadIdx.x / Shape::kColumns, pc = threadIdx.x % Shape::kColumns;
    double sum = 0.0;
    for (int w = 0; w < kInverseWarps; ++w) sum += sh.partial[w][pr][pc];
    sh.panel[pr][pc] = start - sum;
  }
  __syncthreads();
}

/// acc += the products of the panel's rows r0..r0+pr-1 with X's rows [m_begin, m_end) of the
/// block's columns c0..c0+width-1 (Y's, forward; X's, backward): the factor's entries from
/// `factor` at factor[(r0 + r) n + m] (L's rows from the row-major copy, forward; L's columns from
/// the column-major factor, backward), a tile of kDepth terms at a time. Each thread loads its
/// share of the next tile into registers while the warps multiply the current one, so one L2
/// round trip is in flight behind each tile's products instead of one per load.
template <class Shape>
__device__ void panel_sum(InverseShared<Shape>& sh, int n, const double* __restrict__ factor, const double* x,
                          int c0, int width, int r0, int pr, int m_begin, int m_end,
                          double (&acc)[Shape::kRowsPerThread][2]) {
  constexpr int kDepth = Shape::kDepth, kColumns = Shape::kColumns;
  double f[Shape::kFactorLoads], y[Shape::kFoundLoads];
  auto fetch = [&](int m0) {
    const int depth = min(kDepth, m_end - m0);
#pragma unroll
    for (int j = 0; j < Shape::kFactorLoads; ++j) {
      const int e = threadIdx.x + j * kInverseThreads, r = e / kDepth, k = e % kDepth;
      f[j] = r < pr && k < depth ? __ldg(factor + std::int64_t(r0 + r) * n + m0 + k) : 0.0;
    }
#pragma unroll
    for (int j = 0; j < Shape::kFoundLoads; ++j) {
      const int e = threadIdx.x + j * kInverseThreads, k = e / kColumns, c = e % kColumns;
      y[j] = k < depth && c < width ? x[std::int64_t(m0 + k) * n + c0 + c] : 0.0;
    }
  };
  if (m_begin < m_end) fetch(m_begin);
  for (int m0 = m_begin; m0 < m_end; m0 += kDepth) {
#pragma unroll
    for (int j = 0; j < Shape::kFactorLoads; ++j) {
      const int e = threadIdx.x + j * kInverseThreads;
      sh.factor[e / kDepth][e % kDepth] = f[j];
    }
#pragma unroll
    for (int j = 0; j < Shape::kFoundLoads; ++j) {
      const int e = threadIdx.x + j * kInverseThreads;
      sh.found[e / kColumns][e % kColumns] = y[j];
    }
    __syncthreads();
    if (m0 + kDepth < m_end) fetch(m0 + kDepth);
    multiply_tile(sh, acc);
    __syncthreads();  // the tile is read before the next one is stored
  }
}

/// Block b: columns c0 = b kColumns .. of X, rows c0..n-1 (the rows above are the mirror of
/// earlier blocks' entries: A^-1 is symmetric). Y = L^-1 E (E those columns of I) panel by panel
/// down from row c0, then X = L^-T Y panel by panel up to row c0, each panel the sum of its
/// products with the rows found before it (a tiled product through shared memory, split over
/// the warps by term) and then a triangular solve on its diagonal block (a warp a column, a
/// lane a row, 32 steps). Y and X are kept in X's own rows c0..n-1 of these columns, which no
/// other block writes; once X is final, the block writes its mirror into rows c0.. of its
/// columns, so X is exactly symmetric (the entries above the diagonal block's diagonal are the
/// ones below it).
///
/// Why blocked: a block a column (the kernel before) read L whole from L2 for each column, n^3
/// reads in all, each step of its two solves a barrier; kColumns columns a block read L once for
/// kColumns, and each panel's products run in shared memory, a tile's loads in flight behind the
/// last tile's products, with a barrier a tile. What is left is the first blocks' chain of panels
/// (their rows reach the whole matrix) and each panel's 32-step solve; InverseLaunchShape says how
/// the shape was chosen.
template <class Shape>
__global__ void __launch_bounds__(kInverseThreads) inverse_column_blocks(int n, const double* __restrict__ lower,
                                                                          const double* __restrict__ rows,
                                                                          double* __restrict__ x) {
  constexpr int kColumns = Shape::kColumns;
  extern __shared__ double2 shared_words[];  // double2: 16-byte aligned, for the two-term loads
  InverseShared<Shape>& sh = *reinterpret_cast<InverseShared<Shape>*>(shared_words);
  const int c0 = blockIdx.x * kColumns, width = min(kColumns, n - c0);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int er = threadIdx.x / kColumns, ec = threadIdx.x % kColumns;  // the thread's panel entry
  const int panels = (n - c0 + kPanelRows - 1) / kPanelRows;
  auto at = [&](int row, int col) -> double& { return x[std::int64_t(row) * n + c0 + col]; };

  // Forward: panel p (rows r0 = c0 + 32p ..) of Y = L^-1 E: E's rows minus L(r0.., c0..r0-1) Y.
  for (int p = 0; p < panels; ++p) {
    const int r0 = c0 + p * kPanelRows, pr = min(kPanelRows, n - r0);
    double acc[Shape::kRowsPerThread][2] = {}, d[kDiagonalLoads];
    fetch_diagonal_block(d, n, r0, pr, rows);
    panel_sum(sh, n, rows, x, c0, width, r0, pr, c0, r0, acc);
    store_diagonal_block(sh, d);
    finish_panel_sums(sh, er < pr && r0 + er == c0 + ec ? 1.0 : 0.0, acc);
    if (warp < width) {  // L_pp y = s, top down: lane i's entry is final at step i
      double s = sh.panel[lane][warp];
#pragma unroll
      for (int i = 0; i < kPanelRows; ++i) {
        if (lane == i) s *= sh.inverse_pivot[i];
        const double yi = __shfl_sync(0xffffffffu, s, i);
        if (lane > i) s -= sh.diagonal[lane][i] * yi;
      }
      if (lane < pr) at(r0 + lane, warp) = s;
    }
    __syncthreads();  // the panel's Y is read by the next panels' tiles
  }

  // Backward: panel p of X = L^-T Y, bottom up: Y's rows minus L(r0+32.., r0..)^T X.
  for (int p = panels - 1; p >= 0; --p) {
    const int r0 = c0 + p * kPanelRows, pr = min(kPanelRows, n - r0);
    double acc[Shape::kRowsPerThread][2] = {}, d[kDiagonalLoads];
    fetch_diagonal_block(d, n, r0, pr, rows);
    const double y = er < pr && ec < width ? at(r0 + er, ec) : 0.0;
    panel_sum(sh, n, lower, x, c0, width, r0, pr, r0 + kPanelRows, n, acc);
    store_diagonal_block(sh, d);
    finish_panel_sums(sh, y, acc);
    if (warp < width) {  // L_pp^T x = s, bottom up: lane i's entry is final at step i
      double s = sh.panel[lane][warp];
#pragma unroll
      for (int i = kPanelRows - 1; i >= 0; --i) {
        if (lane == i) s *= sh.inverse_pivot[i];
        const double xi = __shfl_sync(0xffffffffu, s, i);
        if (lane < i) s -= sh.diagonal[i][lane] * xi;
      }
      if (lane < pr) at(r0 + lane, warp) = s;
    }
    __syncthreads();
  }

  // The mirror: X(c0 + c, i) = X(i, c0 + c) for i > c0 + c (reads below the diagonal, writes above).
  for (int i = c0 + threadIdx.x; i < n; i += kInverseThreads)
    for (int c = 0; c < width && c0 + c < i; ++c) x[std::int64_t(c0 + c) * n + i] = at(i, c);
}

__device__ double warp_sum(double v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;  // complete in lane 0
}

/// Block i: row i of |A X - I| summed, its threads over X's columns (a coalesced row of X for
/// each entry of A's row), then the warps' sums in warp order: the same sum every run.
__global__ void residual_row_sums(std::int64_t n, const std::int64_t* row_ptr, const std::int32_t* col_idx,
                                  const double* values, const double* x, double* row_sums) {
  __shared__ double warp_sums[kResidualThreads / kWarp];
  const std::int64_t i = blockIdx.x;
  double sum = 0;
  for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    double e = i == j ? -1.0 : 0.0;
    for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) e += values[p] * x[col_idx[p] * n + j];
    sum += fabs(e);
  }
  sum = warp_sum(sum);
  if (threadIdx.x % kWarp == 0) warp_sums[threadIdx.x / kWarp] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (int w = 0; w < kResidualThreads / kWarp; ++w) total += warp_sums[w];
    row_sums[i] = total;
  }
}

__global__ void row_major_gemv(std::int64_t n, const double* x, const double* b, double* y) {
  const std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (i >= n) return;
  const double* row = x + i * n;
  // Four independent sums (added in a fixed order at the end): four loads in flight a lane.
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t j = lane;
  for (; j + 3 * kWarp < n; j += 4 * kWarp) {
    s0 += row[j] * b[j];
    s1 += row[j + kWarp] * b[j + kWarp];
    s2 += row[j + 2 * kWarp] * b[j + 2 * kWarp];
    s3 += row[j + 3 * kWarp] * b[j + 3 * kWarp];
  }
  for (; j < n; j += kWarp) s0 += row[j] * b[j];
  double sum = (s0 + s1) + (s2 + s3);
  sum = warp_sum(sum);
  if (lane == 0) y[i] = sum;
}

template <class Shape>
void launch_inverse_column_blocks(int n, const double* lower, const double* rows, double* x, cudaStream_t stream) {
  constexpr std::size_t bytes = sizeof(InverseShared<Shape>);
  if (bytes > 48 * 1024)  // above the default limit of a block's dynamic shared memory
    TESSERA_CUDA_CHECK(
        cudaFuncSetAttribute(inverse_column_blocks<Shape>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  inverse_column_blocks<Shape><<<unsigned((n + Shape::kColumns - 1) / Shape::kColumns), kInverseThreads, bytes,
                                  stream>>>(n, lower, rows, x);
}

unsigned warp_row_blocks(std::int64_t n) { return unsigned((n + kRowsPerBlock - 1) / kRowsPerBlock); }

}  // namespace

void inverse_from_cholesky(std::int64_t n, const double* factor, double* scratch, double* x, cudaStream_t stream) {
  TESSERA_ASSERT(n >= 0 && n <= kOwnInverseMaxRows, "inverse_from_cholesky: ", n, " rows, at most ",
                 kOwnInverseMaxRows);
  if (n == 0) return;
  const unsigned tiles = unsigned((n + kWarp - 1) / kWarp);
  lower_to_row_major<<<dim3(tiles, tiles), dim3(kWarp, 8), 0, stream>>>(n, factor, scratch);
  TESSERA_CHECK_LAUNCH();
  launch_inverse_column_blocks<InverseLaunchShape>(int(n), factor, scratch, x, stream);
  TESSERA_CHECK_LAUNCH();
}

void inverse_residual_row_sums(const tessera::cuda::DeviceCsr<double>& a, const double* x, double* row_sums,
                               cudaStream_t stream) {
  TESSERA_ASSERT(a.rows == a.cols, "inverse_residual_row_sums: A is ", a.rows, "x", a.cols);
  if (a.rows == 0) return;
  residual_row_sums<<<unsigned(a.rows), kResidualThreads, 0, stream>>>(
      a.rows, a.row_ptr.data(), a.col_idx.data(), a.values.data(), x, row_sums);
  TESSERA_CHECK_LAUNCH();
}

void dense_multiply(std::int64_t n, const double* x, const double* b, double* y, cudaStream_t stream) {
  if (n == 0) return;
  row_major_gemv<<<warp_row_blocks(n), kRowsPerBlock * kWarp, 0, stream>>>(n, x, b, y);
  TESSERA_CHECK_LAUNCH();
}

}  // namespace tessera::amg::gpu
