#include <algorithm>
#include <cstdint>

#include <type_traits>

#include "local/core/error.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/dense_layout.hpp"
#include "local/cuda/spmm.hpp"
#include "local/cuda/spmv_kernels.cuh"

namespace tessera::cuda {
namespace {

using kernels::kBlock;
using kernels::kFullMask;

template <class T>
__device__ __forceinline__ T combine(T alpha, T acc, T beta, const T* y) {
  return beta == T(0) ? alpha * acc : alpha * acc + beta * *y;
}

// Row-major X: a group of G lanes per row, lane l owns columns l, l+G, ..., (R of them); Y in
// either layout (column-major when X was staged from a column-major input).
template <int G, int R, bool kRowMajorY, class T>
__global__ void __launch_bounds__(kBlock) spmm_row_major_kernel(std::int64_t rows, std::int64_t k,
                                                                const std::int64_t* __restrict__ row_ptr,
                                                                const std::int32_t* __restrict__ col,
                                                                const T* __restrict__ val, const T* __restrict__ x,
                                                                T alpha, T beta, T* __restrict__ y) {
  const std::int64_t thread = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t row = thread / G;
  const int lane = static_cast<int>(threadIdx.x % G);
  const unsigned group_mask = G == 32 ? kFullMask : ((1u << G) - 1u) << (threadIdx.x % 32 / G * G);
  if (row >= rows) return;  // whole groups leave together: the shuffles below use the group mask
  T acc[R] = {};
  const std::int64_t begin = __ldg(row_ptr + row), end = __ldg(row_ptr + row + 1);
  for (std::int64_t base = begin; base < end; base += G) {
    std::int32_t my_col = 0;
    T my_val = 0;
    if (base + lane < end) {
      my_col = kernels::load_stream(col + base + lane);
      my_val = kernels::load_stream(val + base + lane);
    }
    const int n = static_cast<int>(min(std::int64_t{G}, end - base));
    for (int s = 0; s < n; ++s) {
      const std::int32_t c = __shfl_sync(group_mask, my_col, s, G);
      const T v = __shfl_sync(group_mask, my_val, s, G);
      const T* xr = x + static_cast<std::int64_t>(c) * k + lane;
#pragma unroll
      for (int g = 0; g < R; ++g)
        if (lane + g * G < k) acc[g] += v * __ldg(xr + g * G);
    }
  }
#pragma unroll
  for (int g = 0; g < R; ++g)
    if (lane + g * G < k) {
      T* out = y + dense_index<kRowMajorY>(row, lane + g * G, rows, k);
      *out = combine(alpha, acc[g], beta, out);
    }
}

template <class T> struct Pair;
template <> struct Pair<double> { using type = double2; };
template <> struct Pair<float> { using type = float2; };

// Row-major X with even k: as above, but each lane owns pairs of adjacent columns and moves
// them with 16-byte (fp64) / 8-byte (fp32) loads; half the lanes per row, so twice the rows per
// warp and half the shuffles per nonzero.
template <int G, int R, bool kRowMajorY, class T>
__global__ void __launch_bounds__(kBlock) spmm_row_major_pairs_kernel(std::int64_t rows, std::int64_t k,
                                                                      const std::int64_t* __restrict__ row_ptr,
                                                                      const std::int32_t* __restrict__ col,
                                                                      const T* __restrict__ val,
                                                                      const T* __restrict__ x, T alpha, T beta,
                                                                      T* __restrict__ y) {
  using P = typename Pair<T>::type;
  const std::int64_t thread = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t row = thread / G;
  const int lane = static_cast<int>(threadIdx.x % G);
  const unsigned group_mask = G == 32 ? kFullMask : ((1u << G) - 1u) << (threadIdx.x % 32 / G * G);
  if (row >= rows) return;  // whole groups leave together
  const std::int64_t pairs = k / 2;
  T acc0[R] = {}, acc1[R] = {};
  const std::int64_t begin = __ldg(row_ptr + row), end = __ldg(row_ptr + row + 1);
  for (std::int64_t base = begin; base < end; base += G) {
    std::int32_t my_col = 0;
    T my_val = 0;
    if (base + lane < end) {
      my_col = kernels::load_stream(col + base + lane);
      my_val = kernels::load_stream(val + base + lane);
    }
    const int n = static_cast<int>(min(std::int64_t{G}, end - base));
    for (int s = 0; s < n; ++s) {
      const std::int32_t c = __shfl_sync(group_mask, my_col, s, G);
      const T v = __shfl_sync(group_mask, my_val, s, G);
      const P* xr = reinterpret_cast<const P*>(x + static_cast<std::int64_t>(c) * k) + lane;
#pragma unroll
      for (int g = 0; g < R; ++g)
        if (lane + g * G < pairs) {
          const P xv = __ldg(xr + g * G);
          acc0[g] += v * xv.x;
          acc1[g] += v * xv.y;
        }
    }
  }
#pragma unroll
  for (int g = 0; g < R; ++g)
    if (lane + g * G < pairs) {
      const std::int64_t j = 2 * (lane + g * G);
      if (kRowMajorY) {
        P* yr = reinterpret_cast<P*>(y + row * k + j);
        P out;
        if (beta == T(0)) {
          out.x = alpha * acc0[g];
          out.y = alpha * acc1[g];
        } else {
          const P old = *yr;
          out.x = alpha * acc0[g] + beta * old.x;
          out.y = alpha * acc1[g] + beta * old.y;
        }
        *yr = out;
      } else {
        T* y0 = y + dense_index<false>(row, j, rows, k);
        T* y1 = y + dense_index<false>(row, j + 1, rows, k);
        *y0 = combine(alpha, acc0[g], beta, y0);
        *y1 = combine(alpha, acc1[g], beta, y1);
      }
    }
}

// Column-major: one thread per row, R columns per pass over the row.
template <int R, class T>
__global__ void __launch_bounds__(kBlock) spmm_col_major_kernel(std::int64_t rows, std::int64_t cols, std::int64_t k,
                                                                const std::int64_t* __restrict__ row_ptr,
                                                                const std::int32_t* __restrict__ col,
                                                                const T* __restrict__ val, const T* __restrict__ x,
                                                                T alpha, T beta, T* __restrict__ y) {
  const std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (row >= rows) return;
  const std::int64_t begin = __ldg(row_ptr + row), end = __ldg(row_ptr + row + 1);
  for (std::int64_t j0 = 0; j0 < k; j0 += R) {
    T acc[R] = {};
    const T* xj = x + j0 * cols;
    for (std::int64_t e = begin; e < end; ++e) {
      const std::int32_t c = __ldg(col + e);
      const T v = __ldg(val + e);
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (j0 + r < k) acc[r] += v * __ldg(xj + r * cols + c);
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (j0 + r < k) {
        T* out = y + (j0 + r) * rows + row;
        *out = combine(alpha, acc[r], beta, out);
      }
  }
}

// Column-major, long rows: a group of TPR lanes per row splits the row's nonzeros (coalesced
// loads of A, as in SpMV), each lane accumulating R columns; R shuffle reductions per row.
template <int TPR, int R, class T>
__global__ void __launch_bounds__(kBlock) spmm_col_major_group_kernel(
    std::int64_t rows, std::int64_t cols, std::int64_t k, const std::int64_t* __restrict__ row_ptr,
    const std::int32_t* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x, T alpha, T beta,
    T* __restrict__ y) {
  const std::int64_t thread = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t row = thread / TPR;
  const int lane = static_cast<int>(threadIdx.x % TPR);
  const bool valid = row < rows;  // no early return: every lane takes part in the shuffles
  const std::int64_t begin = valid ? __ldg(row_ptr + row) : 0, end = valid ? __ldg(row_ptr + row + 1) : 0;
  for (std::int64_t j0 = 0; j0 < k; j0 += R) {
    T acc[R] = {};
    const T* xj = x + j0 * cols;
    for (std::int64_t e = begin + lane; e < end; e += TPR) {
      const std::int32_t c = __ldg(col + e);
      const T v = __ldg(val + e);
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (j0 + r < k) acc[r] += v * __ldg(xj + r * cols + c);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int offset = TPR / 2; offset > 0; offset /= 2) acc[r] += __shfl_xor_sync(kFullMask, acc[r], offset, TPR);
      if (valid && lane == r % TPR && j0 + r < k) {
        T* out = y + (j0 + r) * rows + row;
        *out = combine(alpha, acc[r], beta, out);
      }
    }
  }
}

// nnz split: a group of G lanes per chunk (G = k rounded up to a power of two, at most 32),
// lane l owns columns l, l+G, ...; rows are walked in order. As in the SpMV's nnz split (and
// bitwise repeatable for the same reason), a row that ends in the chunk gets its piece in one
// atomicAdd per entry onto Y (pre-scaled by beta), the piece of the row that goes on past the
// chunk's end waits in tails[chunk*k + j] for kernels::nnz_split_fixup_kernel. X and Y
// layouts are separate (X staged row-major from a column-major input).
template <int G, int R, bool kRowMajorX, bool kRowMajorY, class T>
__global__ void __launch_bounds__(kBlock) spmm_nnz_split_kernel(
    std::int64_t rows, std::int64_t cols, std::int64_t k, std::int64_t nnz, std::int64_t chunk_nnz, std::int64_t chunks,
    const std::int64_t* __restrict__ first_row, const std::int64_t* __restrict__ row_ptr,
    const std::int32_t* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x, T alpha, T* y,
    T* __restrict__ tails) {
  const std::int64_t chunk = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / G;
  if (chunk >= chunks) return;  // group-uniform
  const int lane = static_cast<int>(threadIdx.x % G);
  const unsigned group_mask = G == 32 ? kFullMask : ((1u << G) - 1u) << (threadIdx.x % 32 / G * G);
  const std::int64_t begin = chunk * chunk_nnz, end = min(begin + chunk_nnz, nnz);
  std::int64_t row = first_row[chunk], row_end = __ldg(row_ptr + row + 1);
  bool dirty = false;
  T acc[R] = {};
  auto flush = [&](bool goes_on) {
#pragma unroll
    for (int g = 0; g < R; ++g) {
      const std::int64_t j = lane + G * g;
      if (j < k) {
        if (goes_on) tails[chunk * k + j] = acc[g];
        else atomicAdd(y + dense_index<kRowMajorY>(row, j, rows, k), alpha * acc[g]);
      }
      acc[g] = 0;
    }
    dirty = false;
  };
  for (std::int64_t base = begin; base < end; base += G) {
    std::int32_t my_col = 0;
    T my_val = 0;
    if (base + lane < end) {
      my_col = kernels::load_stream(col + base + lane);
      my_val = kernels::load_stream(val + base + lane);
    }
    const int n = static_cast<int>(min(std::int64_t{G}, end - base));
    for (int s = 0; s < n; ++s) {
      while (base + s >= row_end) {  // group-uniform: every lane walks the same rows
        if (dirty) flush(false);
        ++row;
        row_end = __ldg(row_ptr + row + 1);
      }
      const std::int32_t c = __shfl_sync(group_mask, my_col, s, G);
      const T v = __shfl_sync(group_mask, my_val, s, G);
#pragma unroll
      for (int g = 0; g < R; ++g) {
        const std::int64_t j = lane + G * g;
        if (j < k) acc[g] += v * __ldg(x + dense_index<kRowMajorX>(c, j, cols, k));
      }
      dirty = true;
    }
  }
  if (dirty) flush(row_end > end);  // the last row goes on in the next chunk
}

int next_pow2(std::int64_t n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

template <bool kRowMajorY, class T>
void launch_row_major_pairs(std::int64_t k, const DeviceCsr<T>& a, T alpha, const T* x, T beta, T* y,
                            cudaStream_t s) {
  const std::int64_t pairs = k / 2;
  const int g = pairs > 32 ? 32 : next_pow2(pairs);
  const int r = static_cast<int>((pairs + g - 1) / g);
  const unsigned grid = kernels::blocks_for(a.rows * g);
  const auto* rp = a.row_ptr.data();
  const auto* ci = a.col_idx.data();
  const auto* v = a.values.data();
#define TESSERA_PAIRS(G, R) \
  spmm_row_major_pairs_kernel<G, R, kRowMajorY><<<grid, kBlock, 0, s>>>(a.rows, k, rp, ci, v, x, alpha, beta, y)
  if (g == 1) TESSERA_PAIRS(1, 1);
  else if (g == 2) TESSERA_PAIRS(2, 1);
  else if (g == 4) TESSERA_PAIRS(4, 1);
  else if (g == 8) TESSERA_PAIRS(8, 1);
  else if (g == 16) TESSERA_PAIRS(16, 1);
  else if (r == 1) TESSERA_PAIRS(32, 1);
  else TESSERA_PAIRS(32, 2);
#undef TESSERA_PAIRS
  TESSERA_CHECK_LAUNCH();
}

// X row-major; Y row-major, or column-major when X was staged from a column-major input.
template <bool kRowMajorY, class T>
void launch_row_major(std::int64_t k, const DeviceCsr<T>& a, T alpha, const T* x, T beta, T* y, cudaStream_t s) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % (2 * sizeof(T)) == 0; };
  if (k % 2 == 0 && aligned(x) && (!kRowMajorY || aligned(y)))
    return launch_row_major_pairs<kRowMajorY>(k, a, alpha, x, beta, y, s);
  const int g = k > 32 ? 32 : next_pow2(k);
  const int r = static_cast<int>((k + g - 1) / g);
  const unsigned grid = kernels::blocks_for(a.rows * g);
  const auto* rp = a.row_ptr.data();
  const auto* ci = a.col_idx.data();
  const auto* v = a.values.data();
#define TESSERA_ROW_MAJOR(G, R) \
  spmm_row_major_kernel<G, R, kRowMajorY><<<grid, kBlock, 0, s>>>(a.rows, k, rp, ci, v, x, alpha, beta, y)
  if (g == 1) TESSERA_ROW_MAJOR(1, 1);
  else if (g == 2) TESSERA_ROW_MAJOR(2, 1);
  else if (g == 4) TESSERA_ROW_MAJOR(4, 1);
  else if (g == 8) TESSERA_ROW_MAJOR(8, 1);
  else if (g == 16) TESSERA_ROW_MAJOR(16, 1);
  else if (r == 1) TESSERA_ROW_MAJOR(32, 1);
  else if (r == 2) TESSERA_ROW_MAJOR(32, 2);
  else TESSERA_ROW_MAJOR(32, 4);
#undef TESSERA_ROW_MAJOR
  TESSERA_CHECK_LAUNCH();
}

// Rows longer than this use a group of lanes per row in column-major SpMM (thread-per-row
// loads of A stop being served from L1 once a block's slice of A outgrows it).
constexpr double kColMajorGroupMeanRow = 12;

template <class T>
void launch_col_major_group(std::int64_t k, const DeviceCsr<T>& a, double mean, T alpha, const T* x, T beta, T* y,
                            cudaStream_t s) {
  const int tpr = std::min(threads_per_row_for(mean), 16);
  const int r = std::min(8, next_pow2(k));
  const unsigned grid = kernels::blocks_for(a.rows * tpr);
  const auto* rp = a.row_ptr.data();
  const auto* ci = a.col_idx.data();
  const auto* v = a.values.data();
#define TESSERA_COL_GROUP(TPR, R) \
  spmm_col_major_group_kernel<TPR, R><<<grid, kBlock, 0, s>>>(a.rows, a.cols, k, rp, ci, v, x, alpha, beta, y)
#define TESSERA_COL_GROUP_R(TPR) \
  if (r == 2) TESSERA_COL_GROUP(TPR, 2); else if (r == 4) TESSERA_COL_GROUP(TPR, 4); else TESSERA_COL_GROUP(TPR, 8)
  if (tpr == 16) { TESSERA_COL_GROUP_R(16); }
  else { TESSERA_COL_GROUP_R(8); }
#undef TESSERA_COL_GROUP_R
#undef TESSERA_COL_GROUP
  TESSERA_CHECK_LAUNCH();
}

template <class T>
void launch_col_major(std::int64_t k, const DeviceCsr<T>& a, T alpha, const T* x, T beta, T* y, cudaStream_t s) {
  const int r = std::min(16, next_pow2(k));
  const unsigned grid = kernels::blocks_for(a.rows);
  const auto* rp = a.row_ptr.data();
  const auto* ci = a.col_idx.data();
  const auto* v = a.values.data();
#define TESSERA_COL_MAJOR(R) \
  spmm_col_major_kernel<R><<<grid, kBlock, 0, s>>>(a.rows, a.cols, k, rp, ci, v, x, alpha, beta, y)
  if (r == 2) TESSERA_COL_MAJOR(2);
  else if (r == 4) TESSERA_COL_MAJOR(4);
  else if (r == 8) TESSERA_COL_MAJOR(8);
  else TESSERA_COL_MAJOR(16);
#undef TESSERA_COL_MAJOR
  TESSERA_CHECK_LAUNCH();
}

template <bool kRowMajorX, bool kRowMajorY, class T>
void launch_nnz_split(const SpmmPlan& plan, const DeviceCsr<T>& a, T alpha, const T* x, T beta, T* y,
                      cudaStream_t s) {
  const NnzChunks& c = plan.chunks;
  const std::int64_t k = plan.k;
  kernels::launch_scale(a.rows * k, beta, y, s);
  if (c.count == 0) return;
  const int g = k > 32 ? 32 : next_pow2(k);
  const unsigned grid = kernels::blocks_for(c.count * g);
#define TESSERA_NNZ_SPLIT(G, R)                                                                              \
  spmm_nnz_split_kernel<G, R, kRowMajorX, kRowMajorY><<<grid, kBlock, 0, s>>>(                             \
      a.rows, a.cols, k, a.nnz, c.chunk_nnz, c.count, c.first_row.data(), a.row_ptr.data(), a.col_idx.data(), \
      a.values.data(), x, alpha, y, c.tail_data<T>())
  if (g == 1) TESSERA_NNZ_SPLIT(1, 1);
  else if (g == 2) TESSERA_NNZ_SPLIT(2, 1);
  else if (g == 4) TESSERA_NNZ_SPLIT(4, 1);
  else if (g == 8) TESSERA_NNZ_SPLIT(8, 1);
  else if (g == 16) TESSERA_NNZ_SPLIT(16, 1);
  else if (k <= 32) TESSERA_NNZ_SPLIT(32, 1);
  else if (k <= 64) TESSERA_NNZ_SPLIT(32, 2);
  else TESSERA_NNZ_SPLIT(32, 4);
#undef TESSERA_NNZ_SPLIT
  TESSERA_CHECK_LAUNCH();
  kernels::launch_nnz_split_fixup<kRowMajorY>(c, a.rows, k, a.nnz, a.row_ptr.data(), alpha, y, s);
}

// Too few blocks for the SMs: the balanced kernels launch rows*G (row-major) or rows
// (column-major) threads; under two blocks per SM, long rows leave SMs idle.
bool spmm_prefers_nnz_split(const RowStats& s, std::int64_t k, int sms) {
  if (s.nnz == 0) return false;
  const double threads = static_cast<double>(s.rows) * std::min<std::int64_t>(32, next_pow2(k));
  const bool underfilled = s.mean > 8 && threads / kBlock < 2.0 * sms;
  const bool one_long_row = s.max_row > 1024 && static_cast<double>(s.max_row) > 32.0 * s.mean;
  return s.cv > 1.0 || underfilled || one_long_row;
}

}  // namespace

const char* to_string(SpmmAlgorithm a) {
  switch (a) {
    case SpmmAlgorithm::automatic: return "auto";
    case SpmmAlgorithm::balanced: return "balanced";
    case SpmmAlgorithm::nnz_split: return "nnz-split";
    case SpmmAlgorithm::tiles: return "tiles";
  }
  return "?";
}

const char* to_string(ColMajorX c) {
  switch (c) {
    case ColMajorX::automatic: return "auto";
    case ColMajorX::in_place: return "in place";
    case ColMajorX::staged_row_major: return "staged row-major";
  }
  return "?";
}

namespace {

// The tile SpMM pays when A's rows come in well-filled 8x8 tiles (X gathered once a tile
// instead of once a nonzero): worth building the pattern only for FP64 (tensor-core MMA), k
// past a few columns and long rows; the fill then decides.
template <class T>
bool tiles_worth_trying(const RowStats& s, std::int64_t k) {
  return std::is_same_v<T, double> && k >= kTileSpmmMinColumns && s.mean >= kTileSpmmMinMeanRow && s.cv <= 1.0;
}

}  // namespace

template <class T>
SpmmPlan make_spmm_plan(const DeviceCsr<T>& a, std::int64_t k, SpmmAlgorithm algorithm, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(k >= 1 && k <= kMaxSpmmColumns, "SpMM supports 1 <= k <= ", kMaxSpmmColumns, " columns, got ",
                        k);
  TESSERA_REQUIRE_INPUT(algorithm != SpmmAlgorithm::tiles || (std::is_same_v<T, double>),
                        "the tile SpMM is FP64 only (tensor-core MMA); use balanced or nnz-split in FP32");
  SpmmPlan plan;
  plan.k = k;
  plan.stats = row_stats(a.row_ptr.data(), a.rows, a.nnz, stream);
  plan.row_ptr = a.row_ptr.data();
  const int sms = sm_count();
  plan.algorithm = algorithm;
  if (algorithm == SpmmAlgorithm::automatic) {
    plan.algorithm = spmm_prefers_nnz_split(plan.stats, k, sms) ? SpmmAlgorithm::nnz_split : SpmmAlgorithm::balanced;
    if (plan.algorithm == SpmmAlgorithm::balanced && tiles_worth_trying<T>(plan.stats, k)) {
      plan.tiles = make_tile_pattern(a, stream);
      if (plan.tiles.fill() >= kTileSpmmMinFill) plan.algorithm = SpmmAlgorithm::tiles;
      else plan.tiles = CsrTilePattern{};
    }
  }
  if (algorithm == SpmmAlgorithm::tiles) plan.tiles = make_tile_pattern(a, stream);
  if (plan.algorithm == SpmmAlgorithm::nnz_split) {
    const std::int64_t target_chunks = static_cast<std::int64_t>(sms) * 64 * 2;
    std::int64_t chunk = (a.nnz + target_chunks - 1) / target_chunks;
    chunk = std::clamp<std::int64_t>((chunk + 31) / 32 * 32, 64, 2048);
    plan.chunks = make_nnz_chunks(a.row_ptr.data(), a.rows, a.nnz, chunk, stream, k);
  }
  retain_pool_memory();  // a staged column-major X is allocated per call from the pool
  return plan;
}

namespace {

// The CSR kernels on a row-major X; Y in `y_layout`.
template <class T>
void spmm_row_major_x(const SpmmPlan& plan, T alpha, const DeviceCsr<T>& a, const T* x, T beta, T* y,
                      Layout y_layout, cudaStream_t stream) {
  const bool row_major_y = y_layout == Layout::row_major;
  if (plan.algorithm == SpmmAlgorithm::nnz_split) {
    if (row_major_y) launch_nnz_split<true, true>(plan, a, alpha, x, beta, y, stream);
    else launch_nnz_split<true, false>(plan, a, alpha, x, beta, y, stream);
  } else if (row_major_y) {
    launch_row_major<true>(plan.k, a, alpha, x, beta, y, stream);
  } else {
    launch_row_major<false>(plan.k, a, alpha, x, beta, y, stream);
  }
}

bool stage_col_major_x(const SpmmPlan& plan) {
  switch (plan.col_major_x) {
    case ColMajorX::in_place: return false;
    case ColMajorX::staged_row_major: return true;
    case ColMajorX::automatic: break;
  }
  return plan.algorithm == SpmmAlgorithm::nnz_split || plan.stats.mean > kColMajorGroupMeanRow;
}

}  // namespace

template <class T>
void spmm(const SpmmPlan& plan, T alpha, const DeviceCsr<T>& a, const T* x, T beta, T* y, Layout layout,
          cudaStream_t stream) {
  // Rows and nnz alone would pass the plan of another matrix of the same size, whose nnz chunks
  // (cut from its row_ptr) would then update the wrong rows (best-effort, as SpmvPlan's check).
  TESSERA_REQUIRE_INPUT(plan.row_ptr == a.row_ptr.data() && plan.stats.rows == a.rows && plan.stats.nnz == a.nnz,
                        "SpMM plan was made for another matrix (", plan.stats.rows, " rows, ", plan.stats.nnz,
                        " nonzeros) than this one (", a.rows, ", ", a.nnz, "): make the plan from this DeviceCsr");
  const std::int64_t k = plan.k;
  if (a.rows == 0) return;
  if (plan.algorithm == SpmmAlgorithm::tiles) {
    if constexpr (std::is_same_v<T, double>) tile_spmm(plan.tiles, alpha, a, x, beta, y, k, layout, stream);
    else throw InputError("the tile SpMM is FP64 only: this FP32 plan was set to tiles after make_spmm_plan");
    return;
  }
  if (k == 1) {  // both layouts are one contiguous vector: the SpMV kernels
    if (plan.algorithm == SpmmAlgorithm::nnz_split) {
      kernels::launch_csr_nnz_split(plan.chunks, a.rows, a.nnz, a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                                    x, alpha, beta, y, stream);
    } else {
      const int tpr = threads_per_row_for(plan.stats.mean);
      kernels::launch_csr_vector(tpr, rows_per_group_for(tpr), a.rows, a.row_ptr.data(), a.col_idx.data(),
                                 a.values.data(), x, kernels::AxpbyEpilogue<T>{alpha, beta, y}, stream);
    }
  } else if (layout == Layout::row_major) {
    spmm_row_major_x(plan, alpha, a, x, beta, y, Layout::row_major, stream);
  } else if (stage_col_major_x(plan)) {
    DeviceBuffer<T> staged(static_cast<std::size_t>(a.cols * k), stream);
    col_to_row_major(a.cols, k, x, staged.data(), stream);
    spmm_row_major_x(plan, alpha, a, staged.data(), beta, y, Layout::col_major, stream);
  } else if (plan.algorithm == SpmmAlgorithm::nnz_split) {
    launch_nnz_split<false, false>(plan, a, alpha, x, beta, y, stream);
  } else if (plan.stats.mean > kColMajorGroupMeanRow) {
    launch_col_major_group(k, a, plan.stats.mean, alpha, x, beta, y, stream);
  } else {
    launch_col_major(k, a, alpha, x, beta, y, stream);
  }
}

#define TESSERA_INSTANTIATE_SPMM(T)                                                                          \
  template SpmmPlan make_spmm_plan<T>(const DeviceCsr<T>&, std::int64_t, SpmmAlgorithm, cudaStream_t);       \
  template void spmm<T>(const SpmmPlan&, T, const DeviceCsr<T>&, const T*, T, T*, Layout, cudaStream_t);
TESSERA_INSTANTIATE_SPMM(double)
TESSERA_INSTANTIATE_SPMM(float)
#undef TESSERA_INSTANTIATE_SPMM

}  // namespace tessera::cuda
