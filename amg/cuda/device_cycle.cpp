// Host code only: uploads the hierarchy and hands the shared cycle its operators.
#include "amg/cuda/device_cycle.hpp"

#include "local/core/error.hpp"

namespace tessera::amg::gpu {
namespace {

bool smoothed(std::size_t l, std::size_t levels, bool coarse_direct) { return l + 1 < levels || !coarse_direct; }

/// The legacy default stream cannot be captured into a CUDA graph; every other stream can.
bool is_legacy_default(cudaStream_t stream) { return stream == nullptr || stream == cudaStreamLegacy; }

}  // namespace

DeviceAmgPreconditioner::DeviceAmgPreconditioner(const Hierarchy& h, cudaStream_t stream)
    : host_coarse_(&h.coarse), stream_(stream), cycle_stream_(stream) {
  if (is_legacy_default(stream)) cycle_stream_ = own_stream_.emplace().get();
  TESSERA_REQUIRE_INPUT(!h.levels.empty(), "device AMG preconditioner: the hierarchy was never set up");
  levels_.resize(h.levels.size());
  std::vector<LevelView> views(h.levels.size());
  for (std::size_t l = 0; l < h.levels.size(); ++l) {  // upload, then view the copies
    const Level& host = h.levels[l];
    DeviceLevel& v = levels_[l];
    v.a = tessera::cuda::upload(host.a, stream);
    views[l].a = &v.a;
    if (l + 1 < h.levels.size()) {
      v.p = tessera::cuda::upload(host.p, stream);
      v.r = tessera::cuda::upload(host.r, stream);
      views[l].p = &v.p, views[l].r = &v.r;
    }
    views[l].smoother = &host.smoother;
    if (smoothed(l, h.levels.size(), h.coarse_direct)) {
      TESSERA_REQUIRE_INPUT(host.smoother.inv_diag.size() == std::size_t(host.a.rows), "device AMG preconditioner: level ",
                            l, " has no smoother (", host.smoother.inv_diag.size(), " diagonal entries for ", host.a.rows,
                            " rows)");
      v.inv_diag.upload(host.smoother.inv_diag, stream);
      views[l].inv_diag = v.inv_diag.data();
    }
  }
  build_levels(views, h.options, h.coarse_direct);
}

DeviceAmgPreconditioner::DeviceAmgPreconditioner(const DeviceHierarchy& h, cudaStream_t stream)
    : device_coarse_(&h.coarse), stream_(stream), cycle_stream_(stream) {
  if (is_legacy_default(stream)) cycle_stream_ = own_stream_.emplace().get();
  TESSERA_REQUIRE_INPUT(!h.levels.empty(), "device AMG preconditioner: the device hierarchy was never set up");
  levels_.resize(h.levels.size());
  std::vector<LevelView> views(h.levels.size());
  for (std::size_t l = 0; l < h.levels.size(); ++l) {  // view the hierarchy's own matrices
    const gpu::DeviceLevel& dev = h.levels[l];
    views[l].a = &dev.a;
    if (l + 1 < h.levels.size()) views[l].p = &dev.p, views[l].r = &dev.r;
    views[l].smoother = &dev.smoother;
    if (smoothed(l, h.levels.size(), h.coarse_direct)) {
      TESSERA_REQUIRE_INPUT(dev.smoother_inv_diag() != nullptr || dev.a.rows == 0, "device AMG preconditioner: level ",
                            l, " of the device hierarchy has no smoother");
      views[l].inv_diag = dev.smoother_inv_diag();
    }
  }
  build_levels(views, h.options, h.coarse_direct);
}

void DeviceAmgPreconditioner::build_levels(const std::vector<LevelView>& views, const AmgOptions& options,
                                           bool coarse_direct) {
  if (own_stream_) own_stream_->wait_for(stream_);  // the matrices were uploaded or set up there
  const cudaStream_t s = cycle_stream_;
  std::vector<DeviceCycleLevel> cycle_levels(views.size());
  for (std::size_t l = 0; l < views.size(); ++l) {
    const LevelView& view = views[l];
    DeviceLevel& v = levels_[l];
    DeviceCycleLevel& c = cycle_levels[l];
    v.a_plan = tessera::cuda::make_spmv_plan(*view.a, {}, s);
    v.a_op = std::make_unique<CsrDeviceOperator>(*view.a, v.a_plan, s);
    c.a = v.a_op.get();
    if (view.p) {
      v.p_plan = tessera::cuda::make_spmv_plan(*view.p, {}, s);
      v.r_plan = tessera::cuda::make_spmv_plan(*view.r, {}, s);
      v.p_op = std::make_unique<CsrDeviceOperator>(*view.p, v.p_plan, s);
      v.r_op = std::make_unique<CsrDeviceOperator>(*view.r, v.r_plan, s);
      c.p = v.p_op.get(), c.r = v.r_op.get();
    }
    c.smoother = *view.smoother;
    c.smoother.inv_diag.clear();  // the cycle reads c.inv_diag on the device
    c.inv_diag = view.inv_diag;
  }
  make_cycle(std::move(cycle_levels), options, coarse_direct, views.back().a->rows);
}

void DeviceAmgPreconditioner::make_cycle(std::vector<DeviceCycleLevel> cycle_levels, const AmgOptions& options,
                                         bool coarse_direct, std::int64_t coarse_rows) {
  DeviceCoarseSolve coarse;
  if (coarse_direct) {
    if (host_coarse_) coarse_b_.assign(std::size_t(coarse_rows), 0.0);
    coarse_x_.assign(coarse_b_.size(), 0.0);
    coarse = [this](const double* b, double* x) { coarse_solve(b, x); };
    // The host fallback of a device factor solves on the host too (an empty coarsest level: no solve).
    host_coarse_solve_ = host_coarse_ || (!device_coarse_->on_device() && device_coarse_->rows() > 0);
  }
  cycle_ = DeviceCycle(std::move(cycle_levels), options.cycle, std::move(coarse));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(cycle_stream_));  // an asynchronous failure surfaces here
}

void DeviceAmgPreconditioner::apply(const double* r, double* z) {
  if (!own_stream_) return run_cycle(r, z);
  own_stream_->wait_for(stream_);  // r was written on the caller's stream
  run_cycle(r, z);
  own_stream_->make_wait(stream_);  // z is read there
}

void DeviceAmgPreconditioner::run_cycle(const double* r, double* z) {
  if (!capturable()) return cycle_.apply(r, z);
  const cudaStream_t s = cycle_stream_;
  // The graph bakes in the vectors' addresses: it replays only for the pair it was captured on.
  // The first call on a pair runs eagerly (kernels load and libraries set up on first use,
  // which a capture must not do); the second captures, then launches what it captured.
  if (graph_.ready() && r == graph_r_ && z == graph_z_) return graph_.launch(s);
  const bool second_call = r == last_r_ && z == last_z_;
  last_r_ = r, last_z_ = z;
  if (second_call) {
    std::string why;
    if (graph_.capture(s, [&] { cycle_.apply(r, z); }, why)) {
      graph_r_ = r, graph_z_ = z;
      ++graph_captures_;
      return graph_.launch(s);
    }
    graph_failure_ = why;  // eager launches from now on; nothing ran during the capture
  }
  cycle_.apply(r, z);
}

void DeviceAmgPreconditioner::set_cuda_graph(bool on) {
  graph_wanted_ = on;
  if (!on) graph_.reset();
}

std::string DeviceAmgPreconditioner::cuda_graph_state() const {
  if (!graph_wanted_) return "off";
  if (host_coarse_solve_) return "off (host coarse solve)";
  if (!graph_failure_.empty()) return "capture failed: " + graph_failure_;
  return graph_.ready() ? "replayed" : "not yet captured";
}

std::int64_t DeviceAmgPreconditioner::device_bytes() const {
  std::int64_t bytes = cycle_.vector_bytes();
  for (const DeviceLevel& v : levels_)
    bytes += v.a.bytes() + v.p.bytes() + v.r.bytes() + std::int64_t(v.inv_diag.bytes());
  return bytes;
}

void DeviceAmgPreconditioner::coarse_solve(const double* b, double* x) {
  const cudaStream_t s = cycle_stream_;
  if (device_coarse_) return device_coarse_->solve(b, x, s);
  const std::size_t bytes = coarse_b_.size() * sizeof(double);
  if (bytes) TESSERA_CUDA_CHECK(cudaMemcpyAsync(coarse_b_.data(), b, bytes, cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  host_coarse_->solve(coarse_b_, coarse_x_);
  if (bytes) TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, coarse_x_.data(), bytes, cudaMemcpyHostToDevice, s));
  // coarse_x_ is pageable: cudaMemcpyAsync from it returns once staged, so it may be reused.
}

}  // namespace tessera::amg::gpu
