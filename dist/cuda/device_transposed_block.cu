// ref::transpose(extended_block(P)) on the device (device_transposed_block.hpp).
#include "dist/cuda/device_transposed_block.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/index_kernels.cuh"

namespace tessera::dist::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;
using tessera::cuda::grid_for;

constexpr int kThreads = 256;

/// Each entry's extended column (the sort key) and row, entries numbered [local | non-local];
/// one thread a row (P's rows hold a few entries).
__global__ void keys_and_rows(std::int64_t rows, const std::int64_t* local_ptr, const std::int32_t* local_col,
                              const std::int64_t* nonlocal_ptr, const std::int32_t* nonlocal_col,
                              std::int64_t local_entries, std::int32_t shift, std::int32_t* key, std::int32_t* row_of) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  for (std::int64_t k = local_ptr[i]; k < local_ptr[i + 1]; ++k) key[k] = local_col[k], row_of[k] = std::int32_t(i);
  for (std::int64_t k = nonlocal_ptr[i]; k < nonlocal_ptr[i + 1]; ++k)
    key[local_entries + k] = shift + nonlocal_col[k], row_of[local_entries + k] = std::int32_t(i);
}

/// Entry k of P^T: the row and value of P's entry source[k].
__global__ void gather_entries(std::int64_t n, const std::int64_t* source, const std::int32_t* row_of,
                               const double* local_val, const double* nonlocal_val, std::int64_t local_entries,
                               std::int32_t* col, double* val) {
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const std::int64_t s = source[k];
  col[k] = row_of[s];
  val[k] = s < local_entries ? local_val[s] : nonlocal_val[s - local_entries];
}

}  // namespace

DeviceCsr<double> transposed_extended_block(const DeviceCsr<double>& local, const DeviceCsr<double>& nonlocal,
                                            cudaStream_t s) {
  TESSERA_ASSERT(local.rows == nonlocal.rows, "P's blocks have ", local.rows, " and ", nonlocal.rows, " rows");
  const std::int64_t rows = local.rows, columns = local.cols + nonlocal.cols, n = local.nnz + nonlocal.nnz;
  TESSERA_ASSERT(rows <= INT32_MAX && columns <= INT32_MAX, "P^T on the device: ", rows, " rows and ", columns,
                 " columns of P beyond the int32 index");
  DeviceCsr<double> t;
  t.rows = columns, t.cols = rows, t.nnz = n;
  t.row_ptr.allocate(static_cast<std::size_t>(columns + 1), s);
  t.col_idx.allocate(static_cast<std::size_t>(n), s);
  t.values.allocate(static_cast<std::size_t>(n), s);
  if (n == 0) {
    t.row_ptr.fill_bytes(0, s);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    return t;
  }
  DeviceBuffer<std::int32_t> key(static_cast<std::size_t>(n), s), sorted_key(key.size(), s), row_of(key.size(), s);
  DeviceBuffer<std::int64_t> entry(static_cast<std::size_t>(n), s), source(entry.size(), s);
  keys_and_rows<<<grid_for(rows, kThreads), kThreads, 0, s>>>(rows, local.row_ptr.data(), local.col_idx.data(),
                                                              nonlocal.row_ptr.data(), nonlocal.col_idx.data(),
                                                              local.nnz, static_cast<std::int32_t>(local.cols),
                                                              key.data(), row_of.data());
  TESSERA_CHECK_LAUNCH();
  tessera::cuda::fill_iota(n, entry.data(), s);
  const int bits = tessera::cuda::significant_bits(static_cast<std::uint64_t>(std::max<std::int64_t>(columns - 1, 0)));
  tessera::cuda::cub_call(s, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, key.data(), sorted_key.data(), entry.data(), source.data(), n,
                                           0, bits, s);
  });
  tessera::cuda::segment_starts(sorted_key.data(), n, columns, std::int32_t{1}, t.row_ptr.data(), s);
  gather_entries<<<grid_for(n, kThreads), kThreads, 0, s>>>(n, source.data(), row_of.data(), local.values.data(),
                                                            nonlocal.values.data(), local.nnz, t.col_idx.data(),
                                                            t.values.data());
  TESSERA_CHECK_LAUNCH();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return t;
}

}  // namespace tessera::dist::gpu
