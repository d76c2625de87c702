#include "amg/cuda/dense_inverse.hpp"

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;  // warps (rows) a block in the warp-a-row kernels
constexpr int kSolveThreads = 256;
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

/// v[i] -= src[i] * f for i in [begin, end), the block's threads over i: each thread loads four
/// entries of `src` (through the read-only cache) before it updates any, so four loads are in
/// flight, where a plain loop waits on each load in turn.
__device__ __forceinline__ void subtract_scaled(double* __restrict__ v, const double* __restrict__ src, int begin,
                                                int end, double f) {
  const int stride = blockDim.x;
  int i = begin + threadIdx.x;
  for (; i + 3 * stride < end; i += 4 * stride) {
    const double l0 = __ldg(src + i), l1 = __ldg(src + i + stride), l2 = __ldg(src + i + 2 * stride),
                 l3 = __ldg(src + i + 3 * stride);
    v[i] -= l0 * f;
    v[i + stride] -= l1 * f;
    v[i + 2 * stride] -= l2 * f;
    v[i + 3 * stride] -= l3 * f;
  }
  for (; i < end; i += stride) v[i] -= __ldg(src + i) * f;
}

/// Block j: entries j..n-1 of x = A^-1 e_j, by L w = e_j (column k of `lower` in step k, from
/// row j on, since w's first j entries are zero) and L^T x = w from the bottom up to row j (row
/// k of L, from `rows`). x's first j entries are entry j of the earlier blocks' columns (A^-1 is
/// symmetric), so block j writes its entries to row j and to column j of X, and X is exactly
/// symmetric.
///
/// One vector in shared memory: e_j, then w in the forward solve, then x in the backward one,
/// entry k final at step k. A step reads the entry every thread needs, updates the others,
/// synchronises, and only then does thread 0 store entry k's new value (every thread has read
/// the old one). The time goes into each step's chain (the pivot, the loads, the updates, the
/// barrier), not into L2 traffic: an SM's blocks read the same column at about the same time,
/// from L1. Hence 256 threads a block, the loads four at a time (subtract_scaled), and each
/// pivot's reciprocal taken a step ahead, so a step multiplies where it divided. On an H100 at
/// 550 / 1429 / 2048 rows: 0.47 / 2.07 / 4.09 ms, against 0.65 / 3.51 / 8.07 for the first
/// version (128 threads, plain loops, dividing). Measured and dropped: two columns a block,
/// sharing each load (0.50 / 2.26 / 4.56 ms where one took 0.46 / 2.00 / 4.06 in the same run);
/// each thread's entries in registers (1.08 ms at 550). docs/performance.md, the seventy-seventh
/// and seventy-eighth sessions.
__global__ void inverse_columns(int n, const double* __restrict__ lower, const double* __restrict__ rows,
                                double* __restrict__ x_out) {
  extern __shared__ double v[];
  const int j = blockIdx.x;
  for (int i = j + threadIdx.x; i < n; i += blockDim.x) v[i] = i == j ? 1.0 : 0.0;
  __syncthreads();
  double inverse_pivot = 1.0 / __ldg(lower + std::int64_t(j) * n + j);
  for (int k = j; k < n; ++k) {
    const double* column = lower + std::int64_t(k) * n;
    const double next_pivot = k + 1 < n ? __ldg(column + n + k + 1) : 1.0;  // loaded early
    const double wk = v[k] * inverse_pivot;  // final: no later step writes it
    subtract_scaled(v, column, k + 1, n, wk);
    inverse_pivot = 1.0 / next_pivot;
    __syncthreads();
    if (threadIdx.x == 0) v[k] = wk;
  }
  __syncthreads();
  inverse_pivot = 1.0 / __ldg(rows + std::int64_t(n - 1) * n + n - 1);
  for (int k = n - 1; k >= j; --k) {
    const double* row = rows + std::int64_t(k) * n;
    const double next_pivot = k > j ? __ldg(row - n + k - 1) : 1.0;
    const double xk = v[k] * inverse_pivot;
    subtract_scaled(v, row, j, k, xk);
    inverse_pivot = 1.0 / next_pivot;
    __syncthreads();
    if (threadIdx.x == 0) v[k] = xk;
  }
  __syncthreads();
  for (int i = j + threadIdx.x; i < n; i += blockDim.x) {
    x_out[std::int64_t(j) * n + i] = v[i];
    x_out[std::int64_t(i) * n + j] = v[i];
  }
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

unsigned warp_row_blocks(std::int64_t n) { return unsigned((n + kRowsPerBlock - 1) / kRowsPerBlock); }

}  // namespace

void inverse_from_cholesky(std::int64_t n, const double* factor, double* scratch, double* x, cudaStream_t stream) {
  TESSERA_ASSERT(n >= 0 && n <= kOwnInverseMaxRows, "inverse_from_cholesky: ", n, " rows, at most ",
                 kOwnInverseMaxRows);
  if (n == 0) return;
  const unsigned tiles = unsigned((n + kWarp - 1) / kWarp);
  lower_to_row_major<<<dim3(tiles, tiles), dim3(kWarp, 8), 0, stream>>>(n, factor, scratch);
  TESSERA_CHECK_LAUNCH();
  inverse_columns<<<unsigned(n), kSolveThreads, std::size_t(n) * sizeof(double), stream>>>(int(n), factor, scratch,
                                                                                           x);
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
