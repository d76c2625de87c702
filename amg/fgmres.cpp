// Flexible GMRES(m) with right preconditioning (Saad 1993): the preconditioned vectors
// z_j = M^-1 v_j are kept, so M may change between iterations (a cycle with a Krylov coarse
// solve, a device cycle in another precision) and x is updated from them. Arnoldi by modified
// Gram-Schmidt, the least-squares problem by Givens rotations; the restart residual is the
// true one.
#include <cmath>

#include "amg/krylov.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {
namespace {

struct Givens {
  double c = 1, s = 0;
  void apply(double& x, double& y) const {
    const double t = c * x + s * y;
    y = -s * x + c * y;
    x = t;
  }
  static Givens zeroing(double x, double y) {
    const double h = std::hypot(x, y);
    return h == 0 ? Givens{} : Givens{x / h, y / h};
  }
};

}  // namespace

SolveResult fgmres(const Csr<double>& a, const Vector& b, Vector& x, const Preconditioner& m, const KrylovOptions& o,
                   const LevelOps& ops) {
  const double b_norm = detail::check_system(a, b, x, o, ops);
  SolveResult result;
  if (b_norm == 0) host::fill(x, 0.0);
  const auto n = static_cast<std::int64_t>(b.size());
  const int k_max = o.restart;
  std::vector<Vector> v(k_max + 1, Vector(b.size())), z(k_max, Vector(b.size()));
  std::vector<std::vector<double>> h(k_max + 1, std::vector<double>(k_max, 0.0));
  std::vector<Givens> rot(k_max);
  std::vector<double> g(k_max + 1), y(k_max);
  Vector r(n);
  ops.residual(a, x, b, r);
  double beta = std::sqrt(ops.dot(r, r)), best = beta;
  int since_best = 0;
  while (b_norm > 0 && beta > o.rtol * b_norm && result.iterations < o.max_iterations) {
    host::for_entries(n, [&](std::int64_t i) { v[0][i] = r[i] / beta; });
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    int k = 0;
    bool broke_down = false;
    while (k < k_max && result.iterations < o.max_iterations) {
      m(v[k], z[k]);
      ops.apply(a, z[k], v[k + 1]);
      for (int i = 0; i <= k; ++i) {
        h[i][k] = ops.dot(v[k + 1], v[i]);
        host::for_entries(n, [&](std::int64_t j) { v[k + 1][j] -= h[i][k] * v[i][j]; });
      }
      h[k + 1][k] = std::sqrt(ops.dot(v[k + 1], v[k + 1]));
      for (int i = 0; i < k; ++i) rot[i].apply(h[i][k], h[i + 1][k]);
      rot[k] = Givens::zeroing(h[k][k], h[k + 1][k]);
      const double subdiagonal = h[k + 1][k];
      rot[k].apply(h[k][k], h[k + 1][k]);
      rot[k].apply(g[k], g[k + 1]);
      ++k, ++result.iterations;
      if (o.history) result.history.push_back(std::abs(g[k]) / b_norm);
      if (!std::isfinite(g[k]) || h[k - 1][k - 1] == 0) {
        broke_down = true;
        break;
      }
      if (std::abs(g[k]) <= o.rtol * b_norm || subdiagonal == 0) break;
      host::for_entries(n, [&](std::int64_t j) { v[k][j] /= subdiagonal; });
    }
    if (broke_down) {
      result.status = SolveStatus::breakdown;
      result.message = "GMRES breakdown at iteration " + std::to_string(result.iterations) +
                       " (singular Hessenberg or non-finite value)";
      --k;  // drop the failed column
    }
    for (int i = k - 1; i >= 0; --i) {  // back substitution: H y = g
      y[i] = g[i];
      for (int j = i + 1; j < k; ++j) y[i] -= h[i][j] * y[j];
      y[i] /= h[i][i];
    }
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
