// Host SpMV/SpMM references against a dense product computed here: alpha/beta variants,
// beta = 0 on a NaN-poisoned output, every X/Y layout pair, odd k, odd shapes, bad shapes.
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
const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Scaling {
  double alpha, beta;
};
const Scaling kScalings[] = {{1, 0}, {1, 1}, {2.5, -0.75}, {0, 1}, {-1, 0.5}, {0, 0}};

const std::int64_t kShapes[][2] = {{0, 0}, {1, 1}, {0, 7}, {7, 0}, {7, 9}, {63, 65}, {100, 3}, {3, 100}};

std::vector<double> random_vector(std::int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

/// Expected alpha*(A x)_i + beta*y_i with its error bound: the row sum of n products errs by
/// gamma_n*sum|a||x| (Higham eq. 3.5, gamma_n ~ n*eps/2) in both the test and the reference;
/// scaling and the beta term add a few roundings more, covered by n + 2 and a factor 2.
struct Expected {
  double value, bound;
};
Expected expected_entry(const std::vector<double>& dense_a, std::int64_t cols, std::int64_t i,
                        const std::vector<double>& x, Scaling s, double y_old) {
  double sum = 0, magnitude = 0;
  for (std::int64_t k = 0; k < cols; ++k) {
    sum += dense_a[i * cols + k] * x[k];
    magnitude += std::abs(dense_a[i * cols + k] * x[k]);
  }
  const double beta_term = s.beta == 0 ? 0.0 : s.beta * y_old;
  const double scale = std::abs(s.alpha) * magnitude + std::abs(beta_term);
  return {s.alpha * sum + beta_term, 2.0 * static_cast<double>(cols + 2) * kEps * scale};
}

TEST(ReferenceSpmv, MatchesDenseForEveryScaling) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const auto& shape : kShapes)
    for (double density : {0.0, 0.1, 1.0})
      for (const Scaling s : kScalings) {
        SCOPED_TRACE(std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " density " + std::to_string(density) +
                     " alpha " + std::to_string(s.alpha) + " beta " + std::to_string(s.beta));
        const Csr<double> a = random_csr({shape[0], shape[1], density, 0.2, 0.2, true}, rng());
        const std::vector<double> x = random_vector(a.cols, rng), y0 = random_vector(a.rows, rng);
        std::vector<double> y = y0;
        if (s.beta == 0) std::fill(y.begin(), y.end(), kNaN);  // beta == 0 must not read y
        ref::spmv(s.alpha, a, x, s.beta, y);
        const std::vector<double> dense_a = testing::to_dense(a);
        for (std::int64_t i = 0; i < a.rows; ++i) {
          const Expected e = expected_entry(dense_a, a.cols, i, x, s, y0[i]);
          ASSERT_FALSE(std::isnan(y[i])) << "row " << i;
          ASSERT_LE(std::abs(y[i] - e.value), e.bound) << "row " << i;
        }
      }
}

TEST(ReferenceSpmv, HandChecked) {
  // [2 0 -1; 0 0 0] * [1 2 3] = [-1 0]; y = 3*Ax - 1*y with y = [10 20] -> [-13 -20].
  const Csr<double> a = csr_from_triplets<double>(2, 3, {0, 0}, {0, 2}, {2, -1});
  std::vector<double> y{10, 20};
  ref::spmv(3.0, a, {1, 2, 3}, -1.0, y);
  EXPECT_EQ(y, (std::vector<double>{-13, -20}));
}

template <class T>
void expect_low_precision_matches_double_of_rounded_values(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Csr<T> a = convert_values<T, double>(random_csr({37, 29, 0.3, 0.1, 0.1, true}, rng()));
  const Csr<double> ad = convert_values<double, T>(a);
  const std::vector<double> x = random_vector(a.cols, rng);
  std::vector<double> y = random_vector(a.rows, rng), yd = y;
  ref::spmv(1.5, a, x, -0.5, y);
  ref::spmv(1.5, ad, x, -0.5, yd);
  EXPECT_EQ(y, yd);
  DenseMatrix xm(a.cols, 3, Layout::col_major), ym(a.rows, 3, Layout::row_major, 1.0), ymd = ym;
  xm.data = random_vector(a.cols * 3, rng);
  ref::spmm(1.5, a, xm, -0.5, ym);
  ref::spmm(1.5, ad, xm, -0.5, ymd);
  EXPECT_EQ(ym.data, ymd.data);
}

TEST(ReferenceSpmvSpmm, FloatAndHalfInputsComputeInDouble) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int trial = 0; trial < 10; ++trial) {
    expect_low_precision_matches_double_of_rounded_values<float>(seed + trial);
    expect_low_precision_matches_double_of_rounded_values<Half>(seed + trial);
  }
}

DenseMatrix random_dense(std::int64_t rows, std::int64_t cols, Layout layout, std::mt19937_64& rng) {
  DenseMatrix m(rows, cols, layout);
  m.data = random_vector(rows * cols, rng);
  return m;
}

TEST(ReferenceSpmm, MatchesDenseForEveryLayoutPair) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const auto& shape : kShapes)
    for (std::int64_t k : {1, 3, 8, 13})
      for (Layout xl : {Layout::row_major, Layout::col_major})
        for (Layout yl : {Layout::row_major, Layout::col_major})
          for (const Scaling s : {kScalings[0], kScalings[2], kScalings[3]}) {
            SCOPED_TRACE(std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " k " + std::to_string(k) +
                         " X " + (xl == Layout::row_major ? "row" : "col") + " Y " +
                         (yl == Layout::row_major ? "row" : "col") + " beta " + std::to_string(s.beta));
            const Csr<double> a = random_csr({shape[0], shape[1], 0.2, 0.2, 0.2, true}, rng());
            const DenseMatrix x = random_dense(a.cols, k, xl, rng), y0 = random_dense(a.rows, k, yl, rng);
            DenseMatrix y = y0;
            if (s.beta == 0) std::fill(y.data.begin(), y.data.end(), kNaN);
            ref::spmm(s.alpha, a, x, s.beta, y);
            const std::vector<double> dense_a = testing::to_dense(a);
            for (std::int64_t j = 0; j < k; ++j) {
              std::vector<double> x_col(static_cast<std::size_t>(a.cols));
              for (std::int64_t r = 0; r < a.cols; ++r) x_col[r] = x.at(r, j);
              for (std::int64_t i = 0; i < a.rows; ++i) {
                const Expected e = expected_entry(dense_a, a.cols, i, x_col, s, y0.at(i, j));
                ASSERT_LE(std::abs(y.at(i, j) - e.value), e.bound) << "Y(" << i << ", " << j << ")";
              }
            }
          }
}

TEST(ReferenceSpmm, EachColumnEqualsSpmvBitForBit) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Csr<double> a = random_csr({63, 65, 0.3, 0.1, 0.1, true}, rng());
  const DenseMatrix x = random_dense(a.cols, 5, Layout::col_major, rng);
  DenseMatrix y = random_dense(a.rows, 5, Layout::row_major, rng);
  const DenseMatrix y0 = y;
  ref::spmm(0.75, a, x, 2.0, y);
  for (std::int64_t j = 0; j < x.cols; ++j) {
    std::vector<double> xj(x.data.begin() + j * x.rows, x.data.begin() + (j + 1) * x.rows), yj(a.rows);
    for (std::int64_t i = 0; i < a.rows; ++i) yj[i] = y0.at(i, j);
    ref::spmv(0.75, a, xj, 2.0, yj);
    for (std::int64_t i = 0; i < a.rows; ++i) ASSERT_EQ(y.at(i, j), yj[i]) << "Y(" << i << ", " << j << ")";
  }
}

TEST(ReferenceSpmvSpmm, BadShapesAreInputErrors) {
  const Csr<double> a = random_csr({4, 3, 0.5}, 7);
  std::vector<double> y(4);
  EXPECT_THROW(ref::spmv(1.0, a, std::vector<double>(4), 0.0, y), InputError);  // x too long
  std::vector<double> short_y(3);
  EXPECT_THROW(ref::spmv(1.0, a, std::vector<double>(3), 0.0, short_y), InputError);
  DenseMatrix ym(4, 2, Layout::row_major);
  EXPECT_THROW(ref::spmm(1.0, a, DenseMatrix(4, 2, Layout::row_major), 0.0, ym), InputError);  // X rows
  DenseMatrix y_rows(5, 2, Layout::row_major);
  EXPECT_THROW(ref::spmm(1.0, a, DenseMatrix(3, 2, Layout::row_major), 0.0, y_rows), InputError);
  EXPECT_THROW(ref::spmm(1.0, a, DenseMatrix(3, 3, Layout::row_major), 0.0, ym), InputError);  // k differs
  DenseMatrix truncated = DenseMatrix(3, 2, Layout::col_major);
  truncated.data.pop_back();
  EXPECT_THROW(ref::spmm(1.0, a, truncated, 0.0, ym), InputError);
}

}  // namespace
}  // namespace tessera
