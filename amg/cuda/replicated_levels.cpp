// Host code only: gathers and uploads the replicated levels and drives their cycle.
#include "amg/cuda/replicated_levels.hpp"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "amg/cuda/device_operator_slot.hpp"
#include "amg/dist/dist_exchange.hpp"
#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "dist/cuda/device_whole_matrix.hpp"
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

/// One operator of a replicated level gathered whole onto every rank: on the GPUs from the
/// setup's copy (dist::gpu::WholeMatrixGather) where every rank kept a current one, else on the
/// host (allgather_operator, MPI) and uploaded. Both give the same matrix, bit for bit.
class ReplicatedLevels::WholeOperator {
 public:
  /// Collective (MPI): the host's gather, or the device gather's entry counts. `copy`: the
  /// setup's device copy of `host`, or null; null or not alike on every rank.
  WholeOperator(const dist::Communicator& comm, const dist::DistMatrix& host,
                std::shared_ptr<dist::gpu::DeviceDistMatrix> copy)
      : copy_(std::move(copy)) {
    if (copy_)
      device_.emplace(comm, *copy_);
    else
      host_ = allgather_operator(comm, host);
  }
  bool on_device() const { return device_.has_value(); }
  /// Local, and it can fail on one rank alone (call it inside call_collectively): the device
  /// gather's allocations and own rows, or the upload of the host's gather.
  void prepare(dist::gpu::DeviceContext& ctx) {
    if (device_)
      device_->prepare(ctx);
    else
      uploaded_ = tessera::cuda::upload(host_, ctx.compute());
  }
  /// Collective over the device transport where on_device(), after prepare() on every rank.
  tessera::cuda::DeviceCsr<double> finish(dist::gpu::DeviceContext& ctx) {
    return device_ ? device_->finish(ctx) : std::move(uploaded_);
  }

 private:
  std::shared_ptr<dist::gpu::DeviceDistMatrix> copy_;  // read by the device gather
  std::optional<dist::gpu::WholeMatrixGather> device_;
  Csr<double> host_;
  tessera::cuda::DeviceCsr<double> uploaded_;
};

/// One level whole: P and R absent on the coarsest.
struct ReplicatedLevels::Gathered {
  std::optional<WholeOperator> a, p, r;
  Vector inv_diag;
  Smoother smoother;
};

/// The setup's device copies of levels [first, end)'s operators (A, then P and R where a level
/// has them), each null unless every rank holds a current one. Collective (MPI).
ReplicatedLevels::DeviceCopies ReplicatedLevels::agreed_device_copies(const dist::Communicator& comm,
                                                                     const DistHierarchy& h, std::size_t first) {
  DeviceCopies copies;
  for (std::size_t l = first; l < h.levels.size(); ++l) {
    const DistLevel& level = h.levels[l];
    copies.push_back(current_copy(level.device_a, level.a));
    if (l + 1 < h.levels.size()) {
      copies.push_back(current_copy(level.device_p, level.p));
      copies.push_back(current_copy(level.device_r, level.r));
    }
  }
  std::vector<std::int64_t> held(copies.size());
  for (std::size_t i = 0; i < copies.size(); ++i) held[i] = copies[i] ? 1 : 0;
  comm.allreduce_in_place(held, dist::ReduceOp::min);
  for (std::size_t i = 0; i < copies.size(); ++i)
    if (held[i] == 0) copies[i].reset();
  return copies;
}

ReplicatedLevels::Gathered ReplicatedLevels::gather(const dist::Communicator& comm, const DistHierarchy& h,
                                                    std::size_t l, DeviceCopies& copies, std::size_t& next) {
  const DistLevel& host = h.levels[l];
  Gathered g;  // the copies come in agreed_device_copies' order: A, then P and R
  g.a.emplace(comm, host.a, std::move(copies[next++]));
  if (l + 1 < h.levels.size()) {
    g.p.emplace(comm, host.p, std::move(copies[next++]));
    g.r.emplace(comm, host.r, std::move(copies[next++]));
  }
  // A level that is smoothed has an entry per owned row on every rank (DistDeviceAmgPreconditioner
  // checks before building this), so only a directly solved coarsest level can come out short.
  g.inv_diag = allgatherv(comm, host.smoother.inv_diag);
  g.smoother = coefficients_of(host.smoother);
  return g;
}

/// One operator's new values whole (a re-setup keeps every pattern, so only these move), in the
/// order its gather put its entries: on the GPUs from the setup's current copy where every rank
/// holds one (WholeMatrixGather's values alone), else on the host in allgather_operator()'s
/// order (rank order, each row's entries by global column: dist::values_in_row_order) and
/// uploaded.
class ReplicatedLevels::WholeValues {
 public:
  /// Collective (MPI): the host's gather, or the device gather's entry counts.
  WholeValues(const dist::Communicator& comm, const dist::DistMatrix& host,
              std::shared_ptr<dist::gpu::DeviceDistMatrix> copy)
      : copy_(std::move(copy)) {
    if (copy_)
      device_.emplace(comm, *copy_);
    else
      host_ = allgatherv(comm, dist::values_in_row_order(host));
  }
  bool on_device() const { return device_.has_value(); }
  /// Local (call it inside call_collectively): this rank's values into `to` (on the GPUs), or all
  /// of them uploaded. Another entry count than `to`'s is an InputError, alike on every rank.
  void write(dist::gpu::DeviceContext& ctx, tessera::cuda::DeviceCsr<double>& to, const char* name) const {
    if (device_) return device_->write_values(ctx, to);
    TESSERA_REQUIRE_INPUT(std::int64_t(host_.size()) == to.nnz, "replicated AMG levels: ", name, " now has ",
                          host_.size(), " entries, ", to.nnz, " when uploaded: a new pattern needs new levels");
    to.values.upload(host_, ctx.compute());
  }
  /// Collective over the device transport where on_device(), after write() on every rank.
  void gather(dist::gpu::DeviceContext& ctx, tessera::cuda::DeviceCsr<double>& to) const {
    if (device_) device_->gather_values(ctx, to);
  }

 private:
  std::shared_ptr<dist::gpu::DeviceDistMatrix> copy_;
  std::optional<dist::gpu::WholeMatrixGather> device_;
  std::vector<double> host_;
};

/// One level's new values whole: P and R absent on the coarsest.
struct ReplicatedLevels::GatheredValues {
  std::optional<WholeValues> a, p, r;
  std::vector<double> inv_diag;
  Smoother smoother;
};

ReplicatedLevels::GatheredValues ReplicatedLevels::gather_values(const dist::Communicator& comm,
                                                                 const DistHierarchy& h, std::size_t l,
                                                                 DeviceCopies& copies, std::size_t& next) {
  const DistLevel& host = h.levels[l];
  GatheredValues g;  // the copies come in agreed_device_copies' order: A, then P and R
  g.a.emplace(comm, host.a, std::move(copies[next++]));
  if (l + 1 < h.levels.size()) {
    g.p.emplace(comm, host.p, std::move(copies[next++]));
    g.r.emplace(comm, host.r, std::move(copies[next++]));
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
  // (out of device memory), which call_collectively turns into the same error everywhere, before
  // the device gathers' transport calls.
  std::optional<trace::Step> step(std::in_place, "gather");
  DeviceCopies copies = agreed_device_copies(comm, h, first);
  std::vector<Gathered> gathered;
  std::size_t next_copy = 0;
  for (std::size_t l = first; l < h.levels.size(); ++l) gathered.push_back(gather(comm, h, l, copies, next_copy));
  step.emplace("gather_on_device");
  const auto each_operator = [&gathered](auto&& f) {
    for (Gathered& g : gathered)
      for (std::optional<WholeOperator>* m : {&g.a, &g.p, &g.r})
        if (*m) f(**m);
  };
  dist::call_collectively(comm, "replicated AMG levels: gather", [&] {
    each_operator([&](WholeOperator& m) { m.prepare(ctx); });
  });
  levels_.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    levels_[i].a = gathered[i].a->finish(ctx);
    if (gathered[i].p) levels_[i].p = gathered[i].p->finish(ctx), levels_[i].r = gathered[i].r->finish(ctx);
  }
  each_operator([&](const WholeOperator& m) { gathered_on_device_ += m.on_device() ? 1 : 0; });
  step.emplace("upload");
  const dist::RowPartition& rows = h.levels[first].a.row_partition;
  offsets_.resize(std::size_t(rows.num_ranks()) + 1);
  for (int r = 0; r < rows.num_ranks(); ++r) offsets_[std::size_t(r)] = rows.begin(r);
  offsets_.back() = rows.global_rows();
  dist::call_collectively(comm, "replicated AMG levels: upload", [&] {
    std::vector<DeviceCycleLevel> cycle_levels(count);
    for (std::size_t i = 0; i < count; ++i) plan(gathered[i], stream, levels_[i], cycle_levels[i]);
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
  DeviceCopies copies = agreed_device_copies(comm, h, first_);
  std::vector<GatheredValues> gathered;
  std::size_t next_copy = 0;
  for (std::size_t l = first_; l < h.levels.size(); ++l)
    gathered.push_back(gather_values(comm, h, l, copies, next_copy));
  dist::call_collectively(comm, "replicated AMG levels: refresh", [&] {
    for (std::size_t i = 0; i < levels_.size(); ++i) {
      write_values(gathered[i], ctx_, levels_[i]);
      cycle_.set_smoother(i, gathered[i].smoother);
    }
  });
  gathered_on_device_ = 0;
  for (std::size_t i = 0; i < levels_.size(); ++i) {
    const GatheredValues& g = gathered[i];
    Level& v = levels_[i];
    g.a->gather(ctx_, v.a);
    if (g.p) g.p->gather(ctx_, v.p), g.r->gather(ctx_, v.r);
    for (const std::optional<WholeValues>* m : {&g.a, &g.p, &g.r})
      gathered_on_device_ += *m && (*m)->on_device() ? 1 : 0;
  }
  dist::call_collectively(comm, "replicated AMG levels: refresh", [&] {
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

void ReplicatedLevels::plan(const Gathered& g, cudaStream_t stream, Level& v, DeviceCycleLevel& c) {
  v.a_plan = tessera::cuda::make_spmv_plan(v.a, {}, stream);
  v.a_op = std::make_unique<CsrDeviceOperator>(v.a, v.a_plan, stream);
  c.a = v.a_op.get();
  if (g.p) {
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

void ReplicatedLevels::write_values(const GatheredValues& g, dist::gpu::DeviceContext& ctx, Level& v) {
  g.a->write(ctx, v.a, "A");
  if (g.p) g.p->write(ctx, v.p, "P"), g.r->write(ctx, v.r, "R");
  TESSERA_REQUIRE_INPUT(g.inv_diag.size() == v.inv_diag.size(), "replicated AMG levels: ", g.inv_diag.size(),
                        " smoother diagonal entries, ", v.inv_diag.size(), " when uploaded");
  v.inv_diag.upload(g.inv_diag, ctx.compute());
}

std::int64_t ReplicatedLevels::device_bytes() const {
  std::int64_t bytes = cycle_.vector_bytes() + std::int64_t(whole_b_.bytes() + whole_x_.bytes());
  for (const Level& v : levels_)
    bytes += v.a.bytes() + v.p.bytes() + v.r.bytes() + v.a_plan.bytes() + v.p_plan.bytes() + v.r_plan.bytes() +
             std::int64_t(v.inv_diag.bytes());
  return bytes;
}

}  // namespace tessera::amg::gpu
