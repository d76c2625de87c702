// Host transpose and Galerkin product references: transpose against the dense transpose
// (exact, stable, sorted, explicit zeros kept), P^T A P against the dense triple product.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "local/core/error.hpp"
#include "local/formats/convert.hpp"
#include "local/reference/kernels.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using testing::RandomSpec;
using testing::random_csr;

constexpr double kEps = std::numeric_limits<double>::epsilon();

const std::int64_t kShapes[][2] = {{0, 0}, {1, 1}, {0, 7}, {7, 0}, {7, 9}, {63, 65}, {100, 3}, {3, 100}};

TEST(ReferenceTranspose, MatchesDenseTransposeExactly) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uint64_t i = 0;
  for (const auto& s : kShapes)
    for (double density : {0.0, 0.05, 0.5, 1.0}) {
      SCOPED_TRACE(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " density " + std::to_string(density));
      const Csr<double> a = random_csr({s[0], s[1], density, 0.2, 0.2, true}, seed + i++);
      const Csr<double> t = ref::transpose(a);
      ASSERT_EQ(t.rows, a.cols);
      ASSERT_EQ(t.cols, a.rows);
      ASSERT_NO_THROW(validate(t, "A^T"));  // rows sorted, no duplicates
      const std::vector<double> ad = testing::to_dense(a), td = testing::to_dense(t);
      for (std::int64_t r = 0; r < a.rows; ++r)
        for (std::int64_t c = 0; c < a.cols; ++c) ASSERT_EQ(td[c * a.rows + r], ad[r * a.cols + c]);
      EXPECT_EQ(t.nnz(), a.nnz());
      EXPECT_EQ(ref::transpose(t), a);  // transposing twice is the identity
    }
}

TEST(ReferenceTranspose, KeepsExplicitZerosAndHalfBits) {
  // Explicit zero at (0, 1) and a negative zero at (1, 0) must survive as stored entries.
  Csr<double> a = csr_from_triplets<double>(2, 3, {0, 0, 1, 1}, {1, 2, 0, 2}, {0.0, 1.5, -0.0, 3.0});
  const Csr<double> t = ref::transpose(a);
  EXPECT_EQ(t.row_ptr, (std::vector<std::int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(t.col_idx, (std::vector<std::int32_t>{1, 0, 0, 1}));
  EXPECT_EQ(t.values, (std::vector<double>{-0.0, 0.0, 1.5, 3.0}));
  EXPECT_TRUE(std::signbit(t.values[0]));
  const Csr<Half> h = convert_values<Half, double>(random_csr({37, 29, 0.3}, testing::fresh_seed()));
  const Csr<Half> ht = ref::transpose(h);
  EXPECT_EQ(ref::transpose(ht), h);
  EXPECT_EQ((convert_values<double, Half>(ht)), ref::transpose(convert_values<double, Half>(h)));
}

/// P^T A P by dense loops, with sum |P|^T |A| |P| for the error bound.
struct DenseGalerkin {
  std::vector<double> value, magnitude;
  std::vector<char> structural;  // some stored p_ki, a_kl, p_lj chain exists
};

DenseGalerkin dense_ptap(const Csr<double>& a, const Csr<double>& p) {
  const std::int64_t n = a.rows, m = p.cols;
  const std::vector<double> ad = testing::to_dense(a), pd = testing::to_dense(p);
  std::vector<char> ap(static_cast<std::size_t>(n * n), 0), pp(static_cast<std::size_t>(n * m), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q) ap[r * n + a.col_idx[q]] = 1;
    for (std::int64_t q = p.row_ptr[r]; q < p.row_ptr[r + 1]; ++q) pp[r * m + p.col_idx[q]] = 1;
  }
  DenseGalerkin g{std::vector<double>(static_cast<std::size_t>(m * m), 0.0), {}, std::vector<char>(m * m, 0)};
  g.magnitude = g.value;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t k = 0; k < n; ++k)
        for (std::int64_t l = 0; l < n; ++l) {
          if (!pp[k * m + i] || !ap[k * n + l] || !pp[l * m + j]) continue;
          const double term = pd[k * m + i] * ad[k * n + l] * pd[l * m + j];
          g.value[i * m + j] += term;
          g.magnitude[i * m + j] += std::abs(term);
          g.structural[i * m + j] = 1;
        }
  return g;
}

/// Random aggregation-like prolongator: every fine row maps to one or two coarse columns
/// (some coarse columns may stay empty), so P is n x m with m < n, or any shape asked for.
Csr<double> random_prolongator(std::int64_t n, std::int64_t m, bool integer_values, std::uint64_t seed) {
  return random_csr({n, m, m > 0 ? 2.0 / static_cast<double>(m) : 0.0, 0.1, 0.1, false, integer_values}, seed);
}

void expect_ptap_matches_dense(const Csr<double>& a, const Csr<double>& p, bool exact) {
  const DenseGalerkin d = dense_ptap(a, p);
  const Csr<double> c = ref::ptap(a, p);
  ASSERT_EQ(c.rows, p.cols);
  ASSERT_EQ(c.cols, p.cols);
  ASSERT_NO_THROW(validate(c, "P^T A P"));
  std::vector<char> stored(d.value.size(), 0);
  // Each of the two products sums at most n terms: the computed P^T (A P) errs by at most
  // about 2*gamma_n*(|P|^T |A| |P|), and the dense loop here by gamma_{n^2} times the same
  // magnitude; 2*(n^2 + 2n)*eps*magnitude covers both with room.
  const double n = static_cast<double>(a.rows);
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t q = c.row_ptr[i]; q < c.row_ptr[i + 1]; ++q) {
      const std::int64_t e = i * c.cols + c.col_idx[q];
      stored[e] = 1;
      if (exact)
        ASSERT_EQ(c.values[q], d.value[e]) << "C(" << i << ", " << c.col_idx[q] << ")";
      else
        ASSERT_LE(std::abs(c.values[q] - d.value[e]), 2.0 * (n * n + 2 * n) * kEps * d.magnitude[e]);
    }
  for (std::size_t e = 0; e < stored.size(); ++e) ASSERT_EQ(stored[e] != 0, d.structural[e] != 0) << "entry " << e;
}

TEST(ReferencePtap, MatchesDenseTripleProduct) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t shapes[][2] = {{0, 0}, {1, 1}, {5, 0}, {7, 3}, {9, 9}, {33, 5}, {40, 17}, {20, 30}};
  std::uint64_t i = 0;
  for (const auto& s : shapes)
    for (bool integer_values : {false, true})
      for (double density : {0.05, 0.3, 1.0}) {
        SCOPED_TRACE("A " + std::to_string(s[0]) + "^2, P " + std::to_string(s[0]) + "x" + std::to_string(s[1]) +
                     " density " + std::to_string(density) + (integer_values ? " integer" : ""));
        const Csr<double> a = random_csr({s[0], s[0], density, 0.1, 0.1, true, integer_values}, seed + i++);
        const Csr<double> p = random_prolongator(s[0], s[1], integer_values, seed + i++);
        expect_ptap_matches_dense(a, p, integer_values);
      }
}

TEST(ReferencePtap, HandCheckedAggregation) {
  // 1D Laplacian [2 -1 0 0; -1 2 -1 0; 0 -1 2 -1; 0 0 -1 2], aggregates {0,1} and {2,3}:
  // P^T A P = [2 -1; -1 2].
  const Csr<double> a = csr_from_triplets<double>(4, 4, {0, 0, 1, 1, 1, 2, 2, 2, 3, 3},
                                                  {0, 1, 0, 1, 2, 1, 2, 3, 2, 3},
                                                  {2, -1, -1, 2, -1, -1, 2, -1, -1, 2});
  const Csr<double> p = csr_from_triplets<double>(4, 2, {0, 1, 2, 3}, {0, 0, 1, 1}, {1, 1, 1, 1});
  EXPECT_EQ(ref::ptap(a, p), csr_from_triplets<double>(2, 2, {0, 0, 1, 1}, {0, 1, 0, 1}, {2, -1, -1, 2}));
}

TEST(ReferencePtap, KeepZerosControlsCancelledEntries) {
  // A = [1 1; 1 1], P = [1; -1]: P^T A P = 1 - 1 - 1 + 1 = 0, structurally present.
  const Csr<double> a = csr_from_triplets<double>(2, 2, {0, 0, 1, 1}, {0, 1, 0, 1}, {1, 1, 1, 1});
  const Csr<double> p = csr_from_triplets<double>(2, 1, {0, 1}, {0, 0}, {1, -1});
  EXPECT_EQ(ref::ptap(a, p, {true}), csr_from_triplets<double>(1, 1, {0}, {0}, {0.0}));
  EXPECT_EQ(ref::ptap(a, p, {false}), Csr<double>::empty(1, 1));
}

TEST(ReferencePtap, HalfInputsComputeInDouble) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<Half> a = convert_values<Half, double>(random_csr({41, 41, 0.2, 0.1, 0.1, true}, seed));
  const Csr<Half> p = convert_values<Half, double>(random_prolongator(41, 7, false, seed + 1));
  EXPECT_EQ(ref::ptap(a, p), (ref::ptap(convert_values<double, Half>(a), convert_values<double, Half>(p))));
}

TEST(ReferencePtap, BadShapesAreInputErrors) {
  const Csr<double> square = random_csr({5, 5, 0.5}, 3), p = random_prolongator(5, 2, false, 4);
  EXPECT_THROW(ref::ptap(random_csr({5, 6, 0.5}, 5), p), InputError);  // A not square
  EXPECT_THROW(ref::ptap(square, random_prolongator(6, 2, false, 6)), InputError);  // P rows != n
  EXPECT_NO_THROW(ref::ptap(square, p));
}

}  // namespace
}  // namespace tessera
