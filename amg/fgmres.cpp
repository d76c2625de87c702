// The host FGMRES: fgmres_iteration.hpp's cycles over host vectors and LevelOps (one process,
// or the ranks through the distributed operations, dist_fgmres).
#include <cstdint>
#include <vector>

#include "amg/fgmres_iteration.hpp"
#include "amg/krylov.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {

namespace {

/// fgmres_iteration.hpp's space on host vectors; every entry's formula is the one written there.
struct HostFgmresSpace {
  const Csr<double>& a;
  const Vector& b;
  Vector& x;
  const Preconditioner& m;
  const LevelOps& ops;
  std::vector<Vector> v, z;
  Vector r;
  std::vector<double> c[2];  // project()'s coefficients, by pass

  HostFgmresSpace(const Csr<double>& a, const Vector& b, Vector& x, const Preconditioner& m, const LevelOps& ops,
                  int restart)
      : a(a), b(b), x(x), m(m), ops(ops), v(restart + 1, Vector(b.size())), z(restart, Vector(b.size())), r(b.size()) {}

  template <class Entry>
  void for_entries(Entry&& entry) const {
    host::for_entries(static_cast<std::int64_t>(b.size()), entry);
  }
  Vector& basis(int i) { return v[i]; }
  Vector& preconditioned(int i) { return z[i]; }
  Vector& residual_vector() { return r; }
  void residual(Vector& out) const { ops.residual(a, x, b, out); }
  double dot(const Vector& p, const Vector& q) const { return ops.dot(p, q); }
  void divide(const Vector& p, double s, Vector& q) const {
    for_entries([&](std::int64_t i) { q[i] = p[i] / s; });
  }
  void precondition(const Vector& p, Vector& q) const { m(p, q); }
  void apply(const Vector& p, Vector& q) const { ops.apply(a, p, q); }
  void subtract(Vector& w, double h, const Vector& p) const {
    for_entries([&](std::int64_t i) { w[i] -= h * p[i]; });
  }
  void project(int count, Vector& w, int pass) {
    std::vector<double>& coefficient = c[pass];
    coefficient.resize(std::size_t(count));
    for (int i = 0; i < count; ++i) coefficient[i] = ops.dot(w, v[i]);
    for_entries([&](std::int64_t j) {
      for (int i = 0; i < count; ++i) w[j] -= coefficient[i] * v[i][j];
    });
  }
  const double* projection(int pass) const { return c[pass].data(); }
  void update_x(const std::vector<double>& y, int k) const {
    for_entries([&](std::int64_t j) {  // each x_j adds its terms in the order of i
      for (int i = 0; i < k; ++i) x[j] += y[i] * z[i][j];
    });
  }
};

}  // namespace

SolveResult fgmres(const Csr<double>& a, const Vector& b, Vector& x, const Preconditioner& m, const KrylovOptions& o,
                   const LevelOps& ops) {
  return detail::solve_in_range(a, b, x, o, ops, [&](const Vector& in_b, Vector& in_x, double b_norm) {
    SolveResult result;
    if (b_norm == 0) host::fill(in_x, 0.0);
    HostFgmresSpace space(a, in_b, in_x, m, ops, o.restart);
    fgmres_iterations(space, b_norm, o, result);
    detail::finish(a, in_b, in_x, b_norm, ops, result);
    return result;
  });
}

}  // namespace tessera::amg
