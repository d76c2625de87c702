#include "dist/cuda/device_summed_blocks.hpp"

#include <cstdint>
#include <vector>

#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/index_kernels.cuh"

namespace tessera::dist::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;

constexpr int kThreads = 256;

/// Index of `value` in the increasing `sorted` (n entries), or -1.
__device__ std::int64_t find(const std::int64_t* __restrict__ sorted, std::int64_t n, std::int64_t value) {
  const std::int64_t at = tessera::cuda::lower_bound_index(sorted, n, value);
  return at < n && sorted[at] == value ? at : -1;
}

/// T's column j as C's: its local column if C owns it (>= 0), else -(its ghost index + 1). A
/// column C's owned rows use is owned or one of C's ghosts; one they do not use (only T's rows
/// for other ranks do) gets what the search gives, and is never read.
__global__ void column_map_kernel(std::int64_t columns, const std::int64_t* __restrict__ global_of,
                                  std::int64_t owned_begin, std::int64_t owned_end,
                                  const std::int64_t* __restrict__ ghosts, std::int64_t ghost_count,
                                  std::int32_t* __restrict__ to_c) {
  const std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (j >= columns) return;
  const std::int64_t g = global_of[j];
  if (g >= owned_begin && g < owned_end) {
    to_c[j] = static_cast<std::int32_t>(g - owned_begin);
    return;
  }
  const std::int64_t at = find(ghosts, ghost_count, g);
  to_c[j] = -static_cast<std::int32_t>(at < 0 ? 0 : at) - 1;
}

struct Block {
  const std::int64_t* row_ptr;
  std::int32_t* col;
  double* val;
};

struct Merged {  // the rows that receive, with the host C's entries packed in row order
  const std::int64_t* rows;
  std::int64_t count;
  const std::int64_t *local_at, *nonlocal_at;  // each row's first packed entry
  const std::int32_t *local_col, *nonlocal_col;
  const double *local_val, *nonlocal_val;
};

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = kThreads / kWarp;

/// Row r of C, one warp a row (level 1 of a 3D Poisson problem holds about 33 entries a row): a
/// row that receives copies the host's packed entries; any other is T's row r, its entries in
/// order, owned columns to the local block and ghosts to the non-local one (both in increasing
/// global column, as the host splits it). Each 32 entries are placed by a ballot, so reads and
/// writes stay contiguous.
__global__ void fill_rows_kernel(std::int64_t rows, const std::int64_t* __restrict__ t_ptr,
                                 const std::int32_t* __restrict__ t_col, const double* __restrict__ t_val,
                                 const std::int32_t* __restrict__ to_c, Merged merged, Block local, Block nonlocal) {
  const std::int64_t r = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp;
  if (r >= rows) return;  // the whole warp: r is the warp's
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::int64_t local_begin = local.row_ptr[r], nonlocal_begin = nonlocal.row_ptr[r];
  const std::int64_t m = merged.count > 0 ? find(merged.rows, merged.count, r) : -1;
  if (m >= 0) {
    const std::int64_t local_count = local.row_ptr[r + 1] - local_begin;
    const std::int64_t nonlocal_count = nonlocal.row_ptr[r + 1] - nonlocal_begin;
    for (std::int64_t i = lane; i < local_count; i += kWarp) {
      local.col[local_begin + i] = merged.local_col[merged.local_at[m] + i];
      local.val[local_begin + i] = merged.local_val[merged.local_at[m] + i];
    }
    for (std::int64_t i = lane; i < nonlocal_count; i += kWarp) {
      nonlocal.col[nonlocal_begin + i] = merged.nonlocal_col[merged.nonlocal_at[m] + i];
      nonlocal.val[nonlocal_begin + i] = merged.nonlocal_val[merged.nonlocal_at[m] + i];
    }
    return;
  }
  const unsigned below = (1u << lane) - 1u;
  std::int64_t at_local = local_begin, at_nonlocal = nonlocal_begin;
  for (std::int64_t base = t_ptr[r]; base < t_ptr[r + 1]; base += kWarp) {
    const std::int64_t k = base + lane;
    const bool active = k < t_ptr[r + 1];
    const std::int32_t c = active ? to_c[t_col[k]] : 0;
    const unsigned owned = __ballot_sync(0xffffffffu, active && c >= 0);
    const unsigned ghost = __ballot_sync(0xffffffffu, active && c < 0);
    if (active && c >= 0) {
      const std::int64_t at = at_local + __popc(owned & below);
      local.col[at] = c;
      local.val[at] = t_val[k];
    } else if (active) {
      const std::int64_t at = at_nonlocal + __popc(ghost & below);
      nonlocal.col[at] = -c - 1;
      nonlocal.val[at] = t_val[k];
    }
    at_local += __popc(owned);
    at_nonlocal += __popc(ghost);
  }
}

/// `block`'s arrays for C's shape, its offsets uploaded from the host's.
DeviceCsr<double> allocated_like(const Csr<double>& block, cudaStream_t stream) {
  DeviceCsr<double> d;
  d.rows = block.rows;
  d.cols = block.cols;
  d.nnz = block.nnz();
  d.row_ptr.upload(block.row_ptr, stream);
  d.col_idx.allocate(static_cast<std::size_t>(d.nnz), stream);
  d.values.allocate(static_cast<std::size_t>(d.nnz), stream);
  return d;
}

/// The host C's entries of the rows that receive, packed in row order, and each row's first.
struct PackedRows {
  std::vector<std::int64_t> at;
  std::vector<std::int32_t> col;
  std::vector<double> val;
};

PackedRows packed_rows(const Csr<double>& block, const std::vector<std::int64_t>& rows) {
  PackedRows p;
  p.at.reserve(rows.size());
  for (const std::int64_t r : rows) {
    p.at.push_back(static_cast<std::int64_t>(p.col.size()));
    p.col.insert(p.col.end(), block.col_idx.begin() + block.row_ptr[r], block.col_idx.begin() + block.row_ptr[r + 1]);
    p.val.insert(p.val.end(), block.values.begin() + block.row_ptr[r], block.values.begin() + block.row_ptr[r + 1]);
  }
  return p;
}

}  // namespace

std::pair<DeviceCsr<double>, DeviceCsr<double>> summed_blocks(const DeviceCsr<double>& t, const KeptOuterProduct& kept,
                                                              const DistMatrix& c, cudaStream_t stream) {
  TESSERA_TRACE_STEP("device_matrix.summed_blocks");
  const std::int64_t rows = c.owned_rows();
  TESSERA_ASSERT(t.rows >= rows && t.cols == static_cast<std::int64_t>(kept.global_of.size()),
                 "summed_blocks: T is ", t.rows, "x", t.cols, " for C's ", rows, " rows over ",
                 kept.global_of.size(), " columns");
  std::pair<DeviceCsr<double>, DeviceCsr<double>> out{allocated_like(c.local, stream),
                                                      allocated_like(c.nonlocal, stream)};
  if (rows == 0) {
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return out;
  }
  const auto columns = static_cast<std::int64_t>(kept.global_of.size());
  DeviceBuffer<std::int64_t> global_of, ghosts;
  global_of.upload(kept.global_of, stream);
  ghosts.upload(c.ghost_cols, stream);
  DeviceBuffer<std::int32_t> to_c(static_cast<std::size_t>(columns), stream);
  if (columns > 0) {
    const std::int64_t owned_begin = c.col_begin();
    column_map_kernel<<<tessera::cuda::grid_for(columns, kThreads), kThreads, 0, stream>>>(
        columns, global_of.data(), owned_begin, owned_begin + c.local.cols, ghosts.data(),
        static_cast<std::int64_t>(c.ghost_cols.size()), to_c.data());
    TESSERA_CUDA_CHECK(cudaGetLastError());
  }

  const std::vector<std::int64_t>& merged_rows = kept.merged_rows;
  const PackedRows packed_local = packed_rows(c.local, merged_rows);
  const PackedRows packed_nonlocal = packed_rows(c.nonlocal, merged_rows);
  DeviceBuffer<std::int64_t> merged_d, local_at, nonlocal_at;
  DeviceBuffer<std::int32_t> local_col, nonlocal_col;
  DeviceBuffer<double> local_val, nonlocal_val;
  merged_d.upload(merged_rows, stream);
  local_at.upload(packed_local.at, stream);
  nonlocal_at.upload(packed_nonlocal.at, stream);
  local_col.upload(packed_local.col, stream);
  nonlocal_col.upload(packed_nonlocal.col, stream);
  local_val.upload(packed_local.val, stream);
  nonlocal_val.upload(packed_nonlocal.val, stream);
  const Merged merged{merged_d.data(), static_cast<std::int64_t>(merged_rows.size()), local_at.data(),
                      nonlocal_at.data(), local_col.data(), nonlocal_col.data(), local_val.data(),
                      nonlocal_val.data()};
  DeviceCsr<double>& l = out.first;
  DeviceCsr<double>& n = out.second;
  fill_rows_kernel<<<static_cast<int>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0, stream>>>(
      rows, t.row_ptr.data(), t.col_idx.data(), t.values.data(), to_c.data(), merged,
      Block{l.row_ptr.data(), l.col_idx.data(), l.values.data()},
      Block{n.row_ptr.data(), n.col_idx.data(), n.values.data()});
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the tables go, and ready for any stream
  return out;
}

}  // namespace tessera::dist::gpu
