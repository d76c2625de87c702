#include "local/cuda/spmv.hpp"
#include "local/cuda/spmv_kernels.cuh"
#include "local/cuda/spmv_stream_kernel.cuh"

namespace tessera::cuda {
namespace {

// One warp per tile-row; lane = 8*slot + r works on row r of tile (first + slot + 4*i).
template <class T>
__global__ void __launch_bounds__(kernels::kBlock) tile_spmv_kernel(
    std::int64_t tile_rows, std::int64_t rows, const std::int64_t* __restrict__ tile_row_ptr,
    const std::int32_t* __restrict__ tile_col, const std::uint64_t* __restrict__ bitmap,
    const std::int64_t* __restrict__ value_offset, const T* __restrict__ val, const T* __restrict__ x,
    kernels::AxpbyEpilogue<T> epilogue) {
  const std::int64_t tile_row = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  if (tile_row >= tile_rows) return;  // warp-uniform
  const int lane = static_cast<int>(threadIdx.x & 31), slot = lane >> 3, r = lane & 7;
  T sum = 0;
  const std::int64_t end = __ldg(tile_row_ptr + tile_row + 1);
  for (std::int64_t t = __ldg(tile_row_ptr + tile_row) + slot; t < end; t += 4) {
    const std::uint64_t bits = __ldg(bitmap + t);
    unsigned mask = tile::row_mask(bits, r);
    std::int64_t v = __ldg(value_offset + t) + __popcll(bits & ((std::uint64_t{1} << (8 * r)) - 1u));
    const T* xs = x + static_cast<std::int64_t>(__ldg(tile_col + t)) * tile::kDim;
    while (mask) {
      const int c = __ffs(mask) - 1;
      mask &= mask - 1;
      sum += kernels::load_stream(val + v++) * __ldg(xs + c);
    }
  }
  sum += __shfl_xor_sync(kernels::kFullMask, sum, 8);
  sum += __shfl_xor_sync(kernels::kFullMask, sum, 16);
  const std::int64_t row = tile_row * tile::kDim + r;
  if (slot == 0 && row < rows) epilogue(row, sum);
}

}  // namespace

template <class T>
void spmv(const SpmvPlan& plan, T alpha, const DeviceCsr<T>& a, const T* x, T beta, T* y, cudaStream_t stream) {
  require_plan_of(plan, a, "spmv");
  if (plan.algorithm == SpmvAlgorithm::nnz_split) {
    kernels::launch_csr_nnz_split(plan.chunks, a.rows, a.nnz, a.row_ptr.data(), a.col_idx.data(), a.values.data(), x,
                                  alpha, beta, y, stream);
    return;
  }
  kernels::launch_csr_rows(plan, a, x, kernels::AxpbyEpilogue<T>{alpha, beta, y}, stream);
}

template <class T>
void spmv_tiles(T alpha, const DeviceTileMatrix<T>& a, const T* x, T beta, T* y, cudaStream_t stream) {
  const std::int64_t tile_rows = a.tile_rows();
  if (tile_rows == 0) return;
  tile_spmv_kernel<<<kernels::blocks_for(tile_rows * 32), kernels::kBlock, 0, stream>>>(
      tile_rows, a.rows, a.tile_row_ptr.data(), a.tile_col.data(), a.bitmap.data(), a.value_offset.data(),
      a.values.data(), x, kernels::AxpbyEpilogue<T>{alpha, beta, y});
  TESSERA_CHECK_LAUNCH();
}

#define TESSERA_INSTANTIATE_SPMV(T)                                                                         \
  template void spmv<T>(const SpmvPlan&, T, const DeviceCsr<T>&, const T*, T, T*, cudaStream_t);           \
  template void spmv_tiles<T>(T, const DeviceTileMatrix<T>&, const T*, T, T*, cudaStream_t);
TESSERA_INSTANTIATE_SPMV(double)
TESSERA_INSTANTIATE_SPMV(float)
#undef TESSERA_INSTANTIATE_SPMV

}  // namespace tessera::cuda
