// Host SpGEMM references: Gustavson CSR and the tile algorithm, each checked against a dense
// product computed here, and against each other (identical patterns, values to rounding).
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

/// C = A*B by the dense triple loop (k innermost), independent of both references.
struct DenseProduct {
  std::int64_t rows = 0, cols = 0, inner = 0;
  std::vector<double> value;      // sum_k a_ik b_kj
  std::vector<double> magnitude;  // sum_k |a_ik| |b_kj|
  std::vector<char> structural;   // some stored a_ik meets some stored b_kj
};

std::vector<char> dense_pattern(const Csr<double>& a) {
  std::vector<char> p(static_cast<std::size_t>(a.rows * a.cols), 0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q) p[r * a.cols + a.col_idx[q]] = 1;
  return p;
}

DenseProduct dense_product(const Csr<double>& a, const Csr<double>& b) {
  const std::vector<double> ad = testing::to_dense(a), bd = testing::to_dense(b);
  const std::vector<char> ap = dense_pattern(a), bp = dense_pattern(b);
  DenseProduct c;
  c.rows = a.rows;
  c.cols = b.cols;
  c.inner = a.cols;
  c.value.assign(static_cast<std::size_t>(c.rows * c.cols), 0.0);
  c.magnitude = c.value;
  c.structural.assign(c.value.size(), 0);
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t j = 0; j < c.cols; ++j)
      for (std::int64_t k = 0; k < c.inner; ++k) {
        if (!ap[i * c.inner + k] || !bp[k * c.cols + j]) continue;
        c.value[i * c.cols + j] += ad[i * c.inner + k] * bd[k * c.cols + j];
        c.magnitude[i * c.cols + j] += std::abs(ad[i * c.inner + k] * bd[k * c.cols + j]);
        c.structural[i * c.cols + j] = 1;
      }
  return c;
}

/// Two double summations of the same k products in different orders each err by at most
/// gamma_k * sum|a||b|, gamma_k = k*u/(1 - k*u), u = eps/2 (Higham, ASNA 2nd ed., eq. 3.5), so
/// they differ by at most 2*gamma_k*S = k*eps*S/(1 - k*u) <= 2*k*eps*S. k is the inner length.
double rounding_bound(std::int64_t inner, double magnitude) {
  return 2.0 * static_cast<double>(inner) * kEps * magnitude;
}

/// keep_zeros: C's pattern is exactly the structural one. Otherwise (exact inputs only) it is
/// the structural entries whose exact value is non-zero. Values within the rounding bound,
/// or exactly equal when `exact`.
void expect_matches_dense(const Csr<double>& c, const DenseProduct& d, bool keep_zeros, bool exact) {
  ASSERT_EQ(c.rows, d.rows);
  ASSERT_EQ(c.cols, d.cols);
  ASSERT_NO_THROW(validate(c, "C"));
  std::vector<char> stored(d.value.size(), 0);
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t q = c.row_ptr[i]; q < c.row_ptr[i + 1]; ++q) {
      const std::int64_t e = i * c.cols + c.col_idx[q];
      stored[e] = 1;
      if (exact)
        ASSERT_EQ(c.values[q], d.value[e]) << "C(" << i << ", " << c.col_idx[q] << ")";
      else
        ASSERT_LE(std::abs(c.values[q] - d.value[e]), rounding_bound(d.inner, d.magnitude[e]))
            << "C(" << i << ", " << c.col_idx[q] << ")";
    }
  for (std::size_t e = 0; e < stored.size(); ++e) {
    const bool expected = d.structural[e] && (keep_zeros || d.value[e] != 0.0);
    ASSERT_EQ(stored[e] != 0, expected) << "entry (" << e / c.cols << ", " << e % c.cols << ")";
  }
}

/// Identical patterns; values within the bound of the CSR-vs-tile summation orders.
void expect_tiles_match_csr(const TileMatrix<double>& t, const Csr<double>& c, std::int64_t inner,
                            const DenseProduct& d, bool exact) {
  ASSERT_NO_THROW(validate(t, "C tiles"));
  const Csr<double> back = to_csr(t);
  ASSERT_EQ(back.rows, c.rows);
  ASSERT_EQ(back.cols, c.cols);
  ASSERT_EQ(back.row_ptr, c.row_ptr);
  ASSERT_EQ(back.col_idx, c.col_idx);
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t q = c.row_ptr[i]; q < c.row_ptr[i + 1]; ++q) {
      if (exact)
        ASSERT_EQ(back.values[q], c.values[q]);
      else
        ASSERT_LE(std::abs(back.values[q] - c.values[q]), rounding_bound(inner, d.magnitude[i * c.cols + c.col_idx[q]]));
    }
}

void expect_same_tiles(const TileMatrix<double>& x, const TileMatrix<double>& y) {
  EXPECT_EQ(x.rows, y.rows);
  EXPECT_EQ(x.cols, y.cols);
  EXPECT_EQ(x.tile_row_ptr, y.tile_row_ptr);
  EXPECT_EQ(x.tile_col, y.tile_col);
  EXPECT_EQ(x.bitmap, y.bitmap);
  EXPECT_EQ(x.value_offset, y.value_offset);
  EXPECT_EQ(x.values, y.values);
}

struct ProductShape {
  std::int64_t m, k, n;
};
const ProductShape kShapes[] = {{0, 0, 0}, {1, 1, 1}, {0, 5, 3}, {5, 0, 3}, {3, 5, 0},   {7, 9, 13},
                                {8, 8, 8}, {17, 33, 9}, {63, 65, 17}, {100, 3, 100}, {3, 100, 3}};

/// Runs `check(a, b, label)` on every shape x density x oddity, with fresh seeds.
template <class Check>
void for_each_random_product(bool integer_values, Check check) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uint64_t i = 0;
  for (const ProductShape& s : kShapes)
    for (double density : {0.0, 0.05, 0.3, 1.0})
      for (int oddity = 0; oddity < 3; ++oddity) {
        // oddity 0: plain; 1: empty rows/columns; 2: a dense row in A and empty columns in B
        RandomSpec sa{s.m, s.k, density, oddity == 1 ? 0.3 : 0.0, oddity == 1 ? 0.3 : 0.0, oddity == 2, integer_values};
        RandomSpec sb{s.k, s.n, density, oddity == 1 ? 0.3 : 0.0, oddity == 2 ? 0.3 : 0.0, false, integer_values};
        const Csr<double> a = random_csr(sa, seed + i++), b = random_csr(sb, seed + i++);
        check(a, b, std::to_string(s.m) + "x" + std::to_string(s.k) + " * " + std::to_string(s.k) + "x" +
                        std::to_string(s.n) + " density " + std::to_string(density) + " oddity " + std::to_string(oddity));
      }
}

TEST(ReferenceSpgemm, HandCheckedProduct) {
  // [1 2 0; 0 0 3] * [4 0; 0 5; 6 7] = [4 10; 18 21]
  const Csr<double> a = csr_from_triplets<double>(2, 3, {0, 0, 1}, {0, 1, 2}, {1, 2, 3});
  const Csr<double> b = csr_from_triplets<double>(3, 2, {0, 1, 2, 2}, {0, 1, 0, 1}, {4, 5, 6, 7});
  const Csr<double> expect = csr_from_triplets<double>(2, 2, {0, 0, 1, 1}, {0, 1, 0, 1}, {4, 10, 18, 21});
  EXPECT_EQ(ref::spgemm(a, b), expect);
  EXPECT_EQ(to_csr(ref::spgemm_tiles(to_tiles(a), to_tiles(b))), expect);
  EXPECT_EQ(ref::spgemm_flops(a, b), 4);  // a00 * row 0 (1) + a01 * row 1 (1) + a12 * row 2 (2)
}

TEST(ReferenceSpgemm, ExactCancellationKeptOrDropped) {
  // [1 1] * [1; -1] = [0]: structurally present, numerically zero.
  const Csr<double> a = csr_from_triplets<double>(1, 2, {0, 0}, {0, 1}, {1, 1});
  const Csr<double> b = csr_from_triplets<double>(2, 1, {0, 1}, {0, 0}, {1, -1});
  const Csr<double> kept = ref::spgemm(a, b, {true}), dropped = ref::spgemm(a, b, {false});
  EXPECT_EQ(kept, csr_from_triplets<double>(1, 1, {0}, {0}, {0.0}));
  EXPECT_EQ(dropped, Csr<double>::empty(1, 1));
  const TileMatrix<double> kept_tiles = ref::spgemm_tiles(to_tiles(a), to_tiles(b), {true});
  const TileMatrix<double> dropped_tiles = ref::spgemm_tiles(to_tiles(a), to_tiles(b), {false});
  EXPECT_EQ(to_csr(kept_tiles), kept);
  EXPECT_EQ(dropped_tiles.num_tiles(), 0);  // the only tile became empty: not stored
  EXPECT_NO_THROW(validate(dropped_tiles));
}

TEST(ReferenceSpgemm, CsrAndTilesMatchDenseOnRandomShapes) {
  for_each_random_product(false, [](const Csr<double>& a, const Csr<double>& b, const std::string& label) {
    SCOPED_TRACE(label);
    const DenseProduct d = dense_product(a, b);
    const Csr<double> c = ref::spgemm(a, b);
    expect_matches_dense(c, d, true, false);
    expect_tiles_match_csr(ref::spgemm_tiles(to_tiles(a), to_tiles(b)), c, a.cols, d, false);
  });
}

TEST(ReferenceSpgemm, IntegerValuesAreExactAndCancellationsDrop) {
  std::int64_t cancelled = 0;
  for_each_random_product(true, [&](const Csr<double>& a, const Csr<double>& b, const std::string& label) {
    SCOPED_TRACE(label);
    const DenseProduct d = dense_product(a, b);
    for (bool keep : {true, false}) {
      const Csr<double> c = ref::spgemm(a, b, {keep});
      expect_matches_dense(c, d, keep, true);
      expect_tiles_match_csr(ref::spgemm_tiles(to_tiles(a), to_tiles(b), {keep}), c, a.cols, d, true);
      cancelled += keep ? c.nnz() : -c.nnz();
    }
  });
  EXPECT_GT(cancelled, 0) << "no exact cancellation occurred: keep_zeros=false went untested";
}

template <class T>
void expect_low_precision_matches_double_of_rounded_values(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<T> a = convert_values<T, double>(random_csr({37, 29, 0.2, 0.1, 0.1, true}, seed));
  const Csr<T> b = convert_values<T, double>(random_csr({29, 45, 0.2, 0.1, 0.1}, seed + 1));
  const Csr<double> ad = convert_values<double, T>(a), bd = convert_values<double, T>(b);
  for (bool keep : {true, false}) {
    EXPECT_EQ(ref::spgemm(a, b, {keep}), ref::spgemm(ad, bd, {keep}));
    expect_same_tiles(ref::spgemm_tiles(to_tiles(a), to_tiles(b), {keep}),
                      ref::spgemm_tiles(to_tiles(ad), to_tiles(bd), {keep}));
  }
  EXPECT_EQ(ref::spgemm_flops(a, b), ref::spgemm_flops(ad, bd));
}

TEST(ReferenceSpgemm, FloatAndHalfInputsComputeInDouble) {
  const std::uint64_t seed = testing::fresh_seed();
  for (int trial = 0; trial < 10; ++trial) {
    expect_low_precision_matches_double_of_rounded_values<float>(seed + 2 * trial);
    expect_low_precision_matches_double_of_rounded_values<Half>(seed + 2 * trial);
  }
}

TEST(ReferenceSpgemm, FlopsCountEveryProduct) {
  for_each_random_product(false, [](const Csr<double>& a, const Csr<double>& b, const std::string& label) {
    SCOPED_TRACE(label);
    const std::vector<char> ap = dense_pattern(a), bp = dense_pattern(b);
    std::int64_t brute = 0;
    for (std::int64_t i = 0; i < a.rows; ++i)
      for (std::int64_t k = 0; k < a.cols; ++k)
        for (std::int64_t j = 0; j < b.cols; ++j) brute += ap[i * a.cols + k] && bp[k * b.cols + j];
    EXPECT_EQ(ref::spgemm_flops(a, b), brute);
    // The same count from the tile pairs: what the tile kernel's work statistics report.
    const TileMatrix<double> at = to_tiles(a), bt = to_tiles(b);
    std::int64_t tile_flops = 0;
    for (std::int64_t ti = 0; ti < at.tile_rows(); ++ti)
      for (std::int64_t ta = at.tile_row_ptr[ti]; ta < at.tile_row_ptr[ti + 1]; ++ta)
        for (std::int64_t tb = bt.tile_row_ptr[at.tile_col[ta]]; tb < bt.tile_row_ptr[at.tile_col[ta] + 1]; ++tb)
          tile_flops += tile::product_flops(at.bitmap[ta], bt.bitmap[tb]);
    EXPECT_EQ(tile_flops, brute);
  });
}

TEST(ReferenceSpgemm, PoissonSquaredMatchesDense) {
  // 5-point Laplacian on an 11x9 grid (99 rows: not a multiple of 8), squared: 13-point stencil.
  const std::int64_t nx = 11, ny = 9, n = nx * ny;
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::int64_t i = y * nx + x;
      auto put = [&](std::int64_t j, double w) { r.push_back(i), c.push_back(j), v.push_back(w); };
      put(i, 4);
      if (x > 0) put(i - 1, -1);
      if (x + 1 < nx) put(i + 1, -1);
      if (y > 0) put(i - nx, -1);
      if (y + 1 < ny) put(i + nx, -1);
    }
  const Csr<double> a = csr_from_triplets<double>(n, n, r, c, v);
  const Csr<double> c2 = ref::spgemm(a, a);
  expect_matches_dense(c2, dense_product(a, a), true, true);
  EXPECT_EQ(c2.row_length(5 * nx + 5), 13);  // interior row of the squared 5-point stencil
  EXPECT_EQ(to_csr(ref::spgemm_tiles(to_tiles(a), to_tiles(a))), c2);
}

TEST(ReferenceSpgemm, BadInputIsInputError) {
  const Csr<double> a = random_csr({3, 4, 0.5}, 1), b = random_csr({5, 2, 0.5}, 2);
  EXPECT_THROW(ref::spgemm(a, b), InputError);
  EXPECT_THROW(ref::spgemm_flops(a, b), InputError);
  EXPECT_THROW(ref::spgemm_tiles(to_tiles(a), to_tiles(b)), InputError);
  Csr<double> broken = csr_from_triplets<double>(4, 4, {0, 0}, {0, 1}, {1, 2});
  std::swap(broken.col_idx[0], broken.col_idx[1]);  // unsorted row
  EXPECT_THROW(ref::spgemm(broken, broken), InputError);
  try {
    ref::spgemm(a, b);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("inner dimensions"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
