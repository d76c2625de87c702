// A distributed matrix gathered whole onto every rank's GPU (device_whole_matrix.hpp).
#include "dist/cuda/device_whole_matrix.hpp"

#include <climits>
#include <utility>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"  // grid_for

namespace tessera::dist::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::grid_for;

constexpr int kThreads = 256;

struct BlockView {
  const std::int64_t* row_ptr;
  const std::int32_t* col;
  const double* val;
};

/// Owned row i in global columns at its place in the whole matrix: the ghosts left of the owned
/// range, the owned columns, then the ghosts right of it (ghost columns are sorted, so this is
/// global column order), from entry `first_entry` (the entries of the ranks before) on. Its end
/// goes to row_end[i]; columns only where `col` is not null (a values-only refresh). One thread a
/// row: coarse rows hold tens of entries.
__global__ void own_rows_kernel(std::int64_t rows, BlockView local, BlockView nonlocal, const std::int64_t* ghosts,
                                std::int64_t col_begin, std::int64_t first_entry, std::int64_t* row_end,
                                std::int32_t* col, double* val) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  std::int64_t at = first_entry + local.row_ptr[i] + nonlocal.row_ptr[i];
  std::int64_t k = nonlocal.row_ptr[i];
  const std::int64_t nonlocal_end = nonlocal.row_ptr[i + 1];
  for (; k < nonlocal_end && ghosts[nonlocal.col[k]] < col_begin; ++k, ++at) {
    if (col) col[at] = static_cast<std::int32_t>(ghosts[nonlocal.col[k]]);
    val[at] = nonlocal.val[k];
  }
  for (std::int64_t j = local.row_ptr[i]; j < local.row_ptr[i + 1]; ++j, ++at) {
    if (col) col[at] = static_cast<std::int32_t>(col_begin + local.col[j]);
    val[at] = local.val[j];
  }
  for (; k < nonlocal_end; ++k, ++at) {
    if (col) col[at] = static_cast<std::int32_t>(ghosts[nonlocal.col[k]]);
    val[at] = nonlocal.val[k];
  }
  if (row_end) row_end[i] = at;
}

}  // namespace

WholeMatrixGather::WholeMatrixGather(const Communicator& comm, const DeviceDistMatrix& a) : a_(a) {
  TESSERA_ASSERT(a.host, "WholeMatrixGather: the device matrix has no host matrix");
  const DistMatrix& host = *a.host;
  TESSERA_REQUIRE_INPUT(host.global_cols() <= INT32_MAX, "gathering a matrix whole: ", host.global_cols(),
                        " columns exceed the 32-bit columns of one GPU's matrix");
  const RowPartition& rows = host.row_partition;
  for (int r = 0; r < rows.num_ranks(); ++r) row_offsets_.push_back(rows.begin(r));
  row_offsets_.push_back(rows.global_rows());
  entry_offsets_.push_back(0);
  for (const std::int64_t count : comm.allgather(a.local.nnz + a.nonlocal.nnz))
    entry_offsets_.push_back(entry_offsets_.back() + count);
}

void WholeMatrixGather::write_rows(DeviceContext& ctx, std::int32_t* col, double* val, std::int64_t* row_end) const {
  const std::int64_t rows = a_.owned_rows();
  if (rows == 0) return;
  const cudaStream_t stream = ctx.compute();
  const DistMatrix& host = *a_.host;
  DeviceBuffer<std::int64_t> ghosts;
  ghosts.upload(host.ghost_cols, stream);  // freed on `stream`, after the kernel
  own_rows_kernel<<<grid_for(rows, kThreads), kThreads, 0, stream>>>(
      rows, {a_.local.row_ptr.data(), a_.local.col_idx.data(), a_.local.values.data()},
      {a_.nonlocal.row_ptr.data(), a_.nonlocal.col_idx.data(), a_.nonlocal.values.data()}, ghosts.data(),
      host.col_begin(), entry_offsets_[ctx.comm().rank()], row_end, col, val);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

void WholeMatrixGather::prepare(DeviceContext& ctx) {
  const cudaStream_t stream = ctx.compute();
  whole_.rows = a_.host->global_rows();
  whole_.cols = a_.host->global_cols();
  whole_.nnz = entry_offsets_.back();
  whole_.row_ptr.allocate(static_cast<std::size_t>(whole_.rows) + 1, stream);
  whole_.col_idx.allocate(static_cast<std::size_t>(whole_.nnz), stream);
  whole_.values.allocate(static_cast<std::size_t>(whole_.nnz), stream);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(whole_.row_ptr.data(), 0, sizeof(std::int64_t), stream));
  write_rows(ctx, whole_.col_idx.data(), whole_.values.data(),
             whole_.row_ptr.data() + 1 + row_offsets_[ctx.comm().rank()]);
}

tessera::cuda::DeviceCsr<double> WholeMatrixGather::finish(DeviceContext& ctx) {
  const int me = ctx.comm().rank();
  DeviceTransport& transport = ctx.transport();
  ctx.exchange_after_compute();  // the rank's rows, written on compute
  // In place: each rank's block is already at its place in the whole arrays.
  transport.allgatherv(whole_.row_ptr.data() + 1 + row_offsets_[me], whole_.row_ptr.data() + 1, row_offsets_);
  transport.allgatherv(whole_.col_idx.data() + entry_offsets_[me], whole_.col_idx.data(), entry_offsets_);
  transport.allgatherv(whole_.values.data() + entry_offsets_[me], whole_.values.data(), entry_offsets_);
  transport.finish_exchange();
  ctx.compute_after_exchange();
  return std::move(whole_);
}

void WholeMatrixGather::write_values(DeviceContext& ctx, tessera::cuda::DeviceCsr<double>& whole) const {
  TESSERA_REQUIRE_INPUT(whole.nnz == entry_offsets_.back() && whole.rows == a_.host->global_rows(),
                        "gathering a matrix's values whole: it now has ", entry_offsets_.back(), " entries in ",
                        a_.host->global_rows(), " rows, ", whole.nnz, " in ", whole.rows,
                        " when gathered: a new pattern needs a new gather");
  write_rows(ctx, nullptr, whole.values.data(), nullptr);
}

void WholeMatrixGather::gather_values(DeviceContext& ctx, tessera::cuda::DeviceCsr<double>& whole) const {
  ctx.exchange_after_compute();
  ctx.transport().allgatherv(whole.values.data() + entry_offsets_[ctx.comm().rank()], whole.values.data(),
                             entry_offsets_);
  ctx.transport().finish_exchange();
  ctx.compute_after_exchange();
}

tessera::cuda::DeviceCsr<double> gather_whole(DeviceContext& ctx, const DeviceDistMatrix& a) {
  WholeMatrixGather gather(ctx.comm(), a);
  call_collectively(ctx.comm(), "gathering a matrix whole on the GPUs", [&] { gather.prepare(ctx); });
  return gather.finish(ctx);
}

}  // namespace tessera::dist::gpu
