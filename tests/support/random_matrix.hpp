#pragma once
// Builders for test inputs: random sparse matrices with controllable oddities (empty rows and
// columns, a dense row), SPD matrices on random and power-law patterns, dense conversions, and
// value comparison helpers.
#include <cstdint>
#include <random>
#include <vector>

#include "local/formats/csr.hpp"

namespace tessera::testing {

struct RandomSpec {
  std::int64_t rows = 0, cols = 0;
  double density = 0.1;          // probability that an entry is stored
  double empty_row_fraction = 0; // rows forced empty
  double empty_col_fraction = 0; // columns forced empty
  bool dense_row = false;        // make one row fully dense
  bool integer_values = false;   // small integers: products are exact in every precision
};

/// Random matrix with values in [-1, 1] (or small integers), reproducible from `seed`.
Csr<double> random_csr(const RandomSpec& spec, std::uint64_t seed);

/// Signs of diagonally_dominant_spd's off-diagonal entries.
enum class OffDiagonalSigns {
  negative,  // m_ij = -(|a_ij| + |a_ji|): an M-matrix, as discretised diffusion gives
  kept,      // m_ij = a_ij + a_ji: mixed signs, as in elasticity or a random symmetric matrix
};

/// SPD matrix on the pattern of A + A^T (square `a`, its diagonal ignored): m_ij = m_ji as
/// `signs` says off the diagonal, m_ii = 1 + sum_j (|a_ij| + |a_ji|) >= 1 + sum_j |m_ij| (equal
/// for negative signs). Strictly diagonally dominant with a positive diagonal, hence SPD; a row
/// coupled to nothing gets m_ii = 1 alone.
Csr<double> diagonally_dominant_spd(const Csr<double>& a, OffDiagonalSigns signs = OffDiagonalSigns::negative);

/// diagonally_dominant_spd of the R-MAT graph rmat:scale:edge_factor:seed=S (local/gen): a
/// power-law matrix, hub rows of hundreds of entries beside rows coupled to nothing.
Csr<double> power_law_spd(int scale, int edge_factor, std::uint64_t seed);

/// A rows x rows permutation (i -> 257 i mod rows) whose tile-rows hold few tiles, all in
/// different tile columns: a dense tile-row of A times it meets many C tiles but few pairs,
/// the skewed shape the tile SpGEMM lists (tile_spgemm_internal.hpp).
Csr<double> scattering_permutation(std::int64_t rows);

/// n values uniform in [-1, 1), reproducible from `seed` (mt19937_64): vectors for products.
std::vector<double> random_values(std::int64_t n, std::uint64_t seed);

/// Dense row-major copy (rows*cols doubles).
template <class T>
std::vector<double> to_dense(const Csr<T>& a);

/// A fresh seed per call (from std::random_device), printed by the caller on failure; where
/// TESSERA_TEST_SEED is set, that seed (every call: to replay a failure).
std::uint64_t fresh_seed();

}  // namespace tessera::testing
