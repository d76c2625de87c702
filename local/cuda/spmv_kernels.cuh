#pragma once
// CSR SpMV building blocks shared by spmv.cu, fused_smoother.cu and spmm.cu: the vector
// kernel (a group of TPR lanes per row, shuffle reduction, the row's result handed to an
// epilogue functor so residual and Jacobi fuse into the same pass) and the nnz-split kernels
// (bitwise repeatable: rows split over chunks are summed by a fix-up pass in a fixed order).
#include <cuda_runtime.h>

#include <cstdint>

#include "local/cuda/check.hpp"
#include "local/cuda/dense_layout.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::cuda::kernels {

inline constexpr int kBlock = 256;
inline constexpr unsigned kFullMask = 0xffffffffu;

inline unsigned blocks_for(std::int64_t threads, int block = kBlock) {
  return static_cast<unsigned>((threads + block - 1) / block);
}

/// y_i = alpha*s + beta*y_i; beta == 0 does not read y.
template <class T>
struct AxpbyEpilogue {
  T alpha, beta;
  T* y;
  __device__ void operator()(std::int64_t i, T s) const {
    y[i] = beta == T(0) ? alpha * s : alpha * s + beta * y[i];
  }
};

// A is read once: streaming loads (evict-first) keep x, which is reused, in the caches.
template <class T>
__device__ __forceinline__ T load_stream(const T* p) { return __ldcs(p); }

// Each group of TPR lanes owns R consecutive rows and advances them together, so every pass
// issues R independent loads per lane: short rows (a 7-point stencil is one pass) would
// otherwise leave one dependent row_ptr -> col -> x chain per thread, too few bytes in flight
// to saturate HBM.
template <int TPR, int R, class T, class Epilogue>
__global__ void __launch_bounds__(kBlock) csr_vector_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr,
                                                            const std::int32_t* __restrict__ col,
                                                            const T* __restrict__ val, const T* __restrict__ x,
                                                            Epilogue epilogue) {
  const std::int64_t thread = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t first = thread / TPR * R;
  const int lane = static_cast<int>(threadIdx.x % TPR);
  T sum[R];
  std::int64_t next[R], end[R];
  bool more = false;
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const bool valid = first + q < rows;
    next[q] = valid ? __ldg(row_ptr + first + q) + lane : 0;
    end[q] = valid ? __ldg(row_ptr + first + q + 1) : 0;
    sum[q] = 0;
    more |= next[q] < end[q];
  }
  while (more) {  // no shuffles inside: lanes may leave at different passes
    more = false;
#pragma unroll
    for (int q = 0; q < R; ++q)
      if (next[q] < end[q]) {
        sum[q] += load_stream(val + next[q]) * __ldg(x + load_stream(col + next[q]));
        next[q] += TPR;
        more |= next[q] < end[q];
      }
  }
#pragma unroll
  for (int q = 0; q < R; ++q) {
#pragma unroll
    for (int offset = TPR / 2; offset > 0; offset /= 2) sum[q] += __shfl_xor_sync(kFullMask, sum[q], offset, TPR);
    if (lane == q % TPR && first + q < rows) epilogue(first + q, sum[q]);
  }
}

template <int TPR, class T, class Epilogue>
void launch_csr_vector_rows(int rows_per_group, std::int64_t rows, const std::int64_t* row_ptr, const std::int32_t* col,
                            const T* val, const T* x, Epilogue epilogue, cudaStream_t stream) {
  const unsigned grid = blocks_for((rows + rows_per_group - 1) / rows_per_group * TPR);
  switch (rows_per_group) {
    case 1: csr_vector_kernel<TPR, 1><<<grid, kBlock, 0, stream>>>(rows, row_ptr, col, val, x, epilogue); break;
    case 2: csr_vector_kernel<TPR, 2><<<grid, kBlock, 0, stream>>>(rows, row_ptr, col, val, x, epilogue); break;
    case 4: csr_vector_kernel<TPR, 4><<<grid, kBlock, 0, stream>>>(rows, row_ptr, col, val, x, epilogue); break;
    case 8: csr_vector_kernel<TPR, 8><<<grid, kBlock, 0, stream>>>(rows, row_ptr, col, val, x, epilogue); break;
    default: TESSERA_ASSERT(false, "rows per group must be 1, 2, 4 or 8, got ", rows_per_group);
  }
}

template <class T, class Epilogue>
void launch_csr_vector(int threads_per_row, int rows_per_group, std::int64_t rows, const std::int64_t* row_ptr,
                       const std::int32_t* col, const T* val, const T* x, Epilogue epilogue, cudaStream_t stream) {
  if (rows == 0) return;
  switch (threads_per_row) {
    case 2: launch_csr_vector_rows<2>(rows_per_group, rows, row_ptr, col, val, x, epilogue, stream); break;
    case 4: launch_csr_vector_rows<4>(rows_per_group, rows, row_ptr, col, val, x, epilogue, stream); break;
    case 8: launch_csr_vector_rows<8>(rows_per_group, rows, row_ptr, col, val, x, epilogue, stream); break;
    case 16: launch_csr_vector_rows<16>(rows_per_group, rows, row_ptr, col, val, x, epilogue, stream); break;
    case 32: launch_csr_vector_rows<32>(rows_per_group, rows, row_ptr, col, val, x, epilogue, stream); break;
    default: TESSERA_ASSERT(false, "threads per row must be 2, 4, 8, 16 or 32, got ", threads_per_row);
  }
  TESSERA_CHECK_LAUNCH();
}

/// y[0..n) *= beta (beta == 0 writes zeros without reading: NaN in y is dropped).
template <class T>
__global__ void scale_kernel(std::int64_t n, T beta, T* y) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = beta == T(0) ? T(0) : beta * y[i];
}

template <class T>
void launch_scale(std::int64_t n, T beta, T* y, cudaStream_t stream) {
  if (n == 0 || beta == T(1)) return;
  scale_kernel<<<blocks_for(n), kBlock, 0, stream>>>(n, beta, y);
  TESSERA_CHECK_LAUNCH();
}

/// Largest row r in [lo, hi] with row_ptr[r] <= idx: the row holding nonzero idx (never an
/// empty row, since an empty row r has row_ptr[r+1] == row_ptr[r]).
__device__ __forceinline__ std::int64_t row_of(const std::int64_t* row_ptr, std::int64_t idx, std::int64_t lo,
                                               std::int64_t hi) {
  while (lo < hi) {
    const std::int64_t mid = (lo + hi + 1) / 2;
    if (__ldg(row_ptr + mid) <= idx) lo = mid; else hi = mid - 1;
  }
  return lo;
}

/// One warp per chunk of nonzeros: 32 consecutive nonzeros per step, a segmented inclusive
/// scan over the lanes (rows are non-decreasing across lanes), the piece still open at the
/// step's last lane carried into the next step. Bitwise repeatable: a row that ends in this
/// chunk gets its piece here in one atomicAdd onto y (pre-scaled by beta), the only add it
/// gets in this kernel, so no order is involved (the atomic is a fire-and-forget reduction in
/// L2, where a load and a store would stall the warp on y); the piece of the row that goes on
/// past the chunk's end waits in tails[chunk] for nnz_split_fixup_kernel. Eight blocks a
/// multiprocessor hold ptxas to 32 registers (no spills), as before the tails: the choice at
/// the end otherwise took 40 in fp64, 48 warps an SM instead of 64 for this latency-bound
/// kernel.
template <class T>
__global__ void __launch_bounds__(kBlock, 8) csr_nnz_split_kernel(std::int64_t nnz, std::int64_t chunk_nnz,
                                                                  std::int64_t chunks,
                                                                  const std::int64_t* __restrict__ first_row,
                                                                  const std::int64_t* __restrict__ row_ptr,
                                                                  const std::int32_t* __restrict__ col,
                                                                  const T* __restrict__ val, const T* __restrict__ x,
                                                                  T alpha, T* y, T* __restrict__ tails) {
  const std::int64_t chunk = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  if (chunk >= chunks) return;  // warp-uniform
  const int lane = static_cast<int>(threadIdx.x & 31);
  const std::int64_t begin = chunk * chunk_nnz, end = min(begin + chunk_nnz, nnz);
  std::int64_t lo = first_row[chunk];
  const std::int64_t hi = first_row[chunk + 1];
  std::int64_t carry_row = -1;
  T carry = 0;
  for (std::int64_t base = begin; base < end; base += 32) {
    const std::int64_t idx = base + lane;
    const int last = static_cast<int>(min(std::int64_t{31}, end - 1 - base));
    std::int64_t row = -1;
    T v = 0;
    // The ends of rows lo..lo+31, one per lane; each lane's row is lo + (number of those
    // ends <= its index), found by a 5-step binary search over the lanes with shuffles.
    const std::int64_t end_of = lo + lane < hi ? __ldg(row_ptr + lo + lane + 1) : INT64_MAX;
    int below = 0;
#pragma unroll
    for (int step = 16; step > 0; step /= 2) {
      const std::int64_t probe = __shfl_sync(kFullMask, end_of, below + step - 1);
      if (probe <= idx) below += step;
    }
    const std::int64_t end_31 = __shfl_sync(kFullMask, end_of, 31);
    if (lane <= last) {
      // All 32 ends <= idx happens only after runs of empty rows: finish the search in memory.
      row = end_31 > idx ? lo + below : row_of(row_ptr, idx, lo + 32, hi);
      v = load_stream(val + idx) * __ldg(x + load_stream(col + idx));
    }
    if (lane == 0 && carry_row >= 0) {
      if (row == carry_row) v += carry;
      else atomicAdd(y + carry_row, alpha * carry);
    }
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const T up = __shfl_up_sync(kFullMask, v, offset);
      const std::int64_t up_row = __shfl_up_sync(kFullMask, row, offset);
      if (lane >= offset && up_row == row) v += up;
    }
    const std::int64_t next_row = __shfl_down_sync(kFullMask, row, 1);
    if (lane < last && next_row != row) atomicAdd(y + row, alpha * v);
    carry = __shfl_sync(kFullMask, v, last);
    carry_row = __shfl_sync(kFullMask, row, last);
    lo = carry_row;
  }
  if (lane != 0) return;
  if (end < nnz && hi == carry_row) tails[chunk] = carry;  // the row goes on in the next chunk
  else atomicAdd(y + carry_row, alpha * carry);
}

/// A crossing row of at most this many earlier pieces is summed by its finishing chunk's own
/// thread when k == 1 (the SpMV): most rows crossing a boundary are short, and a warp-wide sum
/// per row would serialise the warp over its 32 chunks.
inline constexpr std::int64_t kFixupSerialPieces = 16;

/// Second pass of the nnz split, for the rows that cross chunk boundaries: chunk c whose first
/// row began in an earlier chunk and ends in c added that row's last piece to Y itself; the
/// earlier chunks p left theirs in tails[p*k + j]. One thread checks each chunk. A short row
/// with k == 1 is summed by that thread in chunk order; otherwise the warp sums the row:
/// `group` lanes (k rounded up to a power of two, at most 32) over the columns, 32/group over
/// the pieces (strided), a fixed shuffle tree across those. Either way the order depends on
/// the matrix alone, never on scheduling, and each entry of Y gets one add. Y has `rows` rows
/// and k columns in either layout.
template <bool kRowMajorY, class T>
__global__ void __launch_bounds__(kBlock) nnz_split_fixup_kernel(std::int64_t rows, std::int64_t k, int group,
                                                                 std::int64_t nnz, std::int64_t chunk_nnz,
                                                                 std::int64_t chunks,
                                                                 const std::int64_t* __restrict__ first_row,
                                                                 const std::int64_t* __restrict__ row_ptr,
                                                                 const T* __restrict__ tails, T alpha, T* y) {
  const std::int64_t chunk = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  std::int64_t row = 0, first_piece = 0;
  bool finishes = false;  // no early return: the whole warp takes part in the long rows' sums
  if (chunk < chunks) {
    row = first_row[chunk];
    const std::int64_t begin = chunk * chunk_nnz, start = __ldg(row_ptr + row);
    const bool goes_on = begin + chunk_nnz < nnz && first_row[chunk + 1] == row;
    finishes = start < begin && !goes_on;
    first_piece = start / chunk_nnz;
  }
  if (finishes && k == 1 && chunk - first_piece <= kFixupSerialPieces) {
    T sum = 0;
    for (std::int64_t p = first_piece; p < chunk; ++p) sum += tails[p];
    y[row] += alpha * sum;
    finishes = false;
  }
  const int lane = static_cast<int>(threadIdx.x & 31), slot = lane / group, slots = 32 / group;
  for (unsigned todo = __ballot_sync(kFullMask, finishes); todo != 0; todo &= todo - 1) {
    const int src = __ffs(todo) - 1;
    const std::int64_t r = __shfl_sync(kFullMask, row, src), p0 = __shfl_sync(kFullMask, first_piece, src);
    const std::int64_t p1 = chunk - lane + src;  // the finishing chunk: pieces p0..p1-1
    for (std::int64_t j0 = 0; j0 < k; j0 += group) {
      const std::int64_t j = j0 + lane % group;
      T sum = 0;
      if (j < k)
        for (std::int64_t p = p0 + slot; p < p1; p += slots) sum += tails[p * k + j];
      for (int offset = group; offset < 32; offset *= 2) sum += __shfl_xor_sync(kFullMask, sum, offset);
      if (slot == 0 && j < k) y[dense_index<kRowMajorY>(r, j, rows, k)] += alpha * sum;
    }
  }
}

template <bool kRowMajorY, class T>
void launch_nnz_split_fixup(const NnzChunks& chunks, std::int64_t rows, std::int64_t k, std::int64_t nnz,
                            const std::int64_t* row_ptr, T alpha, T* y, cudaStream_t stream) {
  if (chunks.count < 2) return;  // no chunk boundary to cross
  int group = 1;
  while (group < k && group < 32) group *= 2;
  nnz_split_fixup_kernel<kRowMajorY><<<blocks_for(chunks.count), kBlock, 0, stream>>>(
      rows, k, group, nnz, chunks.chunk_nnz, chunks.count, chunks.first_row.data(), row_ptr,
      chunks.tail_data<T>(), alpha, y);
  TESSERA_CHECK_LAUNCH();
}

/// y = alpha*A*x + beta*y by the nnz split: y scaled by beta (beta == 0 writes zeros without
/// reading), the chunks' pass, the crossing rows' fix-up.
template <class T>
void launch_csr_nnz_split(const NnzChunks& chunks, std::int64_t rows, std::int64_t nnz, const std::int64_t* row_ptr,
                          const std::int32_t* col, const T* val, const T* x, T alpha, T beta, T* y,
                          cudaStream_t stream) {
  launch_scale(rows, beta, y, stream);
  if (chunks.count == 0) return;
  csr_nnz_split_kernel<<<blocks_for(chunks.count * 32), kBlock, 0, stream>>>(
      nnz, chunks.chunk_nnz, chunks.count, chunks.first_row.data(), row_ptr, col, val, x, alpha, y,
      chunks.tail_data<T>());
  TESSERA_CHECK_LAUNCH();
  launch_nnz_split_fixup<true>(chunks, rows, 1, nnz, row_ptr, alpha, y, stream);
}

}  // namespace tessera::cuda::kernels
