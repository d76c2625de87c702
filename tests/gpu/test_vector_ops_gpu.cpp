// The device vector steps of the Krylov solvers (local/cuda/vector_ops.hpp) against their host
// formulas, on fresh random vectors of odd lengths (0, 1, one block and one past it, several
// grid strides), vectors stored with padding between them (stride > n), and outputs poisoned
// with NaN:
//   - DeviceMultiDot's totals equal DeviceDot's for each pair bit for bit (the same summation
//     order, which the solvers' reproducibility rests on) and the host sum within its rounding
//     bound, for counts on both sides of the 8 vectors one thread reads together;
//   - combine(): y + alpha * sum c_i v_i within the rounding of count fused terms, the entries
//     past n untouched, from 0 to 4100 coefficients;
//   - axpby() and diagonal_axpby(): the host formula within its rounding, y unread when beta is 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "local/cuda/device_buffer.hpp"
#include "local/cuda/vector_ops.hpp"
#include "support/random_matrix.hpp"

namespace tessera::cuda {
namespace {

using tessera::testing::fresh_seed;
using tessera::testing::random_values;

constexpr double kUnit = std::numeric_limits<double>::epsilon() / 2;

/// gamma_m = m u / (1 - m u): the bound on the relative error of a sum of m rounded terms.
double gamma(std::int64_t m) { return double(m) * kUnit / (1 - double(m) * kUnit); }

TEST(DeviceMultiDot, EqualsDeviceDotAndTheHostSum) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const std::int64_t n : {0, 1, 255, 256, 257, 1000003}) {
    for (const int count : {1, 7, 8, 9, 17, 31}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", count " + std::to_string(count));
      const std::int64_t stride = n + 5;  // padding between the vectors: not read
      const std::vector<double> v = random_values(stride * count, seed + std::uint64_t(n) + std::uint64_t(count));
      const std::vector<double> w = random_values(n, seed + 1);
      DeviceBuffer<double> dv, dw, totals{std::size_t(count)};
      dv.upload(v);
      dw.upload(w);
      totals.fill_bytes(0xff);
      DeviceMultiDot dots;
      dots.sums_into(n, dv.data(), stride, count, dw.data(), totals.data());
      const std::vector<double> got = totals.download();
      DeviceDot dot;
      for (int i = 0; i < count; ++i) {
        const double* vi = dv.data() + std::int64_t(i) * stride;
        EXPECT_EQ(got[i], dot(n, vi, dw.data())) << "vector " << i << ": not DeviceDot's summation order";
        double sum = 0, magnitude = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          sum += v[i * stride + j] * w[j];
          magnitude += std::fabs(v[i * stride + j] * w[j]);
        }
        EXPECT_LE(std::fabs(got[i] - sum), 2 * gamma(n + 2) * magnitude) << "vector " << i;
      }
    }
  }
}

TEST(DeviceCombine, AddsTheCombinationInPlace) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    std::int64_t n;
    int count;
  };
  for (const Case c : {Case{0, 3}, Case{1, 1}, Case{257, 9}, Case{1000003, 31}, Case{300, 4100}, Case{50, 0}}) {
    for (const double alpha : {-1.0, 0.75}) {
      SCOPED_TRACE("n " + std::to_string(c.n) + ", count " + std::to_string(c.count) + ", alpha " + std::to_string(alpha));
      const std::int64_t stride = c.n + 3;
      const std::vector<double> v = random_values(stride * c.count, seed + std::uint64_t(c.n));
      const std::vector<double> coefficients = random_values(c.count, seed + 7);
      std::vector<double> y = random_values(c.n + 2, seed + 9);  // two entries past n: must stay
      DeviceBuffer<double> dv, dc, dy;
      dv.upload(v);
      dc.upload(coefficients);
      dy.upload(y);
      combine(c.n, alpha, dv.data(), stride, c.count, dc.data(), dy.data());
      const std::vector<double> got = dy.download();
      for (std::int64_t j = 0; j < c.n; ++j) {
        double want = y[j], magnitude = std::fabs(y[j]);
        for (int i = 0; i < c.count; ++i) {
          want += alpha * coefficients[i] * v[i * stride + j];
          magnitude += std::fabs(alpha * coefficients[i] * v[i * stride + j]);
        }
        ASSERT_LE(std::fabs(got[j] - want), 2 * gamma(2 * c.count + 2) * magnitude) << "entry " << j;
      }
      EXPECT_EQ(got[c.n], y[c.n]) << "wrote past n";
      EXPECT_EQ(got[c.n + 1], y[c.n + 1]) << "wrote past n";
    }
  }
}

// beta == 0 must not read y (the header's BLAS contract; the kernels branch on it), so y is NaN
// there; two guard entries past n must stay. alpha*x and alpha*(d*x) + beta*y round at most 2
// and 3 times on each side, hence twice gamma of that count relative to the terms' magnitudes.
TEST(DeviceAxpby, PlainAndDiagonalMatchTheHostFormula) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double alpha = -1.25;
  for (const std::int64_t n : {0, 1, 255, 256, 257, 1000003}) {
    for (const double beta : {0.0, 0.5}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", beta " + std::to_string(beta));
      const std::vector<double> x = random_values(n, seed + std::uint64_t(n));
      const std::vector<double> d = random_values(n, seed + 3);
      std::vector<double> y = random_values(n + 2, seed + 9);
      if (beta == 0) std::fill(y.begin(), y.begin() + n, std::numeric_limits<double>::quiet_NaN());
      DeviceBuffer<double> dx, dd, dy, dz;
      dx.upload(x);
      dd.upload(d);
      dy.upload(y);
      dz.upload(y);
      axpby(n, alpha, dx.data(), beta, dy.data());
      diagonal_axpby(n, alpha, dd.data(), dx.data(), beta, dz.data());
      const std::vector<double> got = dy.download(), got_diagonal = dz.download();
      for (std::int64_t j = 0; j < n; ++j) {
        const double old = beta == 0 ? 0.0 : y[j];  // the NaN is never read
        const double want = alpha * x[j] + beta * old, magnitude = std::fabs(alpha * x[j]) + std::fabs(beta * old);
        ASSERT_LE(std::fabs(got[j] - want), 2 * gamma(2) * magnitude) << "axpby entry " << j << ": " << got[j];
        const double scaled = alpha * (d[j] * x[j]), want_diagonal = scaled + beta * old;
        const double bound = 2 * gamma(3) * (std::fabs(scaled) + std::fabs(beta * old));
        ASSERT_LE(std::fabs(got_diagonal[j] - want_diagonal), bound)
            << "diagonal_axpby entry " << j << ": " << got_diagonal[j];
      }
      for (std::int64_t j = n; j < n + 2; ++j) {
        EXPECT_EQ(got[j], y[j]) << "axpby wrote past n";
        EXPECT_EQ(got_diagonal[j], y[j]) << "diagonal_axpby wrote past n";
      }
    }
  }
}

}  // namespace
}  // namespace tessera::cuda
