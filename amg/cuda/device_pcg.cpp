// Host code only: the control flow of amg/pcg.cpp over device vectors and a DeviceOperator.
#include "amg/cuda/device_pcg.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "local/core/error.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::axpby;
using tessera::cuda::copy;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::zero;

std::string at(int it, const char* what, double value) {
  return std::string(what) + " = " + std::to_string(value) + " at iteration " + std::to_string(it);
}

double norm(DeviceOperator& a, const double* x) { return std::sqrt(a.dot(a.rows(), x, x)); }

/// The device counterpart of detail::check_system: finiteness through ||b||^2 and ||x||^2
/// (a non-finite entry makes them non-finite), so the row is not named.
double check_system(DeviceOperator& a, const double* b, const double* x, const KrylovOptions& o) {
  TESSERA_REQUIRE_INPUT(a.rows() == a.cols(), "device PCG: A must be square, it is ", a.rows(), "x", a.cols());
  TESSERA_REQUIRE_INPUT(o.rtol > 0 && o.max_iterations >= 0 && o.stagnation_window >= 1,
                        "device PCG: need rtol > 0, max iterations >= 0, stagnation window >= 1");
  const double bb = a.dot(a.rows(), b, b), xx = a.dot(a.rows(), x, x);
  TESSERA_REQUIRE_INPUT(std::isfinite(bb), "device PCG: b has a non-finite value (||b||^2 = ", bb, ")");
  TESSERA_REQUIRE_INPUT(std::isfinite(xx), "device PCG: the initial x has a non-finite value (||x||^2 = ", xx, ")");
  return std::sqrt(bb);
}

/// The device counterpart of detail::finish (same message).
void finish(DeviceOperator& a, const double* b, const double* x, double b_norm, double* r, SolveResult& result) {
  a.residual(x, b, r);
  const double r_norm = norm(a, r);
  result.relative_residual = b_norm > 0 ? r_norm / b_norm : r_norm;
  if (!result.message.empty()) return;
  char text[160];
  std::snprintf(text, sizeof text, "%s after %d iterations, true relative residual %.3e", to_string(result.status),
                result.iterations, result.relative_residual);
  result.message = text;
}

}  // namespace

SolveResult device_pcg(DeviceOperator& a, const double* b, double* x, const DevicePreconditioner& m,
                       const KrylovOptions& o) {
  const std::int64_t n = a.rows();
  const cudaStream_t stream = a.stream();
  const double b_norm = check_system(a, b, x, o);
  DeviceBuffer<double> r(std::size_t(n), stream), z(std::size_t(n), stream), p(std::size_t(n), stream),
      q(std::size_t(n), stream);
  SolveResult result;
  if (b_norm == 0) {
    zero(n, x, stream);
    result.status = SolveStatus::converged;
    finish(a, b, x, b_norm, r.data(), result);
    return result;
  }
  a.residual(x, b, r.data());
  double res = norm(a, r.data()) / b_norm, best = res;
  int since_best = 0;
  m(r.data(), z.data());
  double rz = a.dot(n, r.data(), z.data());
  copy(n, z.data(), p.data(), stream);
  for (int it = 1; res > o.rtol; ++it) {
    if (it > o.max_iterations) break;  // status stays max_iterations
    if (!std::isfinite(rz)) {
      result.status = SolveStatus::breakdown, result.message = at(it, "non-finite r^T z", rz);
      break;
    }
    if (rz <= 0) {
      result.status = SolveStatus::indefinite_preconditioner;
      result.message = at(it, "r^T M^-1 r", rz) + ": the preconditioner is not positive definite";
      break;
    }
    a.apply(1.0, p.data(), 0.0, q.data());
    const double pq = a.dot(n, p.data(), q.data());
    if (!(pq > 0)) {
      result.status = std::isfinite(pq) ? SolveStatus::indefinite_operator : SolveStatus::breakdown;
      result.message = at(it, "p^T A p", pq) + ": A is not positive definite (singular or indefinite)";
      break;
    }
    const double alpha = rz / pq;
    axpby(n, alpha, p.data(), 1.0, x, stream);
    axpby(n, -alpha, q.data(), 1.0, r.data(), stream);
    result.iterations = it;
    res = norm(a, r.data()) / b_norm;
    if (o.history) result.history.push_back(res);
    if (res <= o.rtol) {  // confirm with the true residual
      a.residual(x, b, r.data());
      res = norm(a, r.data()) / b_norm;
      if (res <= o.rtol) break;
    }
    if (res < best) {
      best = res, since_best = 0;
    } else if (++since_best >= o.stagnation_window) {
      result.status = SolveStatus::stagnation;
      result.message = "no new smallest residual in " + std::to_string(o.stagnation_window) + " iterations (best " +
                       std::to_string(best) + "): singular/inconsistent system?";
      break;
    }
    m(r.data(), z.data());
    const double rz_next = a.dot(n, r.data(), z.data());
    axpby(n, 1.0, z.data(), rz_next / rz, p.data(), stream);  // p = z + (rz_next / rz) p
    rz = rz_next;
  }
  if (res <= o.rtol && result.message.empty()) result.status = SolveStatus::converged;
  finish(a, b, x, b_norm, r.data(), result);
  return result;
}

SolveResult device_pcg(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan, const double* b,
                       double* x, const DevicePreconditioner& m, const KrylovOptions& o, cudaStream_t stream) {
  CsrDeviceOperator op(a, plan, stream);
  return device_pcg(op, b, x, m, o);
}

}  // namespace tessera::amg::gpu
