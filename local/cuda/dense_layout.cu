#include <algorithm>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/dense_layout.hpp"

namespace tessera::cuda {
namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

// Block (32 x 8 threads) per 32x32 tile; the +1 column keeps the transposed reads of shared
// memory free of bank conflicts.
template <class T>
__global__ void col_to_row_major_kernel(std::int64_t rows, std::int64_t cols, const T* __restrict__ src,
                                        T* __restrict__ dst) {
  __shared__ T tile[kTile][kTile + 1];
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  for (int j = threadIdx.y; j < kTile; j += kRowsPerPass) {  // read column c0+j, rows r0+threadIdx.x
    const std::int64_t r = r0 + threadIdx.x, c = c0 + j;
    if (r < rows && c < cols) tile[j][threadIdx.x] = src[c * rows + r];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {  // write row r0+i, columns c0+threadIdx.x
    const std::int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) dst[r * cols + c] = tile[threadIdx.x][i];
  }
}

}  // namespace

template <class T>
void col_to_row_major(std::int64_t rows, std::int64_t cols, const T* src, T* dst, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  TESSERA_REQUIRE_INPUT((cols + kTile - 1) / kTile <= 65535 && (rows + kTile - 1) / kTile <= 2147483647,
                        "col_to_row_major: ", rows, " x ", cols, " is past the grid (columns up to 2,097,120)");
  // Rows go on grid x (up to 2^31-1 blocks); the columns of an SpMM are at most 128.
  const dim3 grid(static_cast<unsigned>((rows + kTile - 1) / kTile), static_cast<unsigned>((cols + kTile - 1) / kTile));
  col_to_row_major_kernel<T><<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(rows, cols, src, dst);
  TESSERA_CHECK_LAUNCH();
}

template void col_to_row_major<double>(std::int64_t, std::int64_t, const double*, double*, cudaStream_t);
template void col_to_row_major<float>(std::int64_t, std::int64_t, const float*, float*, cudaStream_t);

}  // namespace tessera::cuda
