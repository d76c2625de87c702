// Host code only: gathers and uploads the replicated levels and drives their cycle.
#include "amg/cuda/replicated_levels.hpp"

#include <optional>

#include "amg/dist/dist_exchange.hpp"
#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {

std::size_t first_replicated_level(const dist::Communicator& comm, const DistHierarchy& h, std::int64_t max_nnz) {
  const std::size_t none = h.levels.size();
  if (max_nnz < 0) max_nnz = comm.size() > 1 ? kReplicateBelowNonzeros : 0;  // kReplicateByDefault
  if (max_nnz == 0 || h.options.cycle == CycleKind::w) return none;
  std::vector<std::int64_t> nnz;
  for (const DistLevel& level : h.levels) nnz.push_back(level.a.nnz());
  comm.allreduce_in_place(nnz, dist::ReduceOp::sum);
  for (std::size_t l = 1; l < h.levels.size(); ++l)
    if (nnz[l] <= max_nnz) return l;
  return none;
}

/// One level whole, as gathered on the host: P and R empty on the coarsest.
struct ReplicatedLevels::Gathered {
  Csr<double> a, p, r;
  Vector inv_diag;
  Smoother smoother;
  bool has_transfer = false;
};

ReplicatedLevels::Gathered ReplicatedLevels::gather(const dist::Communicator& comm, const DistHierarchy& h,
                                                    std::size_t l) {
  const DistLevel& host = h.levels[l];
  Gathered g;
  g.a = allgather_operator(comm, host.a);
  g.has_transfer = l + 1 < h.levels.size();
  if (g.has_transfer) g.p = allgather_operator(comm, host.p), g.r = allgather_operator(comm, host.r);
  // A level that is smoothed has an entry per owned row on every rank (DistDeviceAmgPreconditioner
  // checks before building this), so only a directly solved coarsest level can come out short.
  g.inv_diag = allgatherv(comm, host.smoother.inv_diag);
  g.smoother = coefficients_of(host.smoother);
  return g;
}

/// One level's values whole, each operator's in the order allgather_operator() puts its entries
/// (rank order, each row's entries by global column, dist::values_in_row_order): a re-setup
/// keeps every pattern, so only these move.
struct ReplicatedLevels::GatheredValues {
  std::vector<double> a, p, r, inv_diag;
  Smoother smoother;
};

ReplicatedLevels::GatheredValues ReplicatedLevels::gather_values(const dist::Communicator& comm,
                                                                 const DistHierarchy& h, std::size_t l) {
  const DistLevel& host = h.levels[l];
  GatheredValues g;
  g.a = allgatherv(comm, dist::values_in_row_order(host.a));
  if (l + 1 < h.levels.size()) {
    g.p = allgatherv(comm, dist::values_in_row_order(host.p));
    g.r = allgatherv(comm, dist::values_in_row_order(host.r));
  }
  g.inv_diag = allgatherv(comm, host.smoother.inv_diag);
  g.smoother = coefficients_of(host.smoother);
  return g;
}

ReplicatedLevels::ReplicatedLevels(dist::gpu::DeviceContext& ctx, const DistHierarchy& h, std::size_t first,
                                   DeviceCoarseSolve coarse)
    : ctx_(ctx), first_(first) {
  TESSERA_REQUIRE_INPUT(first >= 1 && first < h.levels.size(), "replicated AMG levels: level ", first,
                        " is not a coarse level of a ", h.levels.size(), "-level hierarchy");
  const dist::Communicator& comm = ctx.comm();
  const cudaStream_t stream = ctx.compute();
  const std::size_t count = h.levels.size() - first;
  // Gathers first (every rank the same collectives); what follows can fail on one rank alone
  // (out of device memory), which call_collectively turns into the same error everywhere.
  std::optional<trace::Step> step(std::in_place, "gather");
  std::vector<Gathered> gathered;
  for (std::size_t l = first; l < h.levels.size(); ++l) gathered.push_back(gather(comm, h, l));
  step.emplace("upload");
  const dist::RowPartition& rows = h.levels[first].a.row_partition;
  offsets_.resize(std::size_t(rows.num_ranks()) + 1);
  for (int r = 0; r < rows.num_ranks(); ++r) offsets_[std::size_t(r)] = rows.begin(r);
  offsets_.back() = rows.global_rows();
  levels_.resize(count);
  dist::call_collectively(comm, "replicated AMG levels: upload", [&] {
    std::vector<DeviceCycleLevel> cycle_levels(count);
    for (std::size_t i = 0; i < count; ++i) upload(gathered[i], stream, levels_[i], cycle_levels[i]);
    cycle_ = DeviceCycle(std::move(cycle_levels), h.options.cycle, std::move(coarse));
    whole_b_.allocate(std::size_t(rows.global_rows()), stream);
    whole_x_.allocate(std::size_t(rows.global_rows()), stream);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // asynchronous failures surface here
  });
  step.reset();
}

void ReplicatedLevels::refresh_values(const DistHierarchy& h) {
  const dist::Communicator& comm = ctx_.comm();
  const cudaStream_t stream = ctx_.compute();
  // Level counts are global: every rank throws alike, before the gathers.
  TESSERA_REQUIRE_INPUT(h.levels.size() == first_ + levels_.size(), "replicated AMG levels: the hierarchy now has ",
                        h.levels.size(), " levels, ", first_ + levels_.size(), " when they were uploaded");
  std::vector<GatheredValues> gathered;
  for (std::size_t l = first_; l < h.levels.size(); ++l) gathered.push_back(gather_values(comm, h, l));
  dist::call_collectively(comm, "replicated AMG levels: refresh", [&] {
    for (std::size_t i = 0; i < levels_.size(); ++i) {
      refresh(gathered[i], stream, levels_[i]);
      cycle_.set_smoother(i, gathered[i].smoother);
    }
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // the gathered host values are freed next
  });
}

void ReplicatedLevels::solve(const double* b, double* x) {
  const cudaStream_t compute = ctx_.compute();
  const int rank = ctx_.comm().rank();
  const std::int64_t begin = offsets_[std::size_t(rank)], owned = offsets_[std::size_t(rank) + 1] - begin;
  // The exchange stream waits for b (restricted on compute) and for the previous visit's
  // cycle, which read whole_b_ on compute.
  ctx_.exchange_after_compute();
  ctx_.transport().allgatherv(b, whole_b_.data(), offsets_);
  ctx_.transport().finish_exchange();
  ctx_.compute_after_exchange();
  cycle_.apply(whole_b_.data(), whole_x_.data());
  if (owned > 0)
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, whole_x_.data() + begin, std::size_t(owned) * sizeof(double),
                                       cudaMemcpyDeviceToDevice, compute));
  last_x_ = x;
}

ReplicatedProlongation::ReplicatedProlongation(dist::gpu::DeviceContext& ctx, dist::gpu::DeviceDistMatrix& p,
                                               const ReplicatedLevels& levels)
    : ctx_(ctx), p_(p), levels_(levels), spmv_(p, ctx.compute()) {
  // The whole solution is indexed like level `first`'s rows: P's global columns must be too.
  const dist::RowPartition& cols = p.host->col_partition;
  const std::vector<std::int64_t>& rows = levels.offsets();
  bool same = cols.num_ranks() + 1 == std::int64_t(rows.size()) && cols.global_rows() == rows.back();
  for (int r = 0; same && r < cols.num_ranks(); ++r) same = cols.begin(r) == rows[std::size_t(r)];
  TESSERA_ASSERT(same, "replicated prolongation: P's columns are not partitioned like the replicated level's rows");
}

void ReplicatedProlongation::apply(double alpha, const double* x, double beta, double* y) {
  if (x != levels_.last_solution())
    throw DeviceError("replicated prolongation: x is not the replicated levels' last solution (the cycle must "
                      "prolongate right after their visit)");
  spmv_.apply(alpha, levels_.whole_solution(), beta, y);
}

void ReplicatedProlongation::residual(const double* x, const double* b, double* r) {
  tessera::cuda::copy(rows(), b, r, ctx_.compute());
  apply(-1.0, x, 1.0, r);
}

void ReplicatedLevels::upload(const Gathered& g, cudaStream_t stream, Level& v, DeviceCycleLevel& c) {
  v.a = tessera::cuda::upload(g.a, stream);
  v.a_plan = tessera::cuda::make_spmv_plan(v.a, {}, stream);
  v.a_op = std::make_unique<CsrDeviceOperator>(v.a, v.a_plan, stream);
  c.a = v.a_op.get();
  if (g.has_transfer) {
    v.p = tessera::cuda::upload(g.p, stream);
    v.r = tessera::cuda::upload(g.r, stream);
    v.p_plan = tessera::cuda::make_spmv_plan(v.p, {}, stream);
    v.r_plan = tessera::cuda::make_spmv_plan(v.r, {}, stream);
    v.p_op = std::make_unique<CsrDeviceOperator>(v.p, v.p_plan, stream);
    v.r_op = std::make_unique<CsrDeviceOperator>(v.r, v.r_plan, stream);
    c.p = v.p_op.get(), c.r = v.r_op.get();
  }
  c.smoother = g.smoother;
  v.inv_diag.upload(g.inv_diag, stream);
  if (std::int64_t(v.inv_diag.size()) == v.a.rows) c.inv_diag = v.inv_diag.data();
}

void ReplicatedLevels::refresh(const GatheredValues& g, cudaStream_t stream, Level& v) {
  // The same pattern gathered in the same order: the values land on the entries they belong to.
  const auto values = [stream](const std::vector<double>& from, tessera::cuda::DeviceCsr<double>& to,
                               const char* name) {
    TESSERA_REQUIRE_INPUT(std::int64_t(from.size()) == to.nnz, "replicated AMG levels: ", name, " now has ",
                          from.size(), " entries, ", to.nnz, " when uploaded: a new pattern needs new levels");
    to.values.upload(from, stream);
  };
  values(g.a, v.a, "A");
  values(g.p, v.p, "P");  // both empty on the coarsest level
  values(g.r, v.r, "R");
  TESSERA_REQUIRE_INPUT(g.inv_diag.size() == v.inv_diag.size(), "replicated AMG levels: ", g.inv_diag.size(),
                        " smoother diagonal entries, ", v.inv_diag.size(), " when uploaded");
  v.inv_diag.upload(g.inv_diag, stream);
}

std::int64_t ReplicatedLevels::device_bytes() const {
  std::int64_t bytes = cycle_.vector_bytes() + std::int64_t(whole_b_.bytes() + whole_x_.bytes());
  for (const Level& v : levels_)
    bytes += v.a.bytes() + v.p.bytes() + v.r.bytes() + v.a_plan.bytes() + v.p_plan.bytes() + v.r_plan.bytes() +
             std::int64_t(v.inv_diag.bytes());
  return bytes;
}

}  // namespace tessera::amg::gpu
