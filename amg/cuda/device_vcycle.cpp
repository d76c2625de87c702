// Host code only: the cycle's control flow, launching the operators' products and the BLAS-1
// steps of local/cuda/vector_ops.
#include "amg/cuda/device_vcycle.hpp"

#include "local/core/error.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::axpby;
using tessera::cuda::copy;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::diagonal_axpby;
using tessera::cuda::zero;

DeviceBuffer<double> zero_vector(std::int64_t n, cudaStream_t stream) {
  DeviceBuffer<double> v(static_cast<std::size_t>(n), stream);
  zero(n, v.data(), stream);
  return v;
}

void check_level(const std::vector<DeviceCycleLevel>& levels, std::size_t l, bool smoothed) {
  const DeviceCycleLevel& v = levels[l];
  TESSERA_REQUIRE_INPUT(v.a != nullptr && v.a->rows() == v.a->cols(), "device AMG cycle: level ", l,
                        " needs a square operator");
  TESSERA_REQUIRE_INPUT(!smoothed || v.inv_diag != nullptr || v.a->rows() == 0, "device AMG cycle: level ", l,
                        " is smoothed but has no smoother diagonal");
  if (l + 1 == levels.size()) return;
  const std::int64_t n = v.a->rows(), nc = levels[l + 1].a->rows();
  TESSERA_REQUIRE_INPUT(v.p && v.r && v.p->rows() == n && v.p->cols() == nc && v.r->rows() == nc && v.r->cols() == n,
                        "device AMG cycle: the transfer operators of level ", l, " do not map ", n, " rows to ", nc);
}

}  // namespace

DeviceCycle::DeviceCycle(std::vector<DeviceCycleLevel> levels, CycleKind kind, DeviceCoarseSolve coarse)
    : levels_(std::move(levels)), kind_(kind), coarse_(std::move(coarse)) {
  TESSERA_REQUIRE_INPUT(!levels_.empty(), "device AMG cycle: the hierarchy has no levels");
  work_.resize(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    check_level(levels_, l, l + 1 < levels_.size() || !coarse_);
    const std::int64_t n = levels_[l].a->rows();
    const cudaStream_t s = levels_[l].a->stream();
    work_[l] = Work{zero_vector(n, s), zero_vector(n, s), zero_vector(n, s), zero_vector(n, s)};
  }
}

void DeviceCycle::set_smoother(std::size_t l, const Smoother& s) {
  TESSERA_REQUIRE_INPUT(l < levels_.size(), "device AMG cycle: no level ", l, " in ", levels_.size());
  Smoother& mine = levels_[l].smoother;
  TESSERA_REQUIRE_INPUT(s.kind == mine.kind && s.steps == mine.steps, "device AMG cycle: level ", l,
                        "'s smoother changed kind or steps (a re-setup keeps the options)");
  mine.lower = s.lower, mine.upper = s.upper;
}

std::int64_t DeviceCycle::vector_bytes() const {
  std::int64_t bytes = 0;
  for (const Work& w : work_) bytes += std::int64_t(w.b.bytes() + w.x.bytes() + w.res.bytes() + w.d.bytes());
  return bytes;
}

void DeviceCycle::apply(const double* r, double* z) {
  const std::int64_t n = rows();
  const cudaStream_t s = levels_[0].a->stream();
  copy(n, r, work_[0].b.data(), s);
  zero(n, work_[0].x.data(), s);
  cycle(0, true);
  copy(n, work_[0].x.data(), z, s);
}

void DeviceCycle::cycle(std::size_t l, bool x_is_zero) {
  const DeviceCycleLevel& v = levels_[l];
  Work& w = work_[l];
  if (l + 1 == levels_.size()) {
    if (coarse_) {
      coarse_(w.b.data(), w.x.data());
    } else {
      smooth(l, x_is_zero);
    }
    return;
  }
  smooth(l, x_is_zero);
  v.a->residual(w.x.data(), w.b.data(), w.res.data());
  Work& c = work_[l + 1];
  v.r->apply(1.0, w.res.data(), 0.0, c.b.data());  // restrict: b_c = R r
  zero(levels_[l + 1].a->rows(), c.x.data(), levels_[l + 1].a->stream());
  const bool into_coarsest = l + 2 == levels_.size();
  const int visits = kind_ == CycleKind::w && !into_coarsest ? 2 : 1;
  for (int visit = 0; visit < visits; ++visit) cycle(l + 1, visit == 0);
  v.p->apply(1.0, c.x.data(), 1.0, w.x.data());  // prolongate: x += P x_c
  smooth(l, false);
}

void DeviceCycle::smooth(std::size_t l, bool x_is_zero) {
  if (levels_[l].smoother.kind == SmootherKind::chebyshev) {
    chebyshev(levels_[l], work_[l], x_is_zero);
  } else {
    l1_jacobi(levels_[l], work_[l], x_is_zero);
  }
}

// amg/smoother.cpp's chebyshev(), with work.r = res and work.d = d.
void DeviceCycle::chebyshev(const DeviceCycleLevel& v, Work& w, bool x_is_zero) {
  const Smoother& s = v.smoother;
  const std::int64_t n = v.a->rows();
  const cudaStream_t stream = v.a->stream();
  const double theta = 0.5 * (s.upper + s.lower), delta = 0.5 * (s.upper - s.lower);
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  const double* r = x_is_zero ? w.b.data() : w.res.data();  // r = b when x = 0: no product needed
  if (!x_is_zero) v.a->residual(w.x.data(), w.b.data(), w.res.data());
  diagonal_axpby(n, 1.0 / theta, v.inv_diag, r, 0.0, w.d.data(), stream);
  for (int k = 1;; ++k) {
    axpby(n, 1.0, w.d.data(), 1.0, w.x.data(), stream);
    if (k == s.steps) break;
    v.a->residual(w.x.data(), w.b.data(), w.res.data());
    const double rho_next = 1.0 / (2.0 * sigma - rho);
    const double keep = rho_next * rho, step = 2.0 * rho_next / delta;
    diagonal_axpby(n, step, v.inv_diag, w.res.data(), keep, w.d.data(), stream);
    rho = rho_next;
  }
}

// amg/smoother.cpp's l1_jacobi(): x += D_l1^-1 (b - A x) per sweep.
void DeviceCycle::l1_jacobi(const DeviceCycleLevel& v, Work& w, bool x_is_zero) {
  for (int sweep = 0; sweep < v.smoother.steps; ++sweep) {
    const bool first_from_zero = sweep == 0 && x_is_zero;
    if (!first_from_zero) v.a->residual(w.x.data(), w.b.data(), w.res.data());
    const double* r = first_from_zero ? w.b.data() : w.res.data();
    diagonal_axpby(v.a->rows(), 1.0, v.inv_diag, r, 1.0, w.x.data(), v.a->stream());
  }
}

}  // namespace tessera::amg::gpu
