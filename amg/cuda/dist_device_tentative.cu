// The distributed tentative prolongator's QR on the rank's GPU (dist_device_tentative.hpp).
// Host work is what the exchanges need (the members and Q rows of aggregates that straddle
// ranks: few) and P_tent's assembly from the downloaded rows; the grouping by aggregate and the
// per-aggregate QR, a bucketing and a factorization of every owned dof, run on the device. P_tent's
// blocks stay there too (DistTentative::held_p): the local block is the device's rows of the
// rank's own dofs, the non-local one the returned rows (their entries uploaded, their offsets
// made there).
#include "amg/cuda/dist_device_tentative.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "amg/cuda/device_setup_phases.hpp"
#include "amg/cuda/dist_node_offsets.hpp"
#include "amg/cuda/listed_row_offsets.hpp"
#include "amg/cuda/setup_phase_kernels.cuh"
#include "amg/dist/dist_tentative_steps.hpp"
#include "dist/collective_call.hpp"
#include "dist/cuda/device_held_operand.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::amg::gpu {
namespace {

using detail::kBlock;
using detail::thread_index;
using tessera::cuda::copy_to_device;
using tessera::cuda::copy_to_host;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::grid_for;

/// Node offsets of the combined list: `low` one-dof nodes, the rank's `nodes` nodes (fine_ptr),
/// then `high` one-dof nodes.
__global__ void combined_node_ptr(const std::int64_t* fine_ptr, std::int64_t nodes, std::int64_t low,
                                  std::int64_t high, std::int64_t* out) {
  const std::int64_t i = thread_index();
  if (i > low + nodes + high) return;
  if (i <= low)
    out[i] = i;
  else if (i <= low + nodes)
    out[i] = low + fine_ptr[i - low];
  else
    out[i] = low + fine_ptr[nodes] + (i - low - nodes);
}

/// The rank's aggregate (numbered from 0) of each owned node, or -1 where another rank owns
/// it or none does (kNotAggregated): those rows stay empty here.
__global__ void owned_aggregate_ids(const std::int64_t* global_ids, std::int64_t n, std::int64_t first,
                                    std::int64_t count, std::int32_t* out) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const std::int64_t x = global_ids[i] - first;
  out[i] = global_ids[i] >= first && x < count ? static_cast<std::int32_t>(x) : -1;
}

/// The kernel's input: every owned node, with the received members as one-dof nodes around
/// them in global dof order, and their near-null rows.
struct CombinedNodes {
  std::int64_t low = 0, high = 0;  // received members before and after the owned dofs
  DeviceBuffer<std::int64_t> node_ptr;
  DeviceAggregates aggregates;
  DeviceBuffer<double> b;
};

CombinedNodes combine(const DistAggregates& agg, std::int64_t first_aggregate, const DistNodes& fine,
                      std::int64_t row_begin, const DenseMatrix& b, const RoutedMembers& routed, cudaStream_t s) {
  const std::vector<AggregateMember>& members = routed.members;
  const std::int64_t nodes = fine.count(), dofs = b.rows, k = b.cols;
  CombinedNodes c;
  c.low = std::partition_point(members.begin(), members.end(),
                               [&](const AggregateMember& m) { return m.dof < row_begin; }) -
          members.begin();
  c.high = static_cast<std::int64_t>(members.size()) - c.low;
  const std::int64_t total_nodes = c.low + nodes + c.high;
  const std::int64_t owned_aggregates = static_cast<std::int64_t>(agg.roots.size());

  const DeviceBuffer<std::int64_t> fine_ptr = device_node_offsets(fine, s);
  c.node_ptr.allocate(total_nodes + 1, s);
  combined_node_ptr<<<grid_for(total_nodes + 1, kBlock), kBlock, 0, s>>>(fine_ptr.data(), nodes, c.low, c.high,
                                                                        c.node_ptr.data());
  TESSERA_CHECK_LAUNCH();

  // Received members belong to this rank's aggregates (that is why they were sent).
  std::vector<std::int32_t> received_ids(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::int64_t x = members[i].aggregate - first_aggregate;
    TESSERA_ASSERT(x >= 0 && x < owned_aggregates, "AMG: a member of aggregate ", members[i].aggregate,
                   " reached a rank that does not own it");
    received_ids[i] = static_cast<std::int32_t>(x);
  }
  c.aggregates.count = owned_aggregates;
  c.aggregates.of_node.allocate(total_nodes, s);
  std::int32_t* ids = c.aggregates.of_node.data();
  if (c.low > 0) copy_to_device(ids, received_ids.data(), c.low * sizeof(std::int32_t), s);
  if (c.high > 0)
    copy_to_device(ids + c.low + nodes, received_ids.data() + c.low, c.high * sizeof(std::int32_t), s);
  DeviceBuffer<std::int64_t> global_ids;
  global_ids.upload(agg.of_node, s);
  if (nodes > 0) {
    owned_aggregate_ids<<<grid_for(nodes, kBlock), kBlock, 0, s>>>(global_ids.data(), nodes, first_aggregate,
                                                                  owned_aggregates, ids + c.low);
    TESSERA_CHECK_LAUNCH();
  }

  c.b.allocate((c.low + dofs + c.high) * k, s);
  const std::size_t row_bytes = static_cast<std::size_t>(k) * sizeof(double);
  if (c.low > 0) copy_to_device(c.b.data(), routed.rows.data(), c.low * row_bytes, s);
  if (dofs > 0) copy_to_device(c.b.data() + c.low * k, b.data.data(), dofs * row_bytes, s);
  if (c.high > 0) copy_to_device(c.b.data() + (c.low + dofs) * k, routed.rows.data() + c.low * k, c.high * row_bytes, s);
  // The uploads' device sources (fine_ptr, global_ids) are freed on `s`, after the kernels.
  return c;
}

/// dst[i] = src[i] - src[0] for i < n: a row range's offsets, its first row starting at 0.
__global__ void rebase_offsets(const std::int64_t* src, std::int64_t n, std::int64_t* dst) {
  const std::int64_t i = thread_index();
  if (i < n) dst[i] = src[i] - src[0];
}

/// Rows [first, last) of the device P as a DeviceCsr over `cols`, kept on the device: the rows
/// download_rows gives the host. All of P is moved, not copied (one rank: no received dofs).
tessera::cuda::DeviceCsr<double> device_rows(tessera::cuda::DeviceCsr<double>&& p, std::int64_t first,
                                             std::int64_t last, std::int64_t cols, cudaStream_t s) {
  if (first == 0 && last == p.rows) {
    p.cols = cols;
    return std::move(p);
  }
  tessera::cuda::DeviceCsr<double> out;
  out.rows = last - first;
  out.cols = cols;
  out.row_ptr.allocate(static_cast<std::size_t>(out.rows) + 1, s);
  rebase_offsets<<<grid_for(out.rows + 1, kBlock), kBlock, 0, s>>>(p.row_ptr.data() + first, out.rows + 1,
                                                                     out.row_ptr.data());
  TESSERA_CHECK_LAUNCH();
  const std::int64_t base = tessera::cuda::read_scalar(p.row_ptr.data() + first, s);
  out.nnz = tessera::cuda::read_scalar(p.row_ptr.data() + last, s) - base;
  out.col_idx.allocate(static_cast<std::size_t>(out.nnz), s);
  out.values.allocate(static_cast<std::size_t>(out.nnz), s);
  if (out.nnz > 0) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(out.col_idx.data(), p.col_idx.data() + base, out.col_idx.bytes(),
                                       cudaMemcpyDeviceToDevice, s));
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(out.values.data(), p.values.data() + base, out.values.bytes(),
                                       cudaMemcpyDeviceToDevice, s));
  }
  return out;
}

/// The non-local block on the device: its entries (the returned rows: few) uploaded, its offsets
/// made there from the rows that hold them (`listed`, which tentative_blocks gave).
tessera::cuda::DeviceCsr<double> device_nonlocal_block(const Csr<double>& block, const ListedRows& listed,
                                                       cudaStream_t s) {
  TESSERA_ASSERT(listed.ptr.size() == listed.rows.size() + 1 && listed.ptr.back() == block.nnz(), "AMG: ",
                 listed.rows.size(), " listed rows holding ", listed.ptr.back(), " entries for a non-local block of ",
                 block.nnz());
  tessera::cuda::DeviceCsr<double> out;
  out.rows = block.rows;
  out.cols = block.cols;
  out.nnz = block.nnz();
  out.row_ptr = listed_row_offsets(listed.rows, listed.ptr, block.rows, s);
  out.col_idx.upload(block.col_idx, s);
  out.values.upload(block.values, s);
  return out;
}

/// P_tent's blocks on the device: the local one from the QR's own rows (`own`), the non-local one
/// from the host's (device_nonlocal_block).
std::shared_ptr<dist::HeldOperand> held_blocks(tessera::cuda::DeviceCsr<double>&& own, const dist::DistMatrix& p,
                                               const ListedRows& nonlocal_rows, cudaStream_t s) {
  auto held = std::make_shared<dist::gpu::DeviceHeldOperand>();
  TESSERA_CUDA_CHECK(cudaGetDevice(&held->device));
  TESSERA_ASSERT(own.rows == p.local.rows && own.cols == p.local.cols && own.nnz == p.local.nnz(),
                 "AMG: the device QR's own rows are ", own.rows, "x", own.cols, " with ", own.nnz,
                 " entries; P_tent's local block is ", p.local.rows, "x", p.local.cols, " with ", p.local.nnz());
  held->local = std::move(own);
  held->nonlocal = device_nonlocal_block(p.nonlocal, nonlocal_rows, s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // ready on any stream, as DeviceHeldOperand says
  return held;
}

/// Rows [first, last) of the device P (their entries too), downloaded as a Csr over `cols`.
Csr<double> download_rows(const tessera::cuda::DeviceCsr<double>& p, std::int64_t first, std::int64_t last,
                          std::int64_t cols, cudaStream_t s) {
  Csr<double> out;
  out.rows = last - first;
  out.cols = cols;
  out.row_ptr.resize(static_cast<std::size_t>(out.rows) + 1);
  copy_to_host(out.row_ptr.data(), p.row_ptr.data() + first, out.row_ptr.size() * sizeof(std::int64_t), s);
  const std::int64_t base = out.row_ptr[0], entries = out.row_ptr[out.rows] - base;
  out.col_idx.resize(static_cast<std::size_t>(entries));
  out.values.resize(out.col_idx.size());
  if (entries > 0) {
    copy_to_host(out.col_idx.data(), p.col_idx.data() + base, entries * sizeof(std::int32_t), s);
    copy_to_host(out.values.data(), p.values.data() + base, entries * sizeof(double), s);
  }
  if (base != 0)
    host::for_ranges(out.rows + 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) out.row_ptr[i] -= base;
    });
  return out;
}

/// Q rows of the received members (`rows`, their first in `members` at `first_member`), back to
/// the members' owners: columns in global coarse numbering, k values each.
void address_q_rows(const Csr<double>& rows, const std::vector<AggregateMember>& members, std::int64_t first_member,
                    std::int64_t coarse_begin, const dist::RowPartition& row_partition, int k, QRowsByRank& to) {
  std::vector<double> q(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < rows.rows; ++i) {
    const std::int64_t start = rows.row_ptr[i], count = rows.row_length(i);
    TESSERA_ASSERT(count > 0, "AMG: the device QR left the row of received dof ", members[first_member + i].dof,
                   " empty");
    std::fill(q.begin(), q.end(), 0.0);
    std::copy(rows.values.begin() + start, rows.values.begin() + start + count, q.begin());
    const std::int64_t dof = members[first_member + i].dof;
    to.add(row_partition.owner(dof), {dof, coarse_begin + rows.col_idx[start], count}, q.data());
  }
}

}  // namespace

DistTentative dist_device_tentative_prolongator(const dist::Communicator& comm, const DistAggregates& agg,
                                                const DistNodes& fine, const dist::DistMatrix& a,
                                                const DenseMatrix& b, cudaStream_t s) {
  const int k = static_cast<int>(b.cols);
  check_tentative_input(comm, fine, a, b);
  const std::int64_t owned_dofs = a.owned_rows(), first_aggregate = agg.partition.begin(comm.rank());
  std::optional<trace::Step> step(std::in_place, "send_members");
  const RoutedMembers routed = route_members(comm, agg, fine, a.row_begin(), b);

  step.emplace("device_qr");
  struct Factored {
    std::int64_t low = 0, high = 0;
    std::vector<std::int64_t> coarse_nodes;  // the coarse node layout (aggregates' first coarse dofs)
    Csr<double> own, low_rows, high_rows;     // P's rows: owned dofs, then received ones
    std::vector<double> coarse_vectors;      // row-major, k a coarse dof
    tessera::cuda::DeviceCsr<double> device_own;  // `own`, left on the device
  };
  // A device failure (out of memory, say) on one rank is an error on every rank, not a hang in
  // the exchanges after it.
  Factored f = dist::call_collectively(comm, "distributed device tentative prolongator", [&] {
    CombinedNodes c = combine(agg, first_aggregate, fine, a.row_begin(), b, routed, s);
    const std::int64_t rows = c.low + owned_dofs + c.high;
    DeviceTentativeProlongator t = device_tentative_prolongator(
        c.aggregates, c.node_ptr.data(), static_cast<std::int64_t>(c.aggregates.of_node.size()), rows, c.b.data(), k, s);
    Factored out;
    out.low = c.low;
    out.high = c.high;
    out.coarse_nodes = t.coarse_nodes.download(s);
    out.own = download_rows(t.p, c.low, c.low + owned_dofs, t.coarse_dofs, s);
    out.low_rows = download_rows(t.p, 0, c.low, t.coarse_dofs, s);
    out.high_rows = download_rows(t.p, c.low + owned_dofs, rows, t.coarse_dofs, s);
    out.coarse_vectors = t.coarse_vectors.download(s);
    out.device_own = device_rows(std::move(t.p), c.low, c.low + owned_dofs, t.coarse_dofs, s);
    return out;
  });

  step.emplace("coarse_numbering");
  std::vector<std::int64_t> sizes(f.coarse_nodes.size() - 1);
  for (std::size_t x = 0; x < sizes.size(); ++x) sizes[x] = f.coarse_nodes[x + 1] - f.coarse_nodes[x];
  CoarseNumbering coarse = number_coarse_dofs(comm, sizes);
  DistTentative out;
  out.coarse_vectors.rows = coarse.nodes.ptr.back();
  out.coarse_vectors.cols = k;
  out.coarse_vectors.layout = Layout::row_major;
  out.coarse_vectors.data = std::move(f.coarse_vectors);

  step.emplace("return_q");
  QRowsByRank q_to(comm.size(), k);
  const std::int64_t coarse_begin = coarse.rows.begin(comm.rank());
  address_q_rows(f.low_rows, routed.members, 0, coarse_begin, a.row_partition, k, q_to);
  address_q_rows(f.high_rows, routed.members, f.low, coarse_begin, a.row_partition, k, q_to);
  const ReturnedQRows returned = return_q_rows(comm, q_to);

  step.emplace("assemble");
  ListedRows nonlocal_rows;
  out.p = tentative_blocks(comm, std::move(f.own), returned, k, a.row_partition, coarse.rows, &nonlocal_rows);
  out.coarse_nodes = std::move(coarse.nodes);
  step.emplace("keep_blocks");
  out.held_p = dist::call_collectively(comm, "distributed device tentative prolongator: its blocks kept",
                                       [&] { return held_blocks(std::move(f.device_own), out.p, nonlocal_rows, s); });
  return out;
}

DistTentativeBuilder device_tentative(cudaStream_t s) {
  return [s](const dist::Communicator& comm, const DistAggregates& agg, const DistNodes& fine,
             const dist::DistMatrix& a, const DenseMatrix& b) {
    return dist_device_tentative_prolongator(comm, agg, fine, a, b, s);
  };
}

}  // namespace tessera::amg::gpu
