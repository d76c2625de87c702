// Preconditioned conjugate gradients (Hestenes-Stiefel with M^-1), with the breakdown checks
// listed in krylov.hpp. A recurrence residual below rtol is confirmed by the true residual
// before stopping; if they disagree the iteration restarts from the true residual, until rtol
// proves out of reach (detail::FailedConfirmations).
#include <cmath>

#include "amg/krylov.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {
namespace {

void axpy(double alpha, const Vector& x, Vector& y) {
  host::for_entries(static_cast<std::int64_t>(y.size()), [&](std::int64_t i) { y[i] += alpha * x[i]; });
}

/// PCG on b in range (detail::solve_in_range), ||b|| = b_norm.
SolveResult pcg_in_range(const Csr<double>& a, const Vector& b, Vector& x, double b_norm, const Preconditioner& m,
                         const KrylovOptions& o, const LevelOps& ops) {
  SolveResult result;
  if (b_norm == 0) {
    host::fill(x, 0.0);
    result.status = SolveStatus::converged;
    detail::finish(a, b, x, b_norm, ops, result);
    return result;
  }
  const std::size_t n = b.size();
  Vector r(n), z(n), p(n), q(n), x_kept;  // x_kept: the iterate of the smallest failed confirmation
  ops.residual(a, x, b, r);
  double res = std::sqrt(ops.dot(r, r)) / b_norm, best = res;
  int since_best = 0;
  detail::FailedConfirmations failed;
  m(r, z);
  double rz = ops.dot(r, z);
  host::copy(z, p);
  for (int it = 1; res > o.rtol; ++it) {
    if (it > o.max_iterations) break;  // status stays max_iterations
    if (!std::isfinite(rz)) {
      result.status = SolveStatus::breakdown;
      result.message = detail::value_at(it, "non-finite r^T z", rz);
      break;
    }
    if (rz <= 0) {
      result.status = SolveStatus::indefinite_preconditioner;
      result.message = detail::value_at(it, "r^T M^-1 r", rz) + ": the preconditioner is not positive definite";
      break;
    }
    ops.apply(a, p, q);
    const double pq = ops.dot(p, q);
    if (!(pq > 0)) {
      result.status = std::isfinite(pq) ? SolveStatus::indefinite_operator : SolveStatus::breakdown;
      result.message =
          detail::value_at(it, "p^T A p", pq) + ": A is not positive definite (singular or indefinite)";
      break;
    }
    const double alpha = rz / pq;
    axpy(alpha, p, x);
    axpy(-alpha, q, r);
    result.iterations = it;
    res = std::sqrt(ops.dot(r, r)) / b_norm;
    if (o.history) result.history.push_back(res);
    bool restart = false;
    if (res <= o.rtol) {  // confirm with the true residual
      ops.residual(a, x, b, r);
      res = std::sqrt(ops.dot(r, r)) / b_norm;
      if (res <= o.rtol) break;
      if (failed.record(res)) x_kept = x;
      if (!failed.halved) {
        result.status = SolveStatus::accuracy_limit;
        result.message = failed.limit_message("recurrence residual", o.rtol, res);
        break;
      }
      restart = true;
    }
    if (res < best) {
      best = res, since_best = 0;
    } else if (++since_best >= o.stagnation_window) {
      result.status = SolveStatus::stagnation;
      result.message = detail::stagnation_message(o.stagnation_window, best);
      break;
    }
    m(r, z);
    const double rz_next = ops.dot(r, z);
    const double beta = restart ? 0.0 : rz_next / rz;
    host::for_entries(static_cast<std::int64_t>(n), [&](std::int64_t i) { p[i] = z[i] + beta * p[i]; });
    rz = rz_next;
  }
  if (res > o.rtol && failed.count > 0) {  // not converged: keep the better of the last and the kept iterate
    ops.residual(a, x, b, r);
    if (std::sqrt(ops.dot(r, r)) / b_norm > failed.smallest) host::copy(x_kept, x);
  }
  if (res <= o.rtol && result.message.empty()) result.status = SolveStatus::converged;
  detail::finish(a, b, x, b_norm, ops, result);
  return result;
}

}  // namespace

SolveResult pcg(const Csr<double>& a, const Vector& b, Vector& x, const Preconditioner& m, const KrylovOptions& o,
                const LevelOps& ops) {
  return detail::solve_in_range(a, b, x, o, ops, [&](const Vector& in_b, Vector& in_x, double b_norm) {
    return pcg_in_range(a, in_b, in_x, b_norm, m, o, ops);
  });
}

}  // namespace tessera::amg
