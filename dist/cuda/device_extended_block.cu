#include "dist/cuda/device_extended_block.hpp"

#include <algorithm>
#include <cstdint>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {
namespace {

constexpr int kThreads = 256;
// Lanes a row: rows of a few entries (3D stencils, coarse levels) keep most lanes busy, and a
// long row is still read in contiguous runs of 8.
constexpr int kLanes = 8;

int blocks_for(std::int64_t threads) {
  return static_cast<int>(std::min<std::int64_t>((threads + kThreads - 1) / kThreads, 1 << 20));
}

__global__ void row_offsets_kernel(const std::int64_t* __restrict__ local, const std::int64_t* __restrict__ nonlocal,
                                   std::int64_t n, std::int64_t* __restrict__ out) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; r <= n; r += stride)
    out[r] = local[r] + nonlocal[r];
}

// Copies `count` entries of one block's row from `from` to `to`, adding `shift` to the columns.
// Tagged: each value is instead its source's index in [local | non-local], `first_index` + k.
template <bool Tagged>
__device__ void copy_entries(const std::int32_t* __restrict__ from_col, const double* __restrict__ from_val,
                             std::int64_t count, std::int32_t shift, std::int64_t first_index, int lane,
                             std::int32_t* __restrict__ to_col, double* __restrict__ to_val) {
  for (std::int64_t k = lane; k < count; k += kLanes) {
    to_col[k] = from_col[k] + shift;
    to_val[k] = Tagged ? static_cast<double>(first_index + k) : from_val[k];
  }
}

template <bool Tagged>
__global__ void entries_kernel(const std::int64_t* __restrict__ l_ptr, const std::int32_t* __restrict__ l_col,
                               const double* __restrict__ l_val, const std::int64_t* __restrict__ n_ptr,
                               const std::int32_t* __restrict__ n_col, const double* __restrict__ n_val,
                               std::int64_t rows, std::int32_t shift, std::int64_t local_nnz,
                               std::int32_t* __restrict__ col, double* __restrict__ val) {
  const int lane = threadIdx.x % kLanes;
  const std::int64_t groups = std::int64_t(gridDim.x) * (blockDim.x / kLanes);
  for (std::int64_t r = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / kLanes; r < rows; r += groups) {
    const std::int64_t local_begin = l_ptr[r], local_count = l_ptr[r + 1] - local_begin;
    const std::int64_t nonlocal_begin = n_ptr[r], nonlocal_count = n_ptr[r + 1] - nonlocal_begin;
    const std::int64_t out = local_begin + nonlocal_begin;  // the row's start in the result
    copy_entries<Tagged>(l_col + local_begin, l_val + local_begin, local_count, 0, local_begin, lane, col + out,
                         val + out);
    copy_entries<Tagged>(n_col + nonlocal_begin, n_val + nonlocal_begin, nonlocal_count, shift,
                         local_nnz + nonlocal_begin, lane, col + out + local_count, val + out + local_count);
  }
}

template <bool Tagged>
void fill(const DeviceDistMatrix& a, tessera::cuda::DeviceCsr<double>& ext, cudaStream_t stream) {
  const tessera::cuda::DeviceCsr<double>&local = a.local, &nonlocal = a.nonlocal;
  TESSERA_ASSERT(local.rows == nonlocal.rows, "extended_block: blocks of ", local.rows, " and ", nonlocal.rows, " rows");
  TESSERA_ASSERT(local.cols + nonlocal.cols <= INT32_MAX, "extended_block: ", local.cols, " + ", nonlocal.cols,
                 " columns exceed the int32 index");  // assemble refuses such matrices
  ext.rows = local.rows;
  ext.cols = local.cols + nonlocal.cols;
  ext.nnz = local.nnz + nonlocal.nnz;
  const auto resize = [stream](auto& buffer, std::int64_t n) {
    if (buffer.size() != static_cast<std::size_t>(n)) buffer.allocate(static_cast<std::size_t>(n), stream);
  };
  resize(ext.row_ptr, ext.rows + 1);
  resize(ext.col_idx, ext.nnz);
  resize(ext.values, ext.nnz);
  row_offsets_kernel<<<blocks_for(ext.rows + 1), kThreads, 0, stream>>>(local.row_ptr.data(), nonlocal.row_ptr.data(),
                                                                        ext.rows, ext.row_ptr.data());
  TESSERA_CUDA_CHECK(cudaGetLastError());
  if (ext.nnz > 0) {
    entries_kernel<Tagged><<<blocks_for(ext.rows * kLanes), kThreads, 0, stream>>>(
        local.row_ptr.data(), local.col_idx.data(), local.values.data(), nonlocal.row_ptr.data(),
        nonlocal.col_idx.data(), nonlocal.values.data(), ext.rows, static_cast<std::int32_t>(local.cols), local.nnz,
        ext.col_idx.data(), ext.values.data());
    TESSERA_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

void fill_extended_block(const DeviceDistMatrix& a, tessera::cuda::DeviceCsr<double>& ext, cudaStream_t stream) {
  fill<false>(a, ext, stream);
}

tessera::cuda::DeviceCsr<double> extended_block(const DeviceDistMatrix& a, cudaStream_t stream) {
  tessera::cuda::DeviceCsr<double> ext;
  fill<false>(a, ext, stream);
  return ext;
}

tessera::cuda::DeviceCsr<double> tagged_extended_block(const DeviceDistMatrix& a, cudaStream_t stream) {
  tessera::cuda::DeviceCsr<double> ext;
  fill<true>(a, ext, stream);
  return ext;
}

}  // namespace tessera::dist::gpu
