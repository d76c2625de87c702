// Host code only: the checks and the final residual of the device Krylov solvers.
#include "amg/cuda/device_krylov_common.hpp"

#include <cmath>

#include "local/core/error.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu::detail {

using tessera::cuda::DeviceBuffer;

double device_norm(DeviceOperator& a, const double* x) { return std::sqrt(a.dot(a.rows(), x, x)); }

namespace {

/// out = 2^k v, as amg/krylov_common.cpp's scale (one multiplication an entry).
void scale(DeviceOperator& a, const double* v, int k, double* out) {
  tessera::cuda::axpby(a.rows(), std::ldexp(1.0, k), v, 0.0, out, a.stream());
}

}  // namespace

SolveResult solve_device_in_range(const char* who, DeviceOperator& a, const double* b, double* x,
                                  const KrylovOptions& o, bool uses_restart, const DeviceInRangeSolve& solve) {
  TESSERA_REQUIRE_INPUT(a.rows() == a.cols(), who, ": A must be square, it is ", a.rows(), "x", a.cols());
  TESSERA_REQUIRE_INPUT(o.rtol > 0 && o.max_iterations >= 0 && o.stagnation_window >= 1, who,
                        ": need rtol > 0, max iterations >= 0, stagnation window >= 1");
  TESSERA_REQUIRE_INPUT(!uses_restart || o.restart >= 1, who, ": need restart >= 1, got ", o.restart);
  const std::int64_t n = a.rows();
  const double bb = a.dot(n, b, b), xx = a.dot(n, x, x);
  DeviceBuffer<double> scaled;  // allocated only off the range: the solve in range allocates nothing more
  const auto scaled_dot = [&](const double* v, int t) {
    if (scaled.size() == 0) scaled = DeviceBuffer<double>(std::size_t(n), a.stream());
    scale(a, v, t, scaled.data());
    return a.dot(n, scaled.data(), scaled.data());
  };
  const int k = amg::detail::rhs_scale_exponent(who, bb, [&](int t) { return scaled_dot(b, t); });
  TESSERA_REQUIRE_INPUT(std::isfinite(xx) || std::isfinite(scaled_dot(x, -amg::detail::kProbeExponent)), who,
                        ": the initial x has a non-finite value (||x||^2 = ", xx, ")");
  if (k == 0) return solve(b, x, std::sqrt(bb));
  DeviceBuffer<double> y(std::size_t(n), a.stream());
  scale(a, x, k, y.data());
  amg::detail::require_scaled_guess(who, scaled_dot(y.data(), -amg::detail::kProbeExponent), k);
  DeviceBuffer<double> scaled_b(std::size_t(n), a.stream());
  scale(a, b, k, scaled_b.data());
  SolveResult result = solve(scaled_b.data(), y.data(), device_norm(a, scaled_b.data()));
  scale(a, y.data(), -k, x);
  amg::detail::check_unscaled_solution(scaled_dot(x, -amg::detail::kProbeExponent), k, result);
  return result;
}

void finish_device_solve(DeviceOperator& a, const double* b, const double* x, double b_norm, double* r,
                         SolveResult& result) {
  a.residual(x, b, r);
  const double r_norm = device_norm(a, r);
  result.relative_residual = b_norm > 0 ? r_norm / b_norm : r_norm;
  amg::detail::set_final_message(result);
}

}  // namespace tessera::amg::gpu::detail
