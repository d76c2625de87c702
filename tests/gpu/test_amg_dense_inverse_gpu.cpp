// The coarse solver's own dense kernels (amg/cuda/dense_inverse.hpp) against host references:
// the inverse from a Cholesky factor (host factor, the upper triangle poisoned, since the
// kernels must read the lower one only) against the host DenseCoarseSolver's solves on the
// identity, and at the largest order by its residual and its symmetry; the residual row sums and the dense
// product against plain host loops. Odd sizes, 1x1 and 0x0; outputs poisoned with NaN first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "amg/coarse_solver.hpp"
#include "amg/cuda/dense_inverse.hpp"
#include "local/cuda/device_matrix.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg {
namespace {

using tessera::cuda::DeviceBuffer;

DeviceBuffer<double> poisoned(std::size_t count) {
  DeviceBuffer<double> d(count);
  d.fill_bytes(0xff, nullptr);  // NaN: an entry left unwritten shows
  return d;
}

/// A random sparse SPD matrix with mixed-sign off-diagonal entries (diagonally dominant).
Csr<double> random_spd(std::int64_t n, std::uint64_t seed) {
  testing::RandomSpec spec;
  spec.rows = spec.cols = n;
  spec.density = std::min(1.0, 4.0 / double(n));
  return testing::diagonally_dominant_spd(testing::random_csr(spec, seed), testing::OffDiagonalSigns::kept);
}

/// Column-major lower Cholesky factor of `a` by the textbook loop; the upper triangle holds NaN.
std::vector<double> host_cholesky(const Csr<double>& a) {
  const std::int64_t n = a.rows;
  std::vector<double> l(std::size_t(n * n), std::nan(""));
  std::vector<double> dense(std::size_t(n * n), 0.0);  // row-major A
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) dense[i * n + a.col_idx[p]] = a.values[p];
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) {
      double s = dense[i * n + j];
      for (std::int64_t k = 0; k < j; ++k) s -= l[k * n + i] * l[k * n + j];
      l[j * n + i] = i == j ? std::sqrt(s) : s / l[j * n + j];
    }
  return l;
}

std::vector<double> device_inverse(std::int64_t n, const std::vector<double>& factor) {
  DeviceBuffer<double> l, scratch = poisoned(factor.size()), x = poisoned(factor.size());
  l.upload(factor, nullptr);
  gpu::inverse_from_cholesky(n, l.data(), scratch.data(), x.data(), nullptr);
  return x.download(nullptr);
}

/// sum_j |(A X)(i, j) - delta(i, j)| for each row i, X row-major: the plain loops.
std::vector<double> host_residual_row_sums(const Csr<double>& a, const std::vector<double>& x) {
  const std::int64_t n = a.rows;
  std::vector<double> sums(std::size_t(n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double e = i == j ? -1.0 : 0.0;
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) e += a.values[p] * x[a.col_idx[p] * n + j];
      sums[i] += std::abs(e);
    }
  return sums;
}

/// ||I - A X||_inf.
double host_inverse_residual(const Csr<double>& a, const std::vector<double>& x) {
  const std::vector<double> sums = host_residual_row_sums(a, x);
  return sums.empty() ? 0.0 : *std::max_element(sums.begin(), sums.end());
}

TEST(DenseInverse, FromCholeskyMatchesTheHostSolvesOnTheIdentity) {
  // Orders on both sides of the kernel's 4-column blocks, 32-row panels and 128-term tiles (a
  // panel's sum over 128 + 32 rows below it: 161; several tiles forward and backward: 417).
  for (const std::int64_t n : {1, 2, 3, 4, 5, 7, 31, 32, 33, 64, 65, 130, 161, 301, 417}) {
    const std::uint64_t seed = testing::fresh_seed();
    SCOPED_TRACE("n " + std::to_string(n) + ", seed " + std::to_string(seed));
    const Csr<double> a = random_spd(n, seed);
    const std::vector<double> x = device_inverse(n, host_cholesky(a));
    DenseCoarseSolver host;
    host.factor(a);
    std::vector<double> e(std::size_t(n), 0.0), column;
    double scale = 0;
    std::vector<double> reference(std::size_t(n * n));
    for (std::int64_t j = 0; j < n; ++j) {
      e[j] = 1.0;
      host.solve(e, column);
      e[j] = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        reference[i * n + j] = column[i];
        scale = std::max(scale, std::abs(column[i]));
      }
    }
    for (std::size_t k = 0; k < x.size(); ++k) ASSERT_NEAR(x[k], reference[k], 1e-12 * scale) << "entry " << k;
    EXPECT_LE(host_inverse_residual(a, x), 1e-12 * double(n));
    for (std::int64_t i = 0; i < n; ++i)  // each entry is written once, mirrored
      for (std::int64_t j = 0; j < i; ++j) ASSERT_EQ(x[i * n + j], x[j * n + i]) << i << ", " << j;
  }
}

/// The largest order the kernel takes, a 1D Laplacian shifted to be well conditioned: its
/// factor is bidiagonal (computed in O(n)), its inverse dense; checked by ||I - A X||.
TEST(DenseInverse, FromCholeskyAtTheLargestOrder) {
  const std::int64_t n = gpu::kOwnInverseMaxRows;
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0) rows.push_back(i), cols.push_back(i - 1), vals.push_back(-1.0);
    rows.push_back(i), cols.push_back(i), vals.push_back(2.5);
    if (i + 1 < n) rows.push_back(i), cols.push_back(i + 1), vals.push_back(-1.0);
  }
  const Csr<double> a = csr_from_triplets<double>(n, n, rows, cols, vals);
  std::vector<double> l(std::size_t(n * n), std::nan(""));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) l[j * n + i] = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double sub = i > 0 ? -1.0 / l[(i - 1) * n + (i - 1)] : 0.0;
    if (i > 0) l[(i - 1) * n + i] = sub;
    l[i * n + i] = std::sqrt(2.5 - sub * sub);
  }
  const std::vector<double> x = device_inverse(n, l);
  ASSERT_TRUE(std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }));
  EXPECT_LE(host_inverse_residual(a, x), 1e-12);
  for (std::int64_t i = 0; i < n; i += 97)  // each entry below the diagonal mirrored above it
    for (std::int64_t j = 0; j < i; j += 13) ASSERT_EQ(x[i * n + j], x[j * n + i]) << i << ", " << j;
}

TEST(DenseInverse, ResidualRowSumsMatchTheHost) {
  for (const std::int64_t n : {0, 1, 5, 37, 300}) {
    const std::uint64_t seed = testing::fresh_seed();
    SCOPED_TRACE("n " + std::to_string(n) + ", seed " + std::to_string(seed));
    testing::RandomSpec spec;
    spec.rows = spec.cols = n;
    spec.density = 0.2;
    spec.empty_row_fraction = 0.1;
    const Csr<double> a = testing::random_csr(spec, seed);
    const std::vector<double> x = testing::random_values(n * n, seed + 1);
    DeviceBuffer<double> dx, sums = poisoned(std::size_t(n));
    dx.upload(x, nullptr);
    gpu::inverse_residual_row_sums(tessera::cuda::upload(a), dx.data(), sums.data(), nullptr);
    const std::vector<double> got = sums.download(nullptr), expected = host_residual_row_sums(a, x);
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(got[i], expected[i], 1e-12 * std::max(1.0, expected[i])) << "row " << i;
  }
}

TEST(DenseInverse, DenseMultiplyMatchesTheHostAndRepeats) {
  for (const std::int64_t n : {0, 1, 5, 33, 130, 601}) {
    const std::uint64_t seed = testing::fresh_seed();
    SCOPED_TRACE("n " + std::to_string(n) + ", seed " + std::to_string(seed));
    const std::vector<double> x = testing::random_values(n * n, seed), b = testing::random_values(n, seed + 1);
    DeviceBuffer<double> dx, db, y = poisoned(std::size_t(n));
    dx.upload(x, nullptr), db.upload(b, nullptr);
    gpu::dense_multiply(n, dx.data(), db.data(), y.data(), nullptr);
    const std::vector<double> got = y.download(nullptr);
    for (std::int64_t i = 0; i < n; ++i) {
      double yi = 0, size = 0;
      for (std::int64_t j = 0; j < n; ++j) yi += x[i * n + j] * b[j], size += std::abs(x[i * n + j] * b[j]);
      ASSERT_NEAR(got[i], yi, 1e-14 * std::max(1.0, size)) << "row " << i;
    }
    gpu::dense_multiply(n, dx.data(), db.data(), y.data(), nullptr);
    EXPECT_EQ(y.download(nullptr), got) << "a second product differs";
  }
}

}  // namespace
}  // namespace tessera::amg
