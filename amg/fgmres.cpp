// Flexible GMRES(m) with right preconditioning (Saad 1993): the preconditioned vectors
// z_j = M^-1 v_j are kept, so M may change between iterations (a cycle with a Krylov coarse
// solve, a device cycle in another precision) and x is updated from them. Arnoldi by modified
// Gram-Schmidt, the least-squares problem by Givens rotations; the restart residual is the
// true one.
#include <cmath>

#include "amg/gmres_least_squares.hpp"
#include "amg/krylov.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {

SolveResult fgmres(const Csr<double>& a, const Vector& b, Vector& x, const Preconditioner& m, const KrylovOptions& o,
                   const LevelOps& ops) {
  const double b_norm = detail::check_system(a, b, x, o, ops);
  SolveResult result;
  if (b_norm == 0) host::fill(x, 0.0);
  const auto n = static_cast<std::int64_t>(b.size());
  const int k_max = o.restart;
  std::vector<Vector> v(k_max + 1, Vector(b.size())), z(k_max, Vector(b.size()));
  GmresLeastSquares ls(k_max);
  Vector r(n);
  ops.residual(a, x, b, r);
  double beta = std::sqrt(ops.dot(r, r)), best = beta;
  int since_best = 0;
  while (b_norm > 0 && beta > o.rtol * b_norm && result.iterations < o.max_iterations) {
    host::for_entries(n, [&](std::int64_t i) { v[0][i] = r[i] / beta; });
    ls.start(beta);
    int k = 0;
    bool broke_down = false;
    while (k < k_max && result.iterations < o.max_iterations) {
      m(v[k], z[k]);
      ops.apply(a, z[k], v[k + 1]);
      for (int i = 0; i <= k; ++i) {
        const double h_ik = ls.h(i, k) = ops.dot(v[k + 1], v[i]);
        host::for_entries(n, [&](std::int64_t j) { v[k + 1][j] -= h_ik * v[i][j]; });
      }
      ls.h(k + 1, k) = std::sqrt(ops.dot(v[k + 1], v[k + 1]));
      const double subdiagonal = ls.rotate_column(k);
      ++k, ++result.iterations;
      if (o.history) result.history.push_back(std::abs(ls.residual(k)) / b_norm);
      if (ls.broke_down(k)) {
        broke_down = true;
        break;
      }
      if (std::abs(ls.residual(k)) <= o.rtol * b_norm || subdiagonal == 0) break;
      host::for_entries(n, [&](std::int64_t j) { v[k][j] /= subdiagonal; });
    }
    if (broke_down) {
      result.status = SolveStatus::breakdown;
      result.message = "GMRES breakdown at iteration " + std::to_string(result.iterations) +
                       " (singular Hessenberg or non-finite value)";
      --k;  // drop the failed column
    }
    const std::vector<double>& y = ls.solve(k);
    host::for_entries(n, [&](std::int64_t j) {  // each x_j adds its terms in the order of i
      for (int i = 0; i < k; ++i) x[j] += y[i] * z[i][j];
    });
    ops.residual(a, x, b, r);
    beta = std::sqrt(ops.dot(r, r));
    if (broke_down) break;
    if (beta < best) {
      best = beta, since_best = 0;
    } else if ((since_best += k) >= o.stagnation_window) {
      result.status = SolveStatus::stagnation;
      result.message = "GMRES: no progress over " + std::to_string(since_best) + " iterations";
      break;
    }
  }
  if (b_norm == 0 || beta <= o.rtol * b_norm) result.status = SolveStatus::converged, result.message.clear();
  detail::finish(a, b, x, b_norm, ops, result);
  return result;
}

}  // namespace tessera::amg
