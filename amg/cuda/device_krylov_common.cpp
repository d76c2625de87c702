// Host code only: the checks and the final residual of the device Krylov solvers.
#include "amg/cuda/device_krylov_common.hpp"

#include <cmath>

#include "local/core/error.hpp"

namespace tessera::amg::gpu::detail {

double device_norm(DeviceOperator& a, const double* x) { return std::sqrt(a.dot(a.rows(), x, x)); }

double check_device_system(const char* who, DeviceOperator& a, const double* b, const double* x,
                           const KrylovOptions& o, bool uses_restart) {
  TESSERA_REQUIRE_INPUT(a.rows() == a.cols(), who, ": A must be square, it is ", a.rows(), "x", a.cols());
  TESSERA_REQUIRE_INPUT(o.rtol > 0 && o.max_iterations >= 0 && o.stagnation_window >= 1, who,
                        ": need rtol > 0, max iterations >= 0, stagnation window >= 1");
  TESSERA_REQUIRE_INPUT(!uses_restart || o.restart >= 1, who, ": need restart >= 1, got ", o.restart);
  const double bb = a.dot(a.rows(), b, b), xx = a.dot(a.rows(), x, x);
  TESSERA_REQUIRE_INPUT(std::isfinite(bb), who, ": b has a non-finite value (||b||^2 = ", bb, ")");
  TESSERA_REQUIRE_INPUT(std::isfinite(xx), who, ": the initial x has a non-finite value (||x||^2 = ", xx, ")");
  return std::sqrt(bb);
}

void finish_device_solve(DeviceOperator& a, const double* b, const double* x, double b_norm, double* r,
                         SolveResult& result) {
  a.residual(x, b, r);
  const double r_norm = device_norm(a, r);
  result.relative_residual = b_norm > 0 ? r_norm / b_norm : r_norm;
  amg::detail::set_final_message(result);
}

}  // namespace tessera::amg::gpu::detail
