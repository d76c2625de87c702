// FGMRES's Arnoldi step (amg/fgmres_iteration.hpp's arnoldi_orthogonalize) on sets of vectors
// that one pass of classical Gram-Schmidt cannot keep orthogonal: Lauchli's columns (e_0 +
// delta e_k, delta = 1e-10, below sqrt(u)) and fresh random vectors about one common direction
// (a_k = a + delta r_k). Classical Gram-Schmidt twice must build a basis orthonormal to working
// precision that reproduces the columns (a_k = sum_i h(i, k-1) v_i), and one pass on the same
// columns must lose orthogonality: the test can tell the two apart. The second pass on demand
// (classical_if_needed) must take it at every step there, and never on fresh independent random
// vectors, where it must equal one pass bit for bit. Modified Gram-Schmidt (the option)
// reproduces the columns too; its loss of orthogonality grows with their conditioning (bounded
// by c u kappa, Bjorck 1967), which the test bounds loosely.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "amg/fgmres_iteration.hpp"
#include "local/core/error.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg {
namespace {

/// arnoldi_orthogonalize's space, the vectors only (amg/fgmres.cpp's HostFgmresSpace has the same
/// project and projection).
struct BasisSpace {
  std::vector<Vector> v;
  std::vector<double> c[2];

  Vector& basis(int i) { return v[std::size_t(i)]; }
  void subtract(Vector& w, double h, const Vector& p) const {
    for (std::size_t j = 0; j < w.size(); ++j) w[j] -= h * p[j];
  }
  double dot(const Vector& p, const Vector& q) const {
    double sum = 0;
    for (std::size_t j = 0; j < p.size(); ++j) sum += p[j] * q[j];
    return sum;
  }
  void project(int count, Vector& w, int pass) {
    c[pass].assign(std::size_t(count), 0.0);
    for (int i = 0; i < count; ++i) c[pass][std::size_t(i)] = dot(w, v[std::size_t(i)]);
    for (std::size_t j = 0; j < w.size(); ++j)
      for (int i = 0; i < count; ++i) w[j] -= c[pass][std::size_t(i)] * v[std::size_t(i)][j];
  }
  const double* projection(int pass) const { return c[pass].data(); }
};

struct Orthogonalized {
  double orthogonality = 0;   // max |v_i^T v_j - delta_ij|
  double reproduction = 0;    // max over k of ||a_k - sum_i h(i, k-1) v_i|| / ||a_k||
  int second_passes = 0;      // steps that projected twice
  std::vector<double> h;      // the Hessenberg columns, k = 0, 1, ..., rows 0 .. k + 1
};

/// Orthonormalises the columns a_0, a_1, ... as FGMRES does its Krylov vectors.
Orthogonalized orthogonalize(const std::vector<Vector>& a, GramSchmidt how) {
  const int m = static_cast<int>(a.size()) - 1;
  BasisSpace s;
  s.v = a;
  const double norm0 = std::sqrt(s.dot(a[0], a[0]));
  for (double& x : s.v[0]) x /= norm0;
  GmresLeastSquares ls(m);
  Orthogonalized out;
  for (int k = 0; k < m; ++k) {
    out.second_passes += arnoldi_orthogonalize(s, k, ls, how);
    for (int i = 0; i <= k + 1; ++i) out.h.push_back(ls.h(i, k));
    for (double& x : s.v[std::size_t(k + 1)]) x /= ls.h(k + 1, k);
    Vector rebuilt(a[0].size(), 0.0);
    for (int i = 0; i <= k + 1; ++i)
      for (std::size_t j = 0; j < rebuilt.size(); ++j) rebuilt[j] += ls.h(i, k) * s.v[std::size_t(i)][j];
    double error = 0, norm = 0;
    for (std::size_t j = 0; j < rebuilt.size(); ++j) {
      error += (rebuilt[j] - a[std::size_t(k + 1)][j]) * (rebuilt[j] - a[std::size_t(k + 1)][j]);
      norm += a[std::size_t(k + 1)][j] * a[std::size_t(k + 1)][j];
    }
    out.reproduction = std::max(out.reproduction, std::sqrt(error / norm));
  }
  for (int i = 0; i <= m; ++i)
    for (int j = 0; j <= m; ++j)
      out.orthogonality =
          std::max(out.orthogonality, std::fabs(s.dot(s.v[std::size_t(i)], s.v[std::size_t(j)]) - (i == j)));
  return out;
}

void expect_twice_is_enough(const std::vector<Vector>& a) {
  const int steps = static_cast<int>(a.size()) - 1;
  const Orthogonalized twice = orthogonalize(a, GramSchmidt::classical_twice);
  EXPECT_LE(twice.orthogonality, 1e-13);  // measured: 2e-16 (Lauchli), 2e-15 (random, n = 500)
  EXPECT_LE(twice.reproduction, 1e-13);
  EXPECT_EQ(twice.second_passes, steps);
  const Orthogonalized once = orthogonalize(a, GramSchmidt::classical_once);
  EXPECT_GE(once.orthogonality, 1e-3) << "one pass kept these orthogonal: the case does not test the second";
  EXPECT_EQ(once.second_passes, 0);
  // Every step cancels here, so the test asks for the second pass every time: CGS2's bits.
  const Orthogonalized if_needed = orthogonalize(a, GramSchmidt::classical_if_needed);
  EXPECT_EQ(if_needed.second_passes, steps);
  EXPECT_EQ(if_needed.h, twice.h);
  const Orthogonalized modified = orthogonalize(a, GramSchmidt::modified);
  EXPECT_LE(modified.reproduction, 1e-13);
  EXPECT_LE(modified.orthogonality, 1e-4);  // measured: 7e-11 (Lauchli), 1e-6 (random)
}

TEST(FgmresArnoldi, ClassicalGramSchmidtTwiceOnLauchliColumns) {
  const int n = 12, m = 10;
  const double delta = 1e-10;
  std::vector<Vector> a(m + 1, Vector(n, 0.0));
  for (int k = 0; k <= m; ++k) a[std::size_t(k)][0] = 1, a[std::size_t(k)][std::size_t(k + 1)] = delta;
  expect_twice_is_enough(a);
}

TEST(FgmresArnoldi, ClassicalGramSchmidtTwiceOnNearlyParallelRandomVectors) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 500;
  const int m = 30;
  const Vector common = testing::random_values(n, seed);
  std::vector<Vector> a;
  for (int k = 0; k <= m; ++k) {
    Vector ak = testing::random_values(n, seed + 1 + std::uint64_t(k));
    for (std::int64_t j = 0; j < n; ++j) ak[std::size_t(j)] = common[std::size_t(j)] + 1e-9 * ak[std::size_t(j)];
    a.push_back(ak);
  }
  expect_twice_is_enough(a);
}

// Independent random vectors are well conditioned: no step cancels, the second pass on demand
// never runs, and one pass keeps them orthogonal.
TEST(FgmresArnoldi, SecondPassOnlyWhereTheFirstCancelled) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 500;
  const int m = 30;
  std::vector<Vector> a;
  for (int k = 0; k <= m; ++k) a.push_back(testing::random_values(n, seed + std::uint64_t(k)));
  const Orthogonalized once = orthogonalize(a, GramSchmidt::classical_once);
  const Orthogonalized if_needed = orthogonalize(a, GramSchmidt::classical_if_needed);
  EXPECT_EQ(if_needed.second_passes, 0);
  EXPECT_EQ(if_needed.h, once.h);
  EXPECT_LE(once.orthogonality, 1e-13);
  EXPECT_LE(once.reproduction, 1e-13);
  // One column in the span of the earlier ones, slightly perturbed: that step alone cancels.
  std::vector<Vector> dependent = a;
  for (std::int64_t j = 0; j < n; ++j) {
    const std::size_t i = std::size_t(j);
    dependent[10][i] = a[3][i] - 2 * a[7][i] + 1e-9 * a[10][i];
  }
  const Orthogonalized one_step = orthogonalize(dependent, GramSchmidt::classical_if_needed);
  EXPECT_EQ(one_step.second_passes, 1);
  EXPECT_LE(one_step.orthogonality, 1e-13);
  EXPECT_LE(one_step.reproduction, 1e-13);
}

TEST(FgmresArnoldi, GramSchmidtNamesRoundTrip) {
  for (const GramSchmidt how : {GramSchmidt::classical_twice, GramSchmidt::classical_if_needed,
                                GramSchmidt::classical_once, GramSchmidt::modified})
    EXPECT_EQ(parse_gram_schmidt(to_string(how)), how);
  EXPECT_STREQ(to_string(GramSchmidt::classical_if_needed), "cgs-ifneeded");
  EXPECT_THROW(parse_gram_schmidt("cgs3"), InputError);
}

}  // namespace
}  // namespace tessera::amg
