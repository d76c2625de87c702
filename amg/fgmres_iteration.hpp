#pragma once
// Flexible GMRES(m) with right preconditioning (Saad 1993), written once over a "space" that
// owns the vectors and their operations, so the host solver (amg/fgmres.cpp: one process, or the
// ranks through the distributed operations) and the device one (amg/cuda/device_fgmres.cpp)
// take the same steps with the same stopping and breakdown rules, as lanczos.hpp does for the
// eigenvalue estimate:
// where Vec is what names a vector of the space's local length (a host reference, a device
// pointer):
//   Vec basis(int i), preconditioned(int i)      v_i (i <= restart), z_i = M^-1 v_i (i < restart)
//   Vec residual_vector()                        r; free between its uses below
//   void residual(Vec r)                         r = b - A x (b and x held by the space)
//   double dot(const Vec& p, const Vec& q)       the global inner product
//   void divide(const Vec& p, double s, Vec q)   q = p / s (p and q may alias)
//   void precondition(const Vec& v, Vec z)       z = M^-1 v
//   void apply(const Vec& z, Vec w)              w = A z
//   void subtract(Vec w, double h, const Vec& v) w -= h v (modified Gram-Schmidt)
//   void project(int count, Vec w, int pass)     c = V^T w over v_0 .. v_{count-1} (global inner
//                                                products, all with this w), then w -= V c (each
//                                                w_j in the order of i); c kept as `pass`'s (0, 1)
//   const double* projection(int pass)           that c, on the host: valid after the next dot()
//   void update_x(const std::vector<double>& y, int k)   x += sum_{i<k} y_i z_i, in the order of i
// The preconditioned vectors are kept, so M may change between iterations; x is updated from
// them. Arnoldi by classical Gram-Schmidt applied twice (below; once, twice where the first
// pass cancelled, or modified Gram-Schmidt on request), the least-squares problem by Givens
// rotations; the restart residual is the true one.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "amg/krylov.hpp"

namespace tessera::amg {

// The small dense part: the Hessenberg matrix of one restart cycle, reduced to upper-triangular
// form by Givens rotations as its columns arrive, the rotated right-hand side g (|g[k]| is the
// residual norm after k columns), and the back substitution for the update's coefficients y.

class GmresLeastSquares {
 public:
  explicit GmresLeastSquares(int restart)
      : h_(restart + 1, std::vector<double>(restart, 0.0)), rot_(restart), g_(restart + 1), y_(restart) {}

  /// A new cycle from a residual of norm beta.
  void start(double beta) {
    std::fill(g_.begin(), g_.end(), 0.0);
    g_[0] = beta;
  }
  /// Entry (i, k) of the Hessenberg matrix: Arnoldi writes rows 0..k+1 of column k.
  double& h(int i, int k) { return h_[i][k]; }
  /// Applies the earlier rotations to column k and the new one that zeroes h(k+1, k); returns
  /// h(k+1, k) from before (the norm that normalises the next basis vector).
  double rotate_column(int k) {
    for (int i = 0; i < k; ++i) rot_[i].apply(h_[i][k], h_[i + 1][k]);
    rot_[k] = Givens::zeroing(h_[k][k], h_[k + 1][k]);
    const double subdiagonal = h_[k + 1][k];
    rot_[k].apply(h_[k][k], h_[k + 1][k]);
    rot_[k].apply(g_[k], g_[k + 1]);
    return subdiagonal;
  }
  /// After k columns: the residual estimate g[k], and whether the triangle's last diagonal
  /// entry is 0 or g non-finite (a breakdown: the column must be dropped).
  double residual(int k) const { return g_[k]; }
  bool broke_down(int k) const { return !std::isfinite(g_[k]) || h_[k - 1][k - 1] == 0; }
  /// y solving the first k columns' triangle against g.
  const std::vector<double>& solve(int k) {
    for (int i = k - 1; i >= 0; --i) {
      y_[i] = g_[i];
      for (int j = i + 1; j < k; ++j) y_[i] -= h_[i][j] * y_[j];
      y_[i] /= h_[i][i];
    }
    return y_;
  }

 private:
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
  std::vector<std::vector<double>> h_;
  std::vector<Givens> rot_;
  std::vector<double> g_, y_;
};

/// Orthogonalises w = v_{k+1} against v_0 .. v_k and writes column k of the Hessenberg matrix;
/// returns whether classical Gram-Schmidt projected twice. Classical Gram-Schmidt twice (CGS2):
/// h(0..k, k) = c + d and h(k+1, k) = ||w|| after
///   c = V^T w, w -= V c;   d = V^T w, w -= V d.
/// Each pass is one batched reduction over the k + 1 basis vectors where modified Gram-Schmidt
/// takes k + 1 dependent ones, each a synchronisation (an allreduce across ranks). One pass of
/// classical Gram-Schmidt loses orthogonality in proportion to the conditioning of the vectors
/// it projects; the second pass brings it back to working precision ("twice is enough": Giraud,
/// Langou, Rozloznik and van den Eshof, Numer. Math. 101, 2005).
/// GramSchmidt::classical_if_needed runs the second pass only where the first cancelled: where
/// ||w - V c|| < ||c||, i.e. (as ||w||^2 = ||c||^2 + ||w - V c||^2) where the projection removed
/// more than 1 - 1/sqrt(2) of w's norm (the test of Daniel, Gragg, Kaufman and Stewart, Math.
/// Comp. 30, 1976, and PETSc's refine_ifneeded). ||w - V c|| is the norm the step needs anyway,
/// so a step without the second pass costs one projection and one norm.
/// GramSchmidt::classical_once never runs it (PETSc's default). CGS2 takes its norm after both
/// passes, so it waits for the host once, as the one-pass variants do.
/// GramSchmidt::modified subtracts one basis vector at a time instead: h(i, k) = v_i^T w, then
/// w -= h(i, k) v_i, for i = 0 .. k (orthogonality lost in proportion to the conditioning).
template <class Space>
bool arnoldi_orthogonalize(Space& s, int k, GmresLeastSquares& ls, GramSchmidt how = GramSchmidt::classical_twice) {
  auto&& w = s.basis(k + 1);
  if (how == GramSchmidt::modified) {
    for (int i = 0; i <= k; ++i) {
      const double h_ik = ls.h(i, k) = s.dot(w, s.basis(i));
      s.subtract(w, h_ik, s.basis(i));
    }
    ls.h(k + 1, k) = std::sqrt(s.dot(w, w));
    return false;
  }
  s.project(k + 1, w, 0);
  bool twice = how == GramSchmidt::classical_twice;
  if (!twice) {
    const double norm_squared = s.dot(w, w);
    const double* c = s.projection(0);
    double c_squared = 0;
    for (int i = 0; i <= k; ++i) c_squared += c[i] * c[i];
    twice = how == GramSchmidt::classical_if_needed && norm_squared < c_squared;
    if (!twice) {
      for (int i = 0; i <= k; ++i) ls.h(i, k) = c[i];
      ls.h(k + 1, k) = std::sqrt(norm_squared);
      return false;
    }
  }
  s.project(k + 1, w, 1);
  ls.h(k + 1, k) = std::sqrt(s.dot(w, w));
  const double* c = s.projection(0);
  const double* d = s.projection(1);
  for (int i = 0; i <= k; ++i) ls.h(i, k) = c[i] + d[i];
  return true;
}

/// The restart cycles from x (held by the space) until ||b - A x|| <= rtol ||b|| (b_norm), the
/// iteration limit, a breakdown or stagnation; fills result's status, message, iterations and
/// history (the caller recomputes the final residual). b_norm == 0 does nothing: x is 0 already.
template <class Space>
void fgmres_iterations(Space& s, double b_norm, const KrylovOptions& o, SolveResult& result) {
  GmresLeastSquares ls(o.restart);
  auto&& r = s.residual_vector();
  s.residual(r);
  double beta = std::sqrt(s.dot(r, r)), best = beta;
  int since_best = 0;
  detail::FailedConfirmations failed;  // cycles that reached rtol in the least squares, not in b - A x
  while (b_norm > 0 && beta > o.rtol * b_norm && result.iterations < o.max_iterations) {
    s.divide(r, beta, s.basis(0));
    ls.start(beta);
    int k = 0;
    bool broke_down = false, reached_rtol = false;
    while (k < o.restart && result.iterations < o.max_iterations) {
      s.precondition(s.basis(k), s.preconditioned(k));
      s.apply(s.preconditioned(k), s.basis(k + 1));
      if (arnoldi_orthogonalize(s, k, ls, o.gram_schmidt)) ++result.second_passes;
      const double subdiagonal = ls.rotate_column(k);
      ++k, ++result.iterations;
      if (o.history) result.history.push_back(std::abs(ls.residual(k)) / b_norm);
      if (ls.broke_down(k)) {
        broke_down = true;
        break;
      }
      reached_rtol = std::abs(ls.residual(k)) <= o.rtol * b_norm || subdiagonal == 0;
      if (reached_rtol) break;
      s.divide(s.basis(k), subdiagonal, s.basis(k));
    }
    if (broke_down) {
      result.status = SolveStatus::breakdown;
      result.message = "GMRES breakdown at iteration " + std::to_string(result.iterations) +
                       " (singular Hessenberg or non-finite value)";
      --k;  // drop the failed column
    }
    s.update_x(ls.solve(k), k);
    s.residual(r);
    beta = std::sqrt(s.dot(r, r));
    if (broke_down) break;
    // As PCG's failed confirmations (krylov.hpp): a cycle whose least-squares residual reached
    // rtol and whose true one did not, without halving the smallest such, ends the solve.
    if (reached_rtol && beta > o.rtol * b_norm) {
      failed.record(beta / b_norm);
      if (!failed.halved) {
        result.status = SolveStatus::accuracy_limit;
        result.message = failed.limit_message("least-squares residual", o.rtol, beta / b_norm);
        break;
      }
    }
    if (beta < best) {
      best = beta, since_best = 0;
    } else if ((since_best += k) >= o.stagnation_window) {
      result.status = SolveStatus::stagnation;
      result.message = "GMRES: no progress over " + std::to_string(since_best) + " iterations";
      break;
    }
  }
  if (b_norm == 0 || beta <= o.rtol * b_norm) result.status = SolveStatus::converged, result.message.clear();
}

}  // namespace tessera::amg
