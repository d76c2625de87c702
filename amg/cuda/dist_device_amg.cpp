// Host code only: uploads a DistHierarchy and hands the shared cycle and PCG distributed
// device operators.
#include "amg/cuda/dist_device_amg.hpp"

#include <optional>

#include "amg/cuda/device_fgmres.hpp"
#include "amg/cuda/device_operator_slot.hpp"
#include "amg/cuda/dist_device_operator.hpp"
#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {
namespace {

using dist::gpu::DeviceDistMatrix;

std::int64_t matrix_bytes(const DeviceDistMatrix* m) {
  if (!m) return 0;
  return m->local.bytes() + m->nonlocal.bytes() + m->local_plan.bytes() + m->boundary_rows.bytes() +
         std::int64_t(m->send_local.bytes() + m->send.bytes() + m->ghosts.bytes()) +
         (m->peer_halo ? m->peer_halo->bytes() : 0);
}

/// "" when level `l`'s smoother fits its owned rows (or the level is never smoothed).
std::string smoother_error(const DistHierarchy& h, std::size_t l) {
  const DistLevel& level = h.levels[l];
  const bool smoothed = l + 1 < h.levels.size() || !h.coarse_direct;
  if (!smoothed || level.smoother.inv_diag.size() == std::size_t(level.a.owned_rows())) return "";
  return tessera::detail::concat("distributed device AMG: level ", l, " has no smoother on rank ", level.a.rank, " (",
                                 level.smoother.inv_diag.size(), " diagonal entries for ", level.a.owned_rows(),
                                 " owned rows)");
}

}  // namespace

DistDeviceAmgPreconditioner::DistDeviceAmgPreconditioner(dist::gpu::DeviceContext& ctx, const DistHierarchy& h,
                                                         std::int64_t replicate_nnz)
    : ctx_(ctx),
      h_(h),
      hierarchy_levels_(h.levels.size()),
      first_replicated_(first_replicated_level(ctx.comm(), h, replicate_nnz)) {
  TESSERA_REQUIRE_INPUT(!h.levels.empty(), "distributed device AMG: the hierarchy was never set up");
  for (std::size_t l = 0; l < h.levels.size(); ++l) dist::throw_if_any_rank_failed(ctx.comm(), smoother_error(h, l));
  levels_.resize(distributed_levels());
  // The replicated levels solve the coarsest level themselves, on whole vectors and without
  // communication: the device factor, or a host solve where the device refused it.
  std::optional<trace::Step> step;
  if (replicated()) {
    step.emplace("upload.replicated_levels");
    replicated_levels_ = std::make_unique<ReplicatedLevels>(
        ctx, h, first_replicated_,
        h.coarse_direct ? DeviceCoarseSolve([this](const double* b, double* x) { replicated_coarse_solve(b, x); })
                        : DeviceCoarseSolve());
  }
  // Uploads can fail on one rank only (out of memory): agree before the first collective (a
  // cycle's exchange) so every rank throws the same error instead of waiting in NCCL.
  dist::call_collectively(ctx.comm(), "distributed device AMG: upload", [&] {
    step.emplace("upload.levels");
    upload_levels();
    step.emplace("upload.coarse_factor");
    if (h.coarse_direct) factor_coarse_on_device();
    step.reset();
  });
  if (h.coarse_direct) choose_coarse_path();
}

void DistDeviceAmgPreconditioner::upload_levels() {
  std::vector<DeviceCycleLevel> cycle_levels(distributed_levels());
  std::optional<trace::Step> step(std::in_place, "operators_and_diagonals");
  for (std::size_t l = 0; l < cycle_levels.size(); ++l) upload_level(l, cycle_levels[l]);
  step.emplace("cycle_vectors");
  DeviceCoarseSolve coarse;
  if (replicated()) {
    coarse = [this](const double* b, double* x) { replicated_levels_->solve(b, x); };
  } else if (h_.coarse_direct) {
    coarse_b_.assign(std::size_t(h_.levels.back().a.owned_rows()), 0.0);
    coarse_x_.assign(coarse_b_.size(), 0.0);
    coarse = [this](const double* b, double* x) { coarse_solve(b, x); };
  }
  cycle_levels_ = cycle_levels, cycle_coarse_ = coarse;
  cycle_ = DeviceCycle(std::move(cycle_levels), h_.options.cycle, std::move(coarse));
  step.emplace("synchronize");
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx_.compute()));  // asynchronous failures surface here
}

void DistDeviceAmgPreconditioner::refresh_values() {
  const dist::Communicator& comm = ctx_.comm();
  // Level counts are global: every rank throws alike.
  TESSERA_REQUIRE_INPUT(h_.levels.size() == hierarchy_levels_, "distributed device AMG: the hierarchy now has ",
                        h_.levels.size(), " levels, ", hierarchy_levels_,
                        " when uploaded (a new setup needs a new preconditioner)");
  for (std::size_t l = 0; l < h_.levels.size(); ++l) dist::throw_if_any_rank_failed(comm, smoother_error(h_, l));
  TESSERA_TRACE_STEP("device_refresh");
  // The graph holds the old coefficients, and the coarse factor below may move its buffers.
  graph_.reset();
  graph_r_ = last_r_ = nullptr, graph_z_ = last_z_ = nullptr;
  std::optional<trace::Step> step;
  if (replicated()) {
    step.emplace("replicated_levels");
    replicated_levels_->refresh_values(h_);  // MPI gathers first, on every rank
  }
  dist::call_collectively(comm, "distributed device AMG: refresh", [&] {
    step.emplace("distributed_levels");
    for (std::size_t l = 0; l < levels_.size(); ++l) refresh_level(l);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx_.compute()));  // asynchronous failures surface here
    step.emplace("coarse_factor");
    if (h_.coarse_direct) factor_coarse_on_device();
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx_.compute()));
  });
  step.emplace("coarse_path");
  if (h_.coarse_direct) choose_coarse_path();
}

void DistDeviceAmgPreconditioner::refresh_level(std::size_t l) {
  const DistLevel& host = h_.levels[l];
  DeviceLevel& v = levels_[l];
  const cudaStream_t stream = ctx_.compute();
  // A shared copy that the re-setup's device phases refreshed is current; this preconditioner's
  // own copy, or a shared one no device phase refreshed, gets the host values.
  if (v.a != current_copy(host.device_a, host.a)) v.a->refresh_values(stream);
  if (v.p) v.p->refresh_values(stream);  // ReplicatedProlongation reads v.p's blocks: refreshed too
  if (v.r) v.r->refresh_values(stream);
  if (smoothed_on_device(l)) {
    TESSERA_REQUIRE_INPUT(host.smoother.inv_diag.size() == v.inv_diag.size(), "distributed device AMG: level ", l,
                          " now has ", host.smoother.inv_diag.size(), " smoother diagonal entries on rank ",
                          host.a.rank, ", ", v.inv_diag.size(), " when uploaded");
    fill_smoother_diagonal(host, v.inv_diag);  // same size: same buffer, which the cycle points at
  }
  const Smoother coefficients = coefficients_of(host.smoother);
  cycle_.set_smoother(l, coefficients);
  cycle_levels_[l].smoother = coefficients;  // what enable_timeline() builds its cycle from
}

bool DistDeviceAmgPreconditioner::smoothed_on_device(std::size_t l) const {
  // The last distributed level is smoothed here only when nothing else solves it.
  return l + 1 < distributed_levels() || (!replicated() && !h_.coarse_direct);
}

void DistDeviceAmgPreconditioner::enable_timeline() {
  // New wrappers and cycle first, swapped in at the end: a failure leaves the old cycle intact.
  std::vector<std::unique_ptr<TimedOperator>> timed;
  std::vector<std::string> parts;
  std::vector<DeviceCycleLevel> levels = cycle_levels_;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    // The last level's A is never applied when a coarse solve (or the replicated levels) takes it.
    const bool applied = l + 1 < levels.size() || !cycle_coarse_;
    for (auto [op, name] : {std::pair{&levels[l].a, "A"}, {&levels[l].r, "R"}, {&levels[l].p, "P"}}) {
      if (*op == nullptr || (name[0] == 'A' && !applied)) continue;
      timed.push_back(std::make_unique<TimedOperator>(**op));
      parts.push_back(tessera::detail::concat("level ", l, " ", name));
      *op = timed.back().get();
    }
  }
  std::unique_ptr<StreamTimer> coarse_timer;
  DeviceCoarseSolve coarse = cycle_coarse_;
  if (coarse) {
    coarse_timer = std::make_unique<StreamTimer>(ctx_.compute());
    coarse = [timer = coarse_timer.get(), inner = cycle_coarse_](const double* b, double* x) {
      const StreamTimer::Section timed(*timer);
      inner(b, x);
    };
  }
  std::unique_ptr<StreamTimer> replicated_coarse_timer;
  if (replicated() && h_.coarse_direct) replicated_coarse_timer = std::make_unique<StreamTimer>(ctx_.compute());
  DeviceCycle cycle(std::move(levels), h_.options.cycle, std::move(coarse));
  graph_.reset();  // before the cycle's work vectors, which its nodes refer to, are replaced
  graph_wanted_ = false;
  timeline_ = true;
  cycle_ = std::move(cycle);
  timed_ = std::move(timed), timed_parts_ = std::move(parts), coarse_timer_ = std::move(coarse_timer);
  replicated_coarse_timer_ = std::move(replicated_coarse_timer);
}

std::vector<DistDeviceAmgPreconditioner::TimelineEntry> DistDeviceAmgPreconditioner::timeline() {
  std::vector<TimelineEntry> entries;
  for (std::size_t i = 0; i < timed_.size(); ++i) {
    StreamTimer& t = timed_[i]->timer();
    const double seconds = t.seconds();
    entries.push_back({timed_parts_[i], t.sections(), seconds});
  }
  if (coarse_timer_) {
    const double seconds = coarse_timer_->seconds();
    const std::string part = replicated() ? tessera::detail::concat("levels ", first_replicated_, "- replicated")
                                          : std::string("coarsest solve");
    entries.push_back({part, coarse_timer_->sections(), seconds});
  }
  if (replicated_coarse_timer_) {
    const double seconds = replicated_coarse_timer_->seconds();
    entries.push_back({"coarsest solve", replicated_coarse_timer_->sections(), seconds, true});
  }
  return entries;
}

void DistDeviceAmgPreconditioner::upload_level(std::size_t l, DeviceCycleLevel& c) {
  const DistLevel& host = h_.levels[l];
  DeviceLevel& v = levels_[l];
  const cudaStream_t stream = ctx_.compute();
  v.a = current_copy(host.device_a, host.a);  // the setup's copy of A, when it made one
  if (!v.a) v.a = std::make_shared<DeviceDistMatrix>(host.a, stream);
  v.a_op = std::make_unique<DistDeviceOperator>(ctx_, *v.a);
  c.a = v.a_op.get();
  const bool last = l + 1 == distributed_levels();  // the coarsest, or the first replicated level
  if (!last) {
    // The copies the GPU setup kept (DistLevel::device_p, device_r), else uploads.
    v.p = current_copy(host.device_p, host.p);
    if (!v.p) v.p = std::make_shared<DeviceDistMatrix>(host.p, stream);
    v.r = current_copy(host.device_r, host.r);
    if (!v.r) v.r = std::make_shared<DeviceDistMatrix>(host.r, stream);
    // Into the last distributed level from replicated ones: P's ghosts are gathered from the
    // replicated solution every GPU holds, no exchange.
    if (replicated() && l + 2 == distributed_levels()) {
      auto p = std::make_unique<ReplicatedProlongation>(ctx_, *v.p, *replicated_levels_);
      replicated_prolongation_ = p.get();
      v.p_op = std::move(p);
    } else {
      v.p_op = std::make_unique<DistDeviceOperator>(ctx_, *v.p);
    }
    v.r_op = std::make_unique<DistDeviceOperator>(ctx_, *v.r);
    c.p = v.p_op.get(), c.r = v.r_op.get();
  }
  c.smoother = coefficients_of(host.smoother);
  if (smoothed_on_device(l)) {
    v.inv_diag.allocate(host.smoother.inv_diag.size(), stream);
    fill_smoother_diagonal(host, v.inv_diag);
    c.inv_diag = v.inv_diag.data();
  }
}

// Chebyshev's diagonal is 1 / a_ii: copied on the device from the level's slot where the setup
// divided it there, else uploaded, as l1-Jacobi's always is.
void DistDeviceAmgPreconditioner::fill_smoother_diagonal(const DistLevel& host,
                                                         tessera::cuda::DeviceBuffer<double>& to) {
  if (host.smoother.kind == SmootherKind::chebyshev)
    fill_inverse_diagonal(host.device_a, host.a, host.smoother.inv_diag, to, ctx_.compute());
  else
    to.upload(host.smoother.inv_diag, ctx_.compute());
}

void DistDeviceAmgPreconditioner::factor_coarse_on_device() {
  const cudaStream_t stream = ctx_.compute();
  const Csr<double>& whole = h_.coarse_operator;
  const dist::RowPartition& rows = h_.levels.back().a.row_partition;
  TESSERA_ASSERT(whole.rows == rows.global_rows(), "the gathered coarse operator has ", whole.rows,
                 " rows, the coarsest level ", rows.global_rows());
  try {
    // Every rank factors the same gathered matrix (no collective): the redundant solve.
    device_coarse_.factor(tessera::cuda::upload(whole, stream), stream);  // synchronises
  } catch (const InputError&) {
    device_coarse_ = DeviceCoarseSolver();  // too large for cuSOLVER's int sizes: the host path
  }
  // The gathered vectors hold rank r's rows at [rows.begin(r), rows.end(r)), as the matrix does.
  if (replicated()) return;  // solved on whole vectors: nothing to gather
  coarse_offsets_.resize(std::size_t(rows.num_ranks()) + 1);
  for (int r = 0; r < rows.num_ranks(); ++r) coarse_offsets_[std::size_t(r)] = rows.begin(r);
  coarse_offsets_.back() = rows.global_rows();
  whole_b_.allocate(std::size_t(whole.rows), stream);
  whole_x_.allocate(std::size_t(whole.rows), stream);
}

void DistDeviceAmgPreconditioner::choose_coarse_path() {
  // The device and host solves are different collectives (NCCL vs MPI): every rank must take the
  // same one, so one rank's host fallback sends them all to the host.
  const std::int64_t on_device = device_coarse_.on_device() ? 1 : 0;
  coarse_on_device_ = ctx_.comm().allreduce(on_device, dist::ReduceOp::min) == 1;
  // The replicated levels call each rank's solver alone (a host fallback there needs no MPI).
  if (coarse_on_device_ || replicated()) return;
  device_coarse_ = DeviceCoarseSolver();
  whole_b_.release(), whole_x_.release();
}

std::string DistDeviceAmgPreconditioner::coarse_method() const {
  if (!h_.coarse_direct) return "smoothed";
  if (coarse_on_device_) return device_coarse_.method();
  if (replicated() && device_coarse_.rows() > 0) return device_coarse_.method();  // its own host fallback
  return h_.coarse.method() + (replicated() ? " (host, on every rank)" : " (host, DistHierarchy)");
}

void DistDeviceAmgPreconditioner::replicated_coarse_solve(const double* b, double* x) {
  const cudaStream_t stream = ctx_.compute();
  std::optional<StreamTimer::Section> timed;
  if (replicated_coarse_timer_) timed.emplace(*replicated_coarse_timer_);
  if (device_coarse_.rows() > 0) return device_coarse_.solve(b, x, stream);  // factored (device or fallback)
  // cuSOLVER refused the size (int dimensions): every rank holds the host solver of the same
  // whole operator (DistHierarchy::coarse, factored on this first use), so each solves alone, no MPI.
  const std::size_t n = std::size_t(h_.coarse_operator.rows), bytes = n * sizeof(double);
  whole_host_b_.resize(n);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(whole_host_b_.data(), b, bytes, cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  h_.coarse.solve(whole_host_b_, whole_host_x_);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, whole_host_x_.data(), bytes, cudaMemcpyHostToDevice, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // whole_host_x_ is pageable and reused
}

void DistDeviceAmgPreconditioner::apply(const double* r, double* z) {
  // A host coarse solve synchronises each visit; coarse_on_device_ is global, like the options.
  // So does the host-staged transport (ranks sharing a GPU): its exchanges wait on the host.
  const bool capturable = graph_wanted_ && graph_failure_.empty() && (!h_.coarse_direct || coarse_on_device_) &&
                          ctx_.transport().capturable();
  if (!capturable) return cycle_.apply(r, z);
  // The graph bakes in this rank's addresses: it replays only for the vectors it was captured
  // on. The first call on a pair of vectors runs eagerly (NCCL connects peers on first use and
  // exchange buffers grow, neither of which a capture may do), the second captures. Addresses
  // differ between ranks (a pool may hand one rank the same block again and not another), and
  // a rank capturing while another runs eagerly would leave their NCCL calls unpaired: the
  // ranks agree on both conditions first (one small MPI allreduce a call).
  // The graph also holds the levels' exchange buffers: a product with more columns on one of
  // them (e.g. an SpMM on fine_operator()) reallocates them, and the graph is captured again;
  // so does a change of the context's halo route (the graph holds one route's kernels).
  // A capture follows an eager call on the same vectors with nothing changed since (so a route
  // switch, too, runs one cycle eagerly: it maps the peer buffers or grows NCCL's).
  const std::uint64_t generation = exchange_generation();
  const bool valid = graph_.ready() && r == graph_r_ && z == graph_z_ && generation == graph_generation_;
  std::vector<std::int64_t> agreed{valid, r == last_r_ && z == last_z_ && generation == last_generation_};
  ctx_.comm().allreduce_in_place(agreed, dist::ReduceOp::min);
  last_r_ = r, last_z_ = z;
  const bool replay = agreed[0] == 1, capture = !replay && agreed[1] == 1;
  if (capture) capture_cycle(r, z);
  if (replay || (capture && graph_.ready())) return graph_.launch(ctx_.compute());
  cycle_.apply(r, z);
  last_generation_ = exchange_generation();  // after the eager cycle, which may move buffers
}

void DistDeviceAmgPreconditioner::capture_cycle(const double* r, double* z) {
  std::string why;
  const bool captured = graph_.capture(ctx_.compute(), [&] { cycle_.apply(r, z); }, why);
  // A capture that failed after forking the exchange stream may leave it capturing: the NCCL
  // calls of an eager cycle would then fail on this rank alone.
  cudaStreamCaptureStatus exchange_status = cudaStreamCaptureStatusNone;
  const bool exchange_free = cudaStreamIsCapturing(ctx_.exchange(), &exchange_status) == cudaSuccess &&
                             exchange_status == cudaStreamCaptureStatusNone;
  // Replayed on every rank or on none: the ranks' NCCL calls must pair up.
  std::vector<std::int64_t> agreed{captured && exchange_free, exchange_free};
  ctx_.comm().allreduce_in_place(agreed, dist::ReduceOp::min);
  if (agreed[1] == 0)
    throw DeviceError("distributed device AMG: a failed CUDA graph capture left a rank's exchange stream capturing (" +
                      why + ")");
  if (agreed[0] == 1) {
    graph_r_ = r, graph_z_ = z, graph_generation_ = exchange_generation();
    ++graph_captures_;
    return;
  }
  graph_.reset();
  graph_failure_ = captured ? "another rank could not capture the cycle" : why;
}

std::uint64_t DistDeviceAmgPreconditioner::exchange_generation() const {
  // Generations only grow: an unchanged sum means no buffer moved and the route is the same.
  std::uint64_t sum = ctx_.halo_route_changes();
  for (const DeviceLevel& v : levels_)
    for (const auto* m : {v.a.get(), v.p.get(), v.r.get()})
      if (m) sum += m->exchange_generation;
  return sum;
}

void DistDeviceAmgPreconditioner::set_cuda_graph(bool on) {
  graph_wanted_ = on && !timeline_;  // the timeline's events would be captured, and time nothing
  if (!graph_wanted_) graph_.reset();
}

std::string DistDeviceAmgPreconditioner::cuda_graph_state() const {
  if (!graph_wanted_) return "off";
  if (!graph_failure_.empty()) return "capture failed: " + graph_failure_;
  if (h_.coarse_direct && !coarse_on_device_) return "off (host coarse solve)";
  if (!ctx_.transport().capturable()) return std::string("off (") + ctx_.transport().name() + " transport)";
  return graph_.ready() ? "replayed" : "not yet captured";
}

void DistDeviceAmgPreconditioner::connect_peers() {
  const cudaStream_t stream = ctx_.compute();
  tessera::cuda::DeviceBuffer<double> zero(static_cast<std::size_t>(rows()), stream), z(zero.size(), stream);
  zero.fill_bytes(0, stream);
  apply(zero.data(), z.data());
  ctx_.dot(rows(), zero.data(), z.data());  // the first allreduce connects the ring too
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::int64_t DistDeviceAmgPreconditioner::device_bytes() const {
  std::int64_t bytes = cycle_.vector_bytes() + device_coarse_.device_bytes() +
                      std::int64_t(whole_b_.bytes() + whole_x_.bytes());
  if (replicated_levels_) bytes += replicated_levels_->device_bytes();
  if (replicated_prolongation_) bytes += replicated_prolongation_->bytes();
  for (const DeviceLevel& v : levels_)
    bytes += matrix_bytes(v.a.get()) + matrix_bytes(v.p.get()) + matrix_bytes(v.r.get()) +
             std::int64_t(v.inv_diag.bytes());
  return bytes;
}

void DistDeviceAmgPreconditioner::coarse_solve(const double* b, double* x) {
  if (coarse_on_device_)
    coarse_solve_on_device(b, x);
  else
    coarse_solve_on_host(b, x);
}

void DistDeviceAmgPreconditioner::coarse_solve_on_device(const double* b, double* x) {
  const cudaStream_t compute = ctx_.compute();
  const int rank = ctx_.comm().rank();
  const std::int64_t begin = coarse_offsets_[std::size_t(rank)];
  const std::int64_t owned = coarse_offsets_[std::size_t(rank) + 1] - begin;
  // The exchange stream waits for b (restricted on compute) and for the previous visit's solve,
  // which read whole_b_ on compute and is overwritten by this gather.
  ctx_.exchange_after_compute();
  ctx_.transport().allgatherv(b, whole_b_.data(), coarse_offsets_);  // ranks owning nothing receive
  ctx_.transport().finish_exchange();
  ctx_.compute_after_exchange();
  // Stream-ordered, no synchronisation; whole_x_ is rewritten only after the previous visit's
  // copy below, which is on the same stream.
  device_coarse_.solve(whole_b_.data(), whole_x_.data(), compute);
  if (owned > 0)
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, whole_x_.data() + begin, std::size_t(owned) * sizeof(double),
                                       cudaMemcpyDeviceToDevice, compute));
}

void DistDeviceAmgPreconditioner::coarse_solve_on_host(const double* b, double* x) {
  const cudaStream_t stream = ctx_.compute();
  const std::size_t bytes = coarse_b_.size() * sizeof(double);
  if (bytes) TESSERA_CUDA_CHECK(cudaMemcpyAsync(coarse_b_.data(), b, bytes, cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  h_.coarse_solve(ctx_.comm(), coarse_b_, coarse_x_);  // collective: every rank takes part
  if (bytes) TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, coarse_x_.data(), bytes, cudaMemcpyHostToDevice, stream));
  // coarse_x_ is pageable: cudaMemcpyAsync from it returns once staged, so it may be reused.
}

namespace {
void require_square_partition(const char* who, const dist::gpu::DeviceDistMatrix& a) {
  TESSERA_REQUIRE_INPUT(a.host != nullptr, who, ": the device matrix has no host matrix");
  // Partitions are global data: the same answer, hence the same throw, on every rank.
  TESSERA_REQUIRE_INPUT(a.host->row_partition == a.host->col_partition, who,
                        ": A must be square with columns partitioned like its rows");
}
}  // namespace

SolveResult dist_device_pcg(dist::gpu::DeviceContext& ctx, dist::gpu::DeviceDistMatrix& a, const double* b, double* x,
                            const DevicePreconditioner& m, const KrylovOptions& options) {
  require_square_partition("dist_device_pcg", a);
  DistDeviceOperator op(ctx, a);
  return device_pcg(op, b, x, m, options);
}

SolveResult dist_device_fgmres(dist::gpu::DeviceContext& ctx, dist::gpu::DeviceDistMatrix& a, const double* b,
                               double* x, const DevicePreconditioner& m, const KrylovOptions& options) {
  require_square_partition("dist_device_fgmres", a);
  std::optional<FgmresWorkspace> work;
  dist::call_collectively(ctx.comm(), "dist_device_fgmres: workspace", [&] {
    work.emplace(a.host->owned_rows(), options.restart, ctx.compute());
    ctx.reserve_dots(options.restart + 1);  // Arnoldi's batched dots: their partial sums
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  });
  DistDeviceOperator op(ctx, a);
  return device_fgmres(op, b, x, m, options, &*work);
}

}  // namespace tessera::amg::gpu
