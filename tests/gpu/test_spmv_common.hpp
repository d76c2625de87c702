#pragma once
// Shared by the SpMV/SpMM GPU tests: random vectors rounded to the device precision, device
// round trips, the test matrices, and the forward error bound every result is held to.
//
// Tolerance: inputs are rounded to T before the double-precision reference runs, so the only
// error is the device's arithmetic. A sum of n products in any order (split rows included) is
// within gamma_n = n*u/(1-n*u) of the exact one relative to the sum of magnitudes, so entry i
// must satisfy |y_i - ref_i| <= (n_i + 3) * u * (|alpha| sum_j |a_ij x_j| + |beta y_i|) with
// u = 2^-53 (fp64) or 2^-24 (fp32); the +3 covers the alpha/beta scaling and the final add.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "local/cuda/device_buffer.hpp"
#include "local/formats/csr.hpp"
#include "local/gen/generators.hpp"
#include "support/random_matrix.hpp"

namespace tessera::testing {

template <class T>
constexpr double unit_roundoff() { return std::numeric_limits<T>::epsilon() / 2; }

/// Values in [-1, 1], rounded to T (so host and device see the same inputs).
template <class T>
std::vector<double> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& e : v) e = static_cast<double>(static_cast<T>(dist(rng)));
  return v;
}

template <class T>
cuda::DeviceBuffer<T> to_device(const std::vector<double>& v) {
  cuda::DeviceBuffer<T> d;
  d.upload(std::vector<T>(v.begin(), v.end()));
  return d;
}

template <class T>
std::vector<double> to_host(const cuda::DeviceBuffer<T>& d) {
  const std::vector<T> h = d.download();
  return std::vector<double>(h.begin(), h.end());
}

struct NamedMatrix {
  std::string name;
  Csr<double> a;
};

/// One row of n entries among empty rows: the worst imbalance.
inline Csr<double> dense_row_among_empty(std::int64_t n, std::int64_t dense_row, std::uint64_t seed) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(n), dense_row), c(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) c[j] = j;
  return csr_from_triplets<double>(n, n, r, c, random_values<double>(n, seed));
}

/// n rows of three entries, and row n/2 with `long_row` entries (columns 0..long_row-1).
inline Csr<double> long_row_among_rows_of_three(std::int64_t n, std::int64_t long_row, std::uint64_t seed) {
  std::vector<std::int64_t> r, c;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == n / 2) continue;
    for (std::int64_t j : {i, (i + 1) % n, (i + 5) % n}) r.push_back(i), c.push_back(j);
  }
  for (std::int64_t j = 0; j < long_row; ++j) r.push_back(n / 2), c.push_back(j);
  return csr_from_triplets<double>(n, n, r, c, random_values<double>(static_cast<std::int64_t>(r.size()), seed));
}

/// Skewed rows that the automatic SpMV and SpMM plans give to the nnz split (odd sizes, empty
/// rows between the long ones), each with a row of hundreds to thousands of entries that
/// crosses chunk boundaries.
inline std::vector<NamedMatrix> nnz_split_matrices(std::uint64_t seed) {
  const std::string rmat_seed = ":seed=" + std::to_string(seed % 1000 + 1);
  std::vector<NamedMatrix> m;
  m.push_back({"row of 15001 among 20011 rows of 3", long_row_among_rows_of_three(20011, 15001, seed)});
  m.push_back({"dense row among 30001 empty rows", dense_row_among_empty(30001, 12345, seed + 1)});
  m.push_back({"random 4099x3001, dense row, 30% empty rows",
               random_csr({4099, 3001, 0.001, 0.3, 0.0, true, false}, seed + 2)});
  m.push_back({"power-law SPD (R-MAT 13:8)", power_law_spd(13, 8, seed % 1000 + 1)});
  m.push_back({"rmat:13:8 (40% empty rows)", gen::generate(gen::parse_spec("rmat:13:8" + rmat_seed))});
  return m;
}

/// Entries whose bits differ (run-to-run repeatability is bitwise, not within a bound).
inline std::int64_t bit_differences(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return static_cast<std::int64_t>(std::max(a.size(), b.size()));
  std::int64_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(double)) != 0;
  return n;
}

/// Runs `product()` (y, already checked against the reference by the caller's lambda) `runs`
/// times: every run's y must equal the first's bit for bit.
template <class Product>
void expect_bitwise_repeatable(int runs, Product&& product) {
  const std::vector<double> first = product();
  for (int run = 1; run < runs; ++run)
    EXPECT_EQ(bit_differences(product(), first), 0) << "run " << run << " differs from run 0";
}

/// Random (fresh seed), structured (Poisson, elasticity, rmat) and edge-case matrices.
inline std::vector<NamedMatrix> test_matrices(std::uint64_t seed) {
  std::vector<NamedMatrix> m;
  m.push_back({"random 1000x917 with empty rows", random_csr({1000, 917, 0.01, 0.2, 0.1, false, false}, seed)});
  m.push_back({"random 333x333 dense row", random_csr({333, 333, 0.02, 0.5, 0.0, true, false}, seed + 1)});
  m.push_back({"random 77x3000 long rows", random_csr({77, 3000, 0.15, 0.0, 0.0, false, false}, seed + 2)});
  m.push_back({"dense row among empty rows", dense_row_among_empty(3001, 1500, seed + 3)});
  m.push_back({"poisson3d:11", gen::generate(gen::parse_spec("poisson3d:11"))});
  m.push_back({"poisson3d27:7", gen::generate(gen::parse_spec("poisson3d27:7"))});
  m.push_back({"elasticity3d:5", gen::generate(gen::parse_spec("elasticity3d:5"))});
  m.push_back({"rmat:11:8", gen::generate(gen::parse_spec("rmat:11:8:seed=" + std::to_string(seed % 1000 + 1)))});
  m.push_back({"1x1", csr_from_triplets<double>(1, 1, {0}, {0}, {-2.5})});
  m.push_back({"0 rows", Csr<double>::empty(0, 4)});
  m.push_back({"all empty 9x9", Csr<double>::empty(9, 9)});
  return m;
}

/// Per row: number of stored entries and sum_j |a_ij| |x_j|, for the error bound.
struct RowMagnitudes {
  std::vector<std::int64_t> length;
  std::vector<double> abs_sum;
};

template <class T>
RowMagnitudes row_magnitudes(const Csr<T>& a, const std::vector<double>& x, std::int64_t k = 1, std::int64_t col = 0,
                             bool row_major = true) {
  RowMagnitudes m{std::vector<std::int64_t>(static_cast<std::size_t>(a.rows)),
                  std::vector<double>(static_cast<std::size_t>(a.rows))};
  for (std::int64_t i = 0; i < a.rows; ++i) {
    m.length[i] = a.row_length(i);
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const std::int64_t j = a.col_idx[p];
      const double xv = row_major ? x[j * k + col] : x[col * a.cols + j];
      m.abs_sum[i] += std::abs(static_cast<double>(a.values[p]) * xv);
    }
  }
  return m;
}

/// Counts entries outside the bound (NaN always counts) and records the first for the message.
struct BoundCheck {
  std::int64_t failures = 0;
  std::string first;
  void expect(bool ok, const std::string& where) {
    if (!ok && failures++ == 0) first = where;
  }
};

inline bool within(double got, double want, double bound) { return std::abs(got - want) <= bound; }

/// A result against a reference that holds Inf/NaN: `wrong` counts entries that are not NaN
/// where the reference is, not the same infinity where it is infinite, or off by more than
/// 1e-12 relative elsewhere; `non_finite` counts the reference's non-finite entries (a test
/// asserts it is > 0, else the case is not exercised).
struct NonFiniteComparison {
  std::int64_t wrong = 0, non_finite = 0;
};

inline NonFiniteComparison compare_with_non_finite(const std::vector<double>& got, const std::vector<double>& want) {
  NonFiniteComparison c;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want[i];
    c.non_finite += !std::isfinite(w);
    if (std::isnan(w)) c.wrong += !std::isnan(got[i]);
    else if (std::isinf(w)) c.wrong += got[i] != w;
    else c.wrong += !(std::abs(got[i] - w) <= 1e-12 * (1 + std::abs(w)));
  }
  return c;
}

}  // namespace tessera::testing
