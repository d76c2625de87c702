// Host code only: the cycle's control flow, launching tessera_local's SpMV/residual kernels
// and the BLAS-1 steps of device_vector.cu.
#include "amg/cuda/device_cycle.hpp"

#include "amg/cuda/device_vector.hpp"
#include "local/core/error.hpp"
#include "local/cuda/fused_smoother.hpp"
#include "local/cuda/spmv.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;

DeviceBuffer<double> device_vector(std::int64_t n, cudaStream_t stream) {
  DeviceBuffer<double> v(static_cast<std::size_t>(n), stream);
  zero(n, v.data(), stream);
  return v;
}

}  // namespace

DeviceAmgPreconditioner::DeviceAmgPreconditioner(const Hierarchy& h, cudaStream_t stream) : h_(h), stream_(stream) {
  TESSERA_REQUIRE_INPUT(!h.levels.empty(), "device AMG preconditioner: the hierarchy was never set up");
  levels_.resize(h.levels.size());
  for (std::size_t l = 0; l < h.levels.size(); ++l) {
    const Level& host = h.levels[l];
    DeviceLevel& v = levels_[l];
    v.a = tessera::cuda::upload(host.a, stream);
    v.a_plan = tessera::cuda::make_spmv_plan(v.a, {}, stream);
    if (l + 1 < h.levels.size()) {
      v.p = tessera::cuda::upload(host.p, stream);
      v.r = tessera::cuda::upload(host.r, stream);
      v.p_plan = tessera::cuda::make_spmv_plan(v.p, {}, stream);
      v.r_plan = tessera::cuda::make_spmv_plan(v.r, {}, stream);
    }
    v.smoother = host.smoother;
    v.smoother.inv_diag.clear();
    const bool smoothed = l + 1 < h.levels.size() || !h.coarse_direct;
    if (smoothed) {
      TESSERA_REQUIRE_INPUT(host.smoother.inv_diag.size() == std::size_t(host.a.rows), "device AMG preconditioner: level ",
                            l, " has no smoother (", host.smoother.inv_diag.size(), " diagonal entries for ", host.a.rows,
                            " rows)");
      v.inv_diag.upload(host.smoother.inv_diag, stream);
    }
    v.b = device_vector(host.a.rows, stream);
    v.x = device_vector(host.a.rows, stream);
    v.res = device_vector(host.a.rows, stream);
    v.d = device_vector(host.a.rows, stream);
  }
  if (h.coarse_direct) {
    coarse_b_.assign(std::size_t(h.coarsest().a.rows), 0.0);
    coarse_x_.assign(coarse_b_.size(), 0.0);
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::int64_t DeviceAmgPreconditioner::device_bytes() const {
  std::int64_t bytes = 0;
  for (const DeviceLevel& v : levels_)
    for (const auto* m : {&v.a, &v.p, &v.r})
      bytes += std::int64_t(m->row_ptr.bytes() + m->col_idx.bytes() + m->values.bytes());
  for (const DeviceLevel& v : levels_)
    bytes += std::int64_t(v.inv_diag.bytes() + v.b.bytes() + v.x.bytes() + v.res.bytes() + v.d.bytes());
  return bytes;
}

void DeviceAmgPreconditioner::apply(const double* r, double* z) {
  DeviceLevel& fine = levels_[0];
  copy(fine.a.rows, r, fine.b.data(), stream_);
  zero(fine.a.rows, fine.x.data(), stream_);
  cycle(0, true);
  copy(fine.a.rows, fine.x.data(), z, stream_);
}

void DeviceAmgPreconditioner::cycle(std::size_t l, bool x_is_zero) {
  DeviceLevel& v = levels_[l];
  if (l + 1 == levels_.size()) {
    if (h_.coarse_direct) {
      coarse_solve(v);
    } else {
      smooth(v, x_is_zero);
    }
    return;
  }
  smooth(v, x_is_zero);
  tessera::cuda::residual(v.a_plan, v.a, v.x.data(), v.b.data(), v.res.data(), stream_);
  DeviceLevel& c = levels_[l + 1];
  tessera::cuda::spmv(v.r_plan, 1.0, v.r, v.res.data(), 0.0, c.b.data(), stream_);
  zero(c.a.rows, c.x.data(), stream_);
  const bool into_coarsest = l + 2 == levels_.size();
  const int visits = h_.options.cycle == CycleKind::w && !into_coarsest ? 2 : 1;
  for (int visit = 0; visit < visits; ++visit) cycle(l + 1, visit == 0);
  tessera::cuda::spmv(v.p_plan, 1.0, v.p, c.x.data(), 1.0, v.x.data(), stream_);  // x += P x_c
  smooth(v, false);
}

void DeviceAmgPreconditioner::smooth(DeviceLevel& v, bool x_is_zero) {
  if (v.smoother.kind == SmootherKind::chebyshev) {
    chebyshev(v, x_is_zero);
  } else {
    l1_jacobi(v, x_is_zero);
  }
}

// amg/smoother.cpp's chebyshev(), with w.r = res and w.d = d.
void DeviceAmgPreconditioner::chebyshev(DeviceLevel& v, bool x_is_zero) {
  const Smoother& s = v.smoother;
  const std::int64_t n = v.a.rows;
  const double theta = 0.5 * (s.upper + s.lower), delta = 0.5 * (s.upper - s.lower);
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  const double* r = x_is_zero ? v.b.data() : v.res.data();  // r = b when x = 0: no copy needed
  if (!x_is_zero) tessera::cuda::residual(v.a_plan, v.a, v.x.data(), v.b.data(), v.res.data(), stream_);
  diagonal_axpby(n, 1.0 / theta, v.inv_diag.data(), r, 0.0, v.d.data(), stream_);
  for (int k = 1;; ++k) {
    axpby(n, 1.0, v.d.data(), 1.0, v.x.data(), stream_);
    if (k == s.steps) break;
    tessera::cuda::residual(v.a_plan, v.a, v.x.data(), v.b.data(), v.res.data(), stream_);
    const double rho_next = 1.0 / (2.0 * sigma - rho);
    const double keep = rho_next * rho, step = 2.0 * rho_next / delta;
    diagonal_axpby(n, step, v.inv_diag.data(), v.res.data(), keep, v.d.data(), stream_);
    rho = rho_next;
  }
}

// amg/smoother.cpp's l1_jacobi(): x += D_l1^-1 (b - A x) per sweep.
void DeviceAmgPreconditioner::l1_jacobi(DeviceLevel& v, bool x_is_zero) {
  for (int sweep = 0; sweep < v.smoother.steps; ++sweep) {
    const bool first_from_zero = sweep == 0 && x_is_zero;
    if (!first_from_zero) tessera::cuda::residual(v.a_plan, v.a, v.x.data(), v.b.data(), v.res.data(), stream_);
    const double* r = first_from_zero ? v.b.data() : v.res.data();
    diagonal_axpby(v.a.rows, 1.0, v.inv_diag.data(), r, 1.0, v.x.data(), stream_);
  }
}

void DeviceAmgPreconditioner::coarse_solve(DeviceLevel& v) {
  const std::size_t bytes = coarse_b_.size() * sizeof(double);
  if (bytes) TESSERA_CUDA_CHECK(cudaMemcpyAsync(coarse_b_.data(), v.b.data(), bytes, cudaMemcpyDeviceToHost, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  h_.coarse.solve(coarse_b_, coarse_x_);
  if (bytes) TESSERA_CUDA_CHECK(cudaMemcpyAsync(v.x.data(), coarse_x_.data(), bytes, cudaMemcpyHostToDevice, stream_));
  // coarse_x_ is pageable: cudaMemcpyAsync from it returns once staged, so it may be reused.
}

}  // namespace tessera::amg::gpu
