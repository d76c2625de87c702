#include <cstdint>

#include "local/core/error.hpp"
#include "local/cuda/dense_layout.hpp"
#include "local/cuda/mma_tile.cuh"
#include "local/cuda/spmv_kernels.cuh"
#include "local/cuda/tile_spmm.hpp"

namespace tessera::cuda {
namespace {

using kernels::kBlock;
using kernels::kFullMask;

// A(g, c) of the current tile for lane row g: `bits` is the tile's row g, `pos` the CSR index
// of that row's first entry in this tile (entries of a row inside a tile are consecutive in CSR).
__device__ __forceinline__ double tile_entry(const double* __restrict__ val, std::int64_t pos, unsigned bits, int c) {
  return (bits >> c) & 1u ? __ldg(val + pos + __popc(bits & ((1u << c) - 1u))) : 0.0;
}

// A tile-row whose X slabs held Inf or NaN: the MMA multiplied them by the tiles' unset entries
// too (0 * Inf = NaN in rows that never touch that column), so the warp recomputes its 8 rows
// from A's CSR, stored entries only, as the CSR kernels do (lanes over the k columns). Kept out
// of the MMA loop, so its registers do not add to the loop's: an in-loop fallback doubled them
// (64 -> 124 at two slabs) and cost a third of the speed on finite inputs. Rare, so simple.
template <bool kRowMajor>
__device__ void csr_rows_of_tile_row(std::int64_t tile_row, int lane, std::int64_t rows, std::int64_t cols,
                                     std::int64_t k, const std::int64_t* __restrict__ row_ptr,
                                     const std::int32_t* __restrict__ col, const double* __restrict__ val,
                                     const double* __restrict__ x, double alpha, double beta, double* __restrict__ y) {
  for (std::int64_t row = tile_row * 8; row < min(rows, tile_row * 8 + 8); ++row)
    for (std::int64_t c = lane; c < k; c += 32) {
      double sum = 0;
      for (std::int64_t e = row_ptr[row]; e < row_ptr[row + 1]; ++e)
        sum += val[e] * x[dense_index<kRowMajor>(col[e], c, cols, k)];
      double* out = y + dense_index<kRowMajor>(row, c, rows, k);
      *out = beta == 0.0 ? alpha * sum : alpha * sum + beta * *out;
    }
}

// Blocks an SM asked of ptxas: left free, it gave the column-major kernel 108 registers at four
// slabs and the one- and two-slab kernels up to 104, against 64-80 for the row-major ones; 3 blocks
// of 256 (<= 85 registers) hold every kernel up to four slabs at 80 (an 8-byte spill in one, on the
// non-finite path), 2 blocks the eight-slab kernels (118-120).
template <int NB>
inline constexpr int kMinBlocks = NB <= 2 ? 4 : NB == 4 ? 3 : 2;

// One warp per tile-row I; NB 16-column slabs of Y in registers (k <= 16*NB). The warp reads
// 32 tiles' (column, bitmap) at a time, a lane each, and broadcasts them by shuffles.
template <int NB, bool kRowMajor>
__global__ void __launch_bounds__(kBlock, kMinBlocks<NB>) tile_spmm_kernel(
    std::int64_t rows, std::int64_t cols, std::int64_t k, std::int64_t tile_rows,
    const std::int64_t* __restrict__ tile_row_ptr, const std::int32_t* __restrict__ tile_col,
    const std::uint64_t* __restrict__ bitmap, const std::int64_t* __restrict__ row_ptr,
    const std::int32_t* __restrict__ col, const double* __restrict__ val, const double* __restrict__ x, double alpha, double beta, double* __restrict__ y) {
  const std::int64_t tile_row = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  if (tile_row >= tile_rows) return;  // warp-uniform
  const int lane = static_cast<int>(threadIdx.x & 31), g = lane >> 2, t = lane & 3;
  const std::int64_t my_row = tile_row * 8 + g;
  std::int64_t pos = my_row < rows ? __ldg(row_ptr + my_row) : 0;
  double acc[NB][4] = {};
  bool non_finite = false;  // this lane loaded Inf or NaN from X (see csr_rows_of_tile_row)
  const std::int64_t first = __ldg(tile_row_ptr + tile_row), last = __ldg(tile_row_ptr + tile_row + 1);
  for (std::int64_t base = first; base < last; base += 32) {
    std::int32_t my_col = 0;
    std::uint64_t my_bitmap = 0;
    if (base + lane < last) {
      my_col = __ldg(tile_col + base + lane);
      my_bitmap = __ldg(bitmap + base + lane);
    }
    const int n = static_cast<int>(min(std::int64_t{32}, last - base));
    for (int s = 0; s < n; ++s) {
      const std::int64_t tc = __shfl_sync(kFullMask, my_col, s);
      const std::uint64_t bm = __shfl_sync(kFullMask, my_bitmap, s);
      const unsigned bits = static_cast<unsigned>((bm >> (8 * g)) & 0xffu);
      const double b0 = tile_entry(val, pos, bits, t), b1 = tile_entry(val, pos, bits, t + 4);
      pos += __popc(bits);
      // X rows past A's columns meet only unset bits, but 0 * garbage could be NaN: load zeros.
      // (Inf or NaN inside X: see csr_rows_of_tile_row.)
      const std::int64_t xr0 = tc * 8 + t, xr1 = xr0 + 4;
      const bool in0 = xr0 < cols, in1 = xr1 < cols;
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        const std::int64_t c0 = nb * 16 + g, c1 = c0 + 8;
        if (nb * 16 < k) {  // warp-uniform
          const double a0 = in0 && c0 < k ? __ldg(x + dense_index<kRowMajor>(xr0, c0, cols, k)) : 0.0;
          const double a1 = in0 && c1 < k ? __ldg(x + dense_index<kRowMajor>(xr0, c1, cols, k)) : 0.0;
          const double a2 = in1 && c0 < k ? __ldg(x + dense_index<kRowMajor>(xr1, c0, cols, k)) : 0.0;
          const double a3 = in1 && c1 < k ? __ldg(x + dense_index<kRowMajor>(xr1, c1, cols, k)) : 0.0;
          non_finite |= !(isfinite(a0) && isfinite(a1) && isfinite(a2) && isfinite(a3));
          dev::mma(dev::FragmentsF64{{a0, a1, a2, a3}, {b0, b1}}, acc[nb]);
        }
      }
    }
  }
  if (__any_sync(kFullMask, non_finite)) {
    csr_rows_of_tile_row<kRowMajor>(tile_row, lane, rows, cols, k, row_ptr, col, val, x, alpha, beta, y);
    return;
  }
  // acc[nb] = {Y(r0, c0), Y(r0 + 1, c0), Y(r0, c0 + 8), Y(r0 + 1, c0 + 8)}, r0 = 8I + 2t.
  const std::int64_t r0 = tile_row * 8 + 2 * t;
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const std::int64_t r = r0 + (i & 1), c = nb * 16 + g + (i >> 1) * 8;
      if (r < rows && c < k) {
        double* out = y + dense_index<kRowMajor>(r, c, rows, k);
        *out = beta == 0.0 ? alpha * acc[nb][i] : alpha * acc[nb][i] + beta * *out;
      }
    }
  }
}

template <bool kRowMajor>
void launch(const CsrTilePattern& p, double alpha, const DeviceCsr<double>& a, const double* x, double beta, double* y,
            std::int64_t k, cudaStream_t s) {
  const std::int64_t tile_rows = tile::count(p.rows);
  const unsigned grid = kernels::blocks_for(tile_rows * 32);
  const int slabs = static_cast<int>((k + 15) / 16);
#define TESSERA_TILE_SPMM(NB)                                                                                  \
  tile_spmm_kernel<NB, kRowMajor><<<grid, kBlock, 0, s>>>(a.rows, a.cols, k, tile_rows, p.tile_row_ptr.data(), \
                                                          p.tile_col.data(), p.bitmap.data(), a.row_ptr.data(), \
                                                          a.col_idx.data(), a.values.data(), x, alpha, beta, y)
  if (slabs <= 1) TESSERA_TILE_SPMM(1);
  else if (slabs <= 2) TESSERA_TILE_SPMM(2);
  else if (slabs <= 4) TESSERA_TILE_SPMM(4);
  else TESSERA_TILE_SPMM(8);
#undef TESSERA_TILE_SPMM
  TESSERA_CHECK_LAUNCH();
}

}  // namespace

void tile_spmm(const CsrTilePattern& pattern, double alpha, const DeviceCsr<double>& a, const double* x, double beta,
               double* y, std::int64_t k, Layout layout, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(pattern.rows == a.rows && pattern.cols == a.cols && pattern.nnz == a.nnz,
                        "tile SpMM: the tile pattern (", pattern.rows, " x ", pattern.cols, ", ", pattern.nnz,
                        " nonzeros) is not this matrix's (", a.rows, " x ", a.cols, ", ", a.nnz, ")");
  TESSERA_REQUIRE_INPUT(k >= 1 && k <= 128, "tile SpMM supports 1 <= k <= 128 columns, got ", k);
  if (a.rows == 0) return;
  if (layout == Layout::row_major) launch<true>(pattern, alpha, a, x, beta, y, k, stream);
  else launch<false>(pattern, alpha, a, x, beta, y, k, stream);
}

}  // namespace tessera::cuda
