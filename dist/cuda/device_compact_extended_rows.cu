#include "dist/cuda/device_compact_extended_rows.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dist/remote_rows.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/host_copy.hpp"
#include "local/cuda/index_kernels.cuh"

namespace tessera::dist::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;

constexpr int kThreads = 256;

int blocks_for(std::int64_t threads) { return static_cast<int>((threads + kThreads - 1) / kThreads); }

/// Compact index of `column`, which the increasing `global` holds.
__device__ std::int32_t compact_index(const std::int64_t* __restrict__ global, std::int64_t n, std::int64_t column) {
  return static_cast<std::int32_t>(tessera::cuda::lower_bound_index(global, n, column));
}

struct Blocks {
  const std::int64_t *local_ptr, *nonlocal_ptr;
  const std::int32_t *local_col, *nonlocal_col;
  const double *local_val, *nonlocal_val;
};

/// Owned row r of B_ext, one thread a row (P's rows hold a few entries): in global column order,
/// the ghosts left of the owned range (ghost indices below `left_ghosts`), the owned entries,
/// the other ghosts, as dist::for_each_in_row_order walks them. Thread `rows` writes the last
/// offset.
__global__ void owned_rows_kernel(std::int64_t rows, Blocks b, std::int32_t left_ghosts,
                                  const std::int32_t* __restrict__ of_owned, const std::int32_t* __restrict__ of_ghost,
                                  std::int64_t* __restrict__ out_ptr, std::int32_t* __restrict__ out_col,
                                  double* __restrict__ out_val) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (r > rows) return;
  std::int64_t at = b.local_ptr[r] + b.nonlocal_ptr[r];
  out_ptr[r] = at;
  if (r == rows) return;
  std::int64_t k = b.nonlocal_ptr[r];
  const std::int64_t nonlocal_end = b.nonlocal_ptr[r + 1];
  for (; k < nonlocal_end && b.nonlocal_col[k] < left_ghosts; ++k, ++at) {
    out_col[at] = of_ghost[b.nonlocal_col[k]];
    out_val[at] = b.nonlocal_val[k];
  }
  for (std::int64_t j = b.local_ptr[r]; j < b.local_ptr[r + 1]; ++j, ++at) {
    out_col[at] = of_owned[b.local_col[j]];
    out_val[at] = b.local_val[j];
  }
  for (; k < nonlocal_end; ++k, ++at) {
    out_col[at] = of_ghost[b.nonlocal_col[k]];
    out_val[at] = b.nonlocal_val[k];
  }
}

/// Compact indices of global columns (B's ghosts, the received rows' columns).
__global__ void compact_columns_kernel(std::int64_t count, const std::int64_t* __restrict__ columns,
                                       const std::int64_t* __restrict__ global, std::int64_t n,
                                       std::int32_t* __restrict__ out) {
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k < count) out[k] = compact_index(global, n, columns[k]);
}

void compact_columns(const std::vector<std::int64_t>& columns, const DeviceBuffer<std::int64_t>& global,
                     std::int32_t* out, cudaStream_t stream) {
  if (columns.empty()) return;
  DeviceBuffer<std::int64_t> columns_d;
  columns_d.upload(columns, stream);
  const auto count = static_cast<std::int64_t>(columns.size());
  compact_columns_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, columns_d.data(), global.data(),
                                                                     static_cast<std::int64_t>(global.size()), out);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // before columns_d goes
}

}  // namespace

DeviceCsr<double> compact_extended_rows(const DeviceCsr<double>& local, const DeviceCsr<double>& nonlocal,
                                        const ExtendedBSource& source, cudaStream_t stream) {
  const DistMatrix& b = source.b;
  const RemoteRows& remote = source.remote;
  const std::vector<std::int64_t>& global = source.compact_to_global;
  const std::int64_t rows = b.owned_rows(), owned_entries = b.nnz();
  TESSERA_ASSERT(local.rows == rows && nonlocal.rows == rows && local.nnz == b.local.nnz() &&
                     nonlocal.nnz == b.nonlocal.nnz() && local.cols == b.local.cols &&
                     nonlocal.cols == static_cast<std::int64_t>(b.ghost_cols.size()),
                 "compact_extended_rows: the device blocks (", local.nnz, " + ", nonlocal.nnz,
                 " entries) are not B's (", b.local.nnz(), " + ", b.nonlocal.nnz(), ")");
  DeviceCsr<double> ext;
  ext.rows = rows + remote.rows();
  ext.cols = static_cast<std::int64_t>(global.size());
  ext.nnz = owned_entries + static_cast<std::int64_t>(remote.cols().size());
  ext.row_ptr.allocate(static_cast<std::size_t>(ext.rows + 1), stream);
  ext.col_idx.allocate(static_cast<std::size_t>(ext.nnz), stream);
  ext.values.allocate(static_cast<std::size_t>(ext.nnz), stream);

  // Compact indices: owned columns by a table (the owned range is contiguous in `global`),
  // ghosts and received columns by a search of `global` on the device.
  std::vector<std::int32_t> of_owned(static_cast<std::size_t>(b.local.cols), -1);
  const std::int64_t begin = b.col_begin(), end = begin + b.local.cols;
  for (std::size_t i = 0; i < global.size(); ++i)
    if (global[i] >= begin && global[i] < end) of_owned[global[i] - begin] = static_cast<std::int32_t>(i);
  DeviceBuffer<std::int64_t> global_d;
  global_d.upload(global, stream);
  DeviceBuffer<std::int32_t> of_owned_d, of_ghost_d(b.ghost_cols.size(), stream);
  of_owned_d.upload(of_owned, stream);
  compact_columns(b.ghost_cols, global_d, of_ghost_d.data(), stream);
  const auto left_ghosts = static_cast<std::int32_t>(
      std::lower_bound(b.ghost_cols.begin(), b.ghost_cols.end(), begin) - b.ghost_cols.begin());

  const Blocks blocks{local.row_ptr.data(), nonlocal.row_ptr.data(), local.col_idx.data(),
                      nonlocal.col_idx.data(), local.values.data(),  nonlocal.values.data()};
  owned_rows_kernel<<<blocks_for(rows + 1), kThreads, 0, stream>>>(rows, blocks, left_ghosts, of_owned_d.data(),
                                                                   of_ghost_d.data(), ext.row_ptr.data(),
                                                                   ext.col_idx.data(), ext.values.data());
  TESSERA_CUDA_CHECK(cudaGetLastError());

  // The received rows after B's: offsets past B's entries, columns searched, values as received.
  if (remote.rows() > 0) {
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(remote.rows()));
    for (std::int64_t r = 0; r < remote.rows(); ++r) offsets[r] = owned_entries + remote.row_ptr()[r + 1];
    tessera::cuda::copy_to_device(ext.row_ptr.data() + rows + 1, offsets.data(), offsets.size() * sizeof(std::int64_t),
                                  stream);
    compact_columns(remote.cols(), global_d, ext.col_idx.data() + owned_entries, stream);
    if (!remote.values().empty())
      tessera::cuda::copy_to_device(ext.values.data() + owned_entries, remote.values().data(),
                                    remote.values().size() * sizeof(double), stream);
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the tables go, and ready for any stream
  return ext;
}

}  // namespace tessera::dist::gpu
