#include "support/random_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "local/core/half.hpp"
#include "local/gen/generators.hpp"

namespace tessera::testing {

std::vector<double> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}


Csr<double> random_csr(const RandomSpec& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0), v(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<char> empty_col(static_cast<std::size_t>(s.cols), 0);
  for (auto& e : empty_col) e = u(rng) < s.empty_col_fraction;
  const std::int64_t dense_row = (s.dense_row && s.rows > 0) ? static_cast<std::int64_t>(u(rng) * s.rows) : -1;
  Csr<double> m = Csr<double>::empty(s.rows, s.cols);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const bool empty = r != dense_row && u(rng) < s.empty_row_fraction;
    for (std::int64_t c = 0; c < s.cols && !empty; ++c) {
      if (empty_col[c] && r != dense_row) continue;
      if (r != dense_row && u(rng) >= s.density) continue;
      double x = s.integer_values ? small(rng) : v(rng);
      if (x == 0) x = 1;
      m.col_idx.push_back(static_cast<std::int32_t>(c));
      m.values.push_back(x);
    }
    m.row_ptr[r + 1] = m.nnz();
  }
  return m;
}

Csr<double> diagonally_dominant_spd(const Csr<double>& a, OffDiagonalSigns signs) {
  std::vector<std::int64_t> ri, ci;
  std::vector<double> v;
  std::vector<double> diag(static_cast<std::size_t>(a.rows), 1.0);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const std::int64_t j = a.col_idx[p];
      if (i == j) continue;
      // Both triplets of every entry: csr_from_triplets sums a_ij's with a_ji's into one value.
      const double x = signs == OffDiagonalSigns::kept ? a.values[p] : -std::abs(a.values[p]);
      ri.insert(ri.end(), {i, j});
      ci.insert(ci.end(), {j, i});
      v.insert(v.end(), {x, x});
      diag[i] += std::abs(x);
      diag[j] += std::abs(x);
    }
  for (std::int64_t i = 0; i < a.rows; ++i) ri.push_back(i), ci.push_back(i), v.push_back(diag[i]);
  return csr_from_triplets(a.rows, a.cols, ri, ci, v);
}

Csr<double> power_law_spd(int scale, int edge_factor, std::uint64_t seed) {
  return diagonally_dominant_spd(gen::generate(gen::parse_spec(
      "rmat:" + std::to_string(scale) + ":" + std::to_string(edge_factor) + ":seed=" + std::to_string(seed))));
}

Csr<double> scattering_permutation(std::int64_t rows) {
  std::vector<std::int64_t> r(rows), c(rows);
  for (std::int64_t i = 0; i < rows; ++i) r[i] = i, c[i] = (i * 257) % rows;
  return csr_from_triplets<double>(rows, rows, r, c, std::vector<double>(rows, 1.0));
}

template <class T>
std::vector<double> to_dense(const Csr<T>& a) {
  std::vector<double> d(static_cast<std::size_t>(a.rows * a.cols), 0.0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) d[r * a.cols + a.col_idx[k]] += to_double(a.values[k]);
  return d;
}
template std::vector<double> to_dense(const Csr<double>&);
template std::vector<double> to_dense(const Csr<float>&);
template std::vector<double> to_dense(const Csr<Half>&);

std::uint64_t fresh_seed() {
  // TESSERA_TEST_SEED replays the seed a failed test printed.
  if (const char* fixed = std::getenv("TESSERA_TEST_SEED")) return std::strtoull(fixed, nullptr, 10);
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace tessera::testing
