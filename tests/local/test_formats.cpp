// Csr <-> TileMatrix round trips, format invariants, value-type conversion, footprints, the rows
// that hold entries.
#include <gtest/gtest.h>

#include "local/core/error.hpp"
#include "local/formats/convert.hpp"
#include "local/formats/footprint.hpp"
#include "local/formats/nonempty_rows.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using testing::RandomSpec;
using testing::random_csr;

TEST(TileBits, BoolProductMatchesDefinition) {
  std::mt19937_64 rng(testing::fresh_seed());
  for (int trial = 0; trial < 2000; ++trial) {
    const std::uint64_t a = rng() & rng(), b = rng() & rng();
    std::uint64_t expect = 0;
    int flops = 0;
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        for (int k = 0; k < 8; ++k)
          if (tile::has(a, r, k) && tile::has(b, k, c)) {
            expect |= std::uint64_t{1} << tile::bit_index(r, c);
            ++flops;
          }
    ASSERT_EQ(tile::bool_product(a, b), expect) << std::hex << a << " " << b;
    ASSERT_EQ(tile::product_flops(a, b), flops);
  }
}

TEST(Formats, TileRoundTripIsExactOnOddShapes) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t shapes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {7, 9}, {8, 8}, {9, 17}, {63, 65}, {100, 3}, {3, 100}};
  int i = 0;
  for (auto& s : shapes) {
    for (double density : {0.0, 0.05, 0.5, 1.0}) {
      RandomSpec spec{s[0], s[1], density, 0.2, 0.2, true};
      const Csr<double> a = random_csr(spec, seed + i++);
      validate(a);
      const TileMatrix<double> t = to_tiles(a);
      validate(t);
      EXPECT_EQ(t.nnz(), a.nnz());
      EXPECT_EQ(to_csr(t), a) << s[0] << "x" << s[1] << " density " << density;
    }
  }
}

TEST(Formats, TilesOfKnownMatrix) {
  // 10x10 with entries at (0,0), (0,9), (9,9), (7,1): tiles (0,0), (0,1), (1,1).
  Csr<double> a = csr_from_triplets<double>(10, 10, {0, 0, 9, 7}, {0, 9, 9, 1}, {1, 2, 3, 4});
  TileMatrix<double> t = to_tiles(a);
  ASSERT_EQ(t.num_tiles(), 3);
  EXPECT_EQ(t.tile_row_ptr, (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(t.tile_col, (std::vector<std::int32_t>{0, 1, 1}));
  EXPECT_EQ(t.bitmap[0], (std::uint64_t{1} << 0) | (std::uint64_t{1} << 57));
  EXPECT_EQ(t.bitmap[1], std::uint64_t{1} << 1);
  EXPECT_EQ(t.bitmap[2], std::uint64_t{1} << 9);
  EXPECT_EQ(t.values, (std::vector<double>{1, 4, 2, 3}));
  EXPECT_EQ(t.value_offset, (std::vector<std::int64_t>{0, 2, 3, 4}));
}

TEST(Formats, TripletsSumDuplicatesAndRejectOutOfRange) {
  Csr<double> a = csr_from_triplets<double>(2, 3, {1, 0, 1}, {2, 1, 2}, {1.5, 2, 2.5});
  EXPECT_EQ(a.row_ptr, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(a.col_idx, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(a.values, (std::vector<double>{2, 4}));
  EXPECT_THROW(csr_from_triplets<double>(2, 3, {2}, {0}, {1.0}), InputError);
}

TEST(Formats, ValidateRejectsBrokenInvariants) {
  Csr<double> a = csr_from_triplets<double>(2, 2, {0, 0}, {0, 1}, {1, 2});
  Csr<double> unsorted = a;
  std::swap(unsorted.col_idx[0], unsorted.col_idx[1]);
  EXPECT_THROW(validate(unsorted), InputError);
  TileMatrix<double> t = to_tiles(a);
  t.bitmap[0] |= std::uint64_t{1} << 63;  // bit outside a 2x2 matrix
  EXPECT_THROW(validate(t), InputError);
}

// A row_ptr that overshoots and then comes back must be refused before the overshooting row is
// read (it used to index past col_idx); the same for tile_row_ptr.
TEST(Formats, ValidateRejectsRowPointersPastTheEntries) {
  Csr<double> a = csr_from_triplets<double>(3, 3, {0, 1, 2}, {0, 1, 2}, {1, 2, 3});
  Csr<double> overshoot = a;
  overshoot.row_ptr = {0, 1000000, 2, 3};
  try {
    validate(overshoot);
    ADD_FAILURE() << "validate accepted row_ptr " << overshoot.row_ptr[1];
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("past the 3 entries"), std::string::npos) << e.what();
  }
  TileMatrix<double> t = to_tiles(csr_from_triplets<double>(17, 9, {0, 8, 16}, {0, 8, 1}, {1, 2, 3}));
  ASSERT_EQ(t.tile_row_ptr, (std::vector<std::int64_t>{0, 1, 2, 3}));
  t.tile_row_ptr = {0, 1000000, 2, 3};
  EXPECT_THROW(validate(t), InputError);
  EXPECT_THROW(csr_from_triplets<double>(-1, 3, {}, {}, {}), InputError);
}

TEST(Formats, ValueConversionChecksRange) {
  Csr<double> a = csr_from_triplets<double>(1, 3, {0, 0, 0}, {0, 1, 2}, {1.0, -0.5, 3.0e5});
  EXPECT_THROW((convert_values<Half, double>(a)), InputError);  // 3e5 > 65504
  EXPECT_NO_THROW((convert_values<float, double>(a)));
  a.values[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW((convert_values<float, double>(a)), InputError);
  a.values[2] = 2.0;
  const Csr<Half> h = convert_values<Half, double>(a);
  EXPECT_EQ(float(h.values[1]), -0.5f);
  const TileMatrix<Half> th = to_tiles(h);
  EXPECT_EQ(to_csr(th), h);
}

TEST(Half, RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);               // halfway to 2^16 rounds to inf
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, 0x3c00);      // tie -> even
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).bits, 0x3c02);      // tie -> even (up)
  EXPECT_EQ(float(Half(5.9604644775390625e-08f)), 5.9604644775390625e-08f);  // smallest subnormal
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {            // every finite half round-trips
    const float f = Half::to_float(static_cast<std::uint16_t>(b));
    ASSERT_EQ(Half::from_float(f), b);
  }
}

TEST(Footprint, CountsEveryArray) {
  Csr<double> a = csr_from_triplets<double>(10, 10, {0, 9}, {0, 9}, {1, 2});
  const Footprint f = memory_footprint(a);
  EXPECT_EQ(f.index_bytes, 11 * 8 + 2 * 4);
  EXPECT_EQ(f.value_bytes, 2 * 8);
  const Footprint t = memory_footprint(to_tiles(a));
  EXPECT_EQ(t.index_bytes, 3 * 8 + 3 * 8 + 2 * 4 + 2 * 8);  // tile_row_ptr, value_offset, tile_col, bitmap
  EXPECT_EQ(t.value_bytes, 2 * 8);
}

/// The rows with entries, by a plain scan of every row.
std::vector<std::int64_t> nonempty_by_scan(const std::vector<std::int64_t>& row_ptr) {
  std::vector<std::int64_t> rows;
  for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r)
    if (row_ptr[r + 1] > row_ptr[r]) rows.push_back(static_cast<std::int64_t>(r));
  return rows;
}

std::vector<std::int64_t> nonempty_by_search(const std::vector<std::int64_t>& row_ptr) {
  std::vector<std::int64_t> rows;
  for_each_nonempty_row(row_ptr.data(), static_cast<std::int64_t>(row_ptr.size()) - 1,
                        [&](std::int64_t r) { rows.push_back(r); });
  return rows;
}

TEST(NonemptyRows, AreTheRowsAScanFinds) {
  // No rows, one row (empty, full), every row empty, every row full, runs at both ends (a
  // surface), a lone row after a long gap, the last row alone.
  const std::vector<std::vector<std::int64_t>> cases{
      {0}, {0, 0}, {0, 3}, {0, 0, 0, 0}, {0, 1, 2, 5}, {0, 2, 3, 3, 3, 3, 3, 3, 4, 6},
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
  for (const std::vector<std::int64_t>& row_ptr : cases)
    EXPECT_EQ(nonempty_by_search(row_ptr), nonempty_by_scan(row_ptr)) << "rows " << row_ptr.size() - 1;
  EXPECT_EQ(nonempty_by_search({0, 2, 3, 3, 3, 3, 3, 3, 4, 6}), (std::vector<std::int64_t>{0, 1, 7, 8}));
  // Random gaps of every length up to thousands of rows.
  std::mt19937_64 rng(testing::fresh_seed());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::int64_t> row_ptr{0};
    const int rows = static_cast<int>(rng() % 3000);
    const double full = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    for (int r = 0; r < rows; ++r)
      row_ptr.push_back(row_ptr.back() + (std::uniform_real_distribution<double>(0.0, 1.0)(rng) < full * full * full
                                              ? 1 + static_cast<std::int64_t>(rng() % 4)
                                              : 0));
    ASSERT_EQ(nonempty_by_search(row_ptr), nonempty_by_scan(row_ptr)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace tessera
