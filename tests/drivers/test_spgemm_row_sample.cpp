// Host helpers of tessera-spgemm's row-batch mode (drivers/spgemm_row_batches.hpp): the
// Gustavson reference row, the row sample, the sampled-row check and the 1^T A B 1 checksum,
// each against the full host product ref::spgemm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "drivers/spgemm_row_batches.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "local/reference/kernels.hpp"
#include "support/random_matrix.hpp"

namespace tessera::driver {
namespace {

Csr<double> absolute(Csr<double> m) {
  for (auto& v : m.values) v = std::abs(v);
  return m;
}

/// Every row of reference_row(a, b, i) against row i of ref::spgemm (values and |A||B|).
void expect_rows_match_reference(const Csr<double>& a, const Csr<double>& b) {
  const Csr<double> c = ref::spgemm(a, b), mag = ref::spgemm(absolute(a), absolute(b));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    SCOPED_TRACE(i);
    const ReferenceRow row = reference_row(a, b, i);
    const auto begin = c.row_ptr[i], end = c.row_ptr[i + 1];
    ASSERT_EQ(std::vector<std::int32_t>(c.col_idx.begin() + begin, c.col_idx.begin() + end), row.cols);
    for (std::size_t e = 0; e < row.cols.size(); ++e) {
      EXPECT_NEAR(row.values[e], c.values[begin + e], 1e-12 * mag.values[begin + e]);
      EXPECT_NEAR(row.magnitudes[e], mag.values[begin + e], 1e-12 * mag.values[begin + e]);
    }
  }
}

TEST(SpgemmRowSample, ReferenceRowMatchesGustavsonOnRandomOddSizes) {
  for (int trial = 0; trial < 4; ++trial) {
    const auto seed = testing::fresh_seed();
    SCOPED_TRACE(seed);
    const Csr<double> a = testing::random_csr({37, 29, 0.15, 0.2, 0.1, trial == 1}, seed);
    const Csr<double> b = testing::random_csr({29, 45, 0.2, 0.1, 0.2, trial == 2}, seed + 1);
    expect_rows_match_reference(a, b);
  }
}

TEST(SpgemmRowSample, ReferenceRowMatchesOnStructuredMatrices) {
  for (const char* spec : {"poisson3d:5", "poisson3d27:4", "elasticity3d:3"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = gen::generate(gen::parse_spec(spec));
    expect_rows_match_reference(a, a);
  }
}

TEST(SpgemmRowSample, OneByOneAndEmpty) {
  const Csr<double> one = testing::random_csr({1, 1, 1.0}, testing::fresh_seed());
  expect_rows_match_reference(one, one);
  const Csr<double> empty = testing::random_csr({0, 0, 0.5}, 1);
  EXPECT_TRUE(sample_rows(empty, 10).empty());
  SampledRowCheck check(empty, empty);
  EXPECT_TRUE(check.pass());  // nothing to compare
  EXPECT_EQ(expected_checksum(empty, empty).sum, 0.0);
}

TEST(SpgemmRowSample, SampleSpreadsAndIncludesTheLongestRow) {
  testing::RandomSpec spec{101, 50, 0.05};
  spec.dense_row = true;
  const Csr<double> a = testing::random_csr(spec, testing::fresh_seed());
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < a.rows; ++i)
    if (a.row_length(i) > a.row_length(longest)) longest = i;
  const auto rows = sample_rows(a, 11);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(std::adjacent_find(rows.begin(), rows.end()), rows.end());
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), a.rows - 1);
  EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), longest));
  EXPECT_GE(rows.size(), 11u);
  EXPECT_LE(rows.size(), 12u);
  EXPECT_EQ(sample_rows(a, 500).size(), std::size_t(a.rows));  // more than the rows: every row once
  EXPECT_THROW(sample_rows(a, 0), InputError);
  EXPECT_THROW(reference_row(a, a, a.rows), InputError);  // 101x50 times 101x50: also a mismatch
}

/// Runs a SampledRowCheck on C's rows (C possibly altered by the caller).
SampledRowCheck check_rows(const Csr<double>& a, const Csr<double>& b, const Csr<double>& c) {
  SampledRowCheck check(a, b, 20);
  for (const std::int64_t i : check.rows())
    check.compare(i, c.col_idx.data() + c.row_ptr[i], c.values.data() + c.row_ptr[i], c.row_length(i));
  return check;
}

TEST(SpgemmRowSample, CheckPassesOnTheProductAndCatchesErrors) {
  const auto seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  const Csr<double> a = testing::random_csr({64, 64, 0.1, 0.1}, seed);
  const Csr<double> c = ref::spgemm(a, a);
  EXPECT_TRUE(check_rows(a, a, c).pass()) << check_rows(a, a, c).summary();

  SampledRowCheck sampled(a, a, 20);
  const auto non_empty = std::find_if(sampled.rows().begin(), sampled.rows().end(),
                                      [&](std::int64_t i) { return c.row_length(i) > 0; });
  ASSERT_NE(non_empty, sampled.rows().end());  // all empty only if A*A has (almost) no entries
  const std::int64_t row = *non_empty;
  Csr<double> wrong_value = c;
  wrong_value.values[c.row_ptr[row]] += 1e-6;  // |A||B| <= 64 here: 1e-6 / 64 is far above 2 n u
  EXPECT_FALSE(check_rows(a, a, wrong_value).pass());

  SampledRowCheck short_row(a, a, 20);
  for (const std::int64_t i : short_row.rows())
    short_row.compare(i, c.col_idx.data() + c.row_ptr[i], c.values.data() + c.row_ptr[i],
                      c.row_length(i) - (i == row ? 1 : 0));
  EXPECT_FALSE(short_row.pass());
  EXPECT_EQ(short_row.json()["pattern_mismatches"], 1);

  SampledRowCheck partial(a, a, 20);  // a sampled row never compared is a failure
  partial.compare(row, c.col_idx.data() + c.row_ptr[row], c.values.data() + c.row_ptr[row], c.row_length(row));
  EXPECT_FALSE(partial.pass());
}

TEST(SpgemmRowSample, ChecksumIsTheSumOfTheProduct) {
  for (int trial = 0; trial < 3; ++trial) {
    const auto seed = testing::fresh_seed();
    SCOPED_TRACE(seed);
    const Csr<double> a = testing::random_csr({53, 31, 0.2, 0.1, 0.1}, seed);
    const Csr<double> b = testing::random_csr({31, 40, 0.2, 0.1, 0.1}, seed + 7);
    const Csr<double> c = ref::spgemm(a, b), mag = ref::spgemm(absolute(a), absolute(b));
    double sum = 0, magnitude = 0;
    for (double v : c.values) sum += v;
    for (double v : mag.values) magnitude += v;
    const ProductChecksum got = expected_checksum(a, b);
    EXPECT_NEAR(got.sum, sum, 1e-12 * magnitude);
    EXPECT_NEAR(got.magnitude, magnitude, 1e-12 * magnitude);
  }
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:4"));  // rows sum to 0 inside, > 0 on the boundary
  const Csr<double> c = ref::spgemm(a, a);
  double sum = 0;
  for (double v : c.values) sum += v;
  EXPECT_NEAR(expected_checksum(a, a).sum, sum, 1e-12 * expected_checksum(a, a).magnitude);
}

}  // namespace
}  // namespace tessera::driver
