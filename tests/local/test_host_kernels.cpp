// The host backend's threaded kernels (local/host) against their oracles: host::spgemm against
// ref::spgemm and host::transpose against ref::transpose, the same matrix bit for bit on several
// threads with ranges of a few items, on fresh random inputs and on structured ones (Poisson,
// elasticity, power-law), odd sizes and cancellation; bad operands give the references'
// InputErrors. host::dot against its blockwise order written out, the same bits on any thread
// count, and within the rounding bound of an exact sum. Also: the row checks of validate(), now
// by ranges, still report the serial loop's first failure, and a Csr copy (on the threads)
// writes every entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "local/core/error.hpp"
#include "local/formats/convert.hpp"
#include "local/gen/generators.hpp"
#include "local/host/dot.hpp"
#include "local/host/spgemm.hpp"
#include "local/host/transpose.hpp"
#include "local/reference/kernels.hpp"
#include "support/host_threads_scope.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using testing::RandomSpec;
using testing::random_csr;

/// Same shape, offsets, columns, and values with the same bits (so -0.0 is not 0.0).
void expect_same_bits(const Csr<double>& got, const Csr<double>& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  ASSERT_EQ(got.row_ptr, want.row_ptr);
  ASSERT_EQ(got.col_idx, want.col_idx);
  ASSERT_EQ(got.values.size(), want.values.size());
  for (std::size_t k = 0; k < got.values.size(); ++k)
    ASSERT_EQ(0, std::memcmp(&got.values[k], &want.values[k], sizeof(double)))
        << "entry " << k << ": " << got.values[k] << " against " << want.values[k];
}

/// host::spgemm on 1, 2, 3 and 5 threads (ranges of 2 entries of A, so that even small inputs
/// split) against ref::spgemm, for both zero policies.
void expect_reference_product(const Csr<double>& a, const Csr<double>& b) {
  for (const bool keep_zeros : {true, false}) {
    const ref::SpgemmOptions options{keep_zeros};
    const Csr<double> want = ref::spgemm(a, b, options);
    for (const int threads : {1, 2, 3, 5}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + (keep_zeros ? ", keep zeros" : ", drop zeros"));
      const Csr<double> got = testing::with_host_threads(threads, [&] { return host::spgemm(a, b, options); }, 2);
      expect_same_bits(got, want);
    }
  }
}

TEST(HostSpgemm, RandomInputsWithEmptyRowsAndADenseRow) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  RandomSpec sa{37, 29, 0.15, 0.2, 0.1, true, false};
  RandomSpec sb{29, 41, 0.2, 0.1, 0.2, false, false};
  expect_reference_product(random_csr(sa, seed), random_csr(sb, seed + 1));
}

TEST(HostSpgemm, CancellationKeepsOrDropsExactZerosAsTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  RandomSpec s{23, 23, 0.3, 0.1, 0.0, false, true};  // small integers: many products cancel exactly
  const Csr<double> a = random_csr(s, seed), b = random_csr(s, seed + 7);
  ASSERT_LT(ref::spgemm(a, b, ref::SpgemmOptions{false}).nnz(), ref::spgemm(a, b).nnz())
      << "the inputs must cancel somewhere for this test to mean anything";
  expect_reference_product(a, b);
}

TEST(HostSpgemm, StructuredProblems) {
  for (const char* spec : {"poisson3d:6", "poisson3d27:5", "elasticity3d:3", "rmat:7:6"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = gen::generate(gen::parse_spec(spec));
    expect_reference_product(a, a);
  }
}

TEST(HostSpgemm, OddSizes) {
  const auto empty = [](std::int64_t rows, std::int64_t cols) { return Csr<double>::empty(rows, cols); };
  Csr<double> one = Csr<double>::empty(1, 1);
  one.row_ptr[1] = 1;
  one.col_idx.assign(1, 0);
  one.values.assign(1, -3.0);
  expect_reference_product(one, one);
  expect_reference_product(empty(0, 0), empty(0, 0));
  expect_reference_product(empty(0, 5), empty(5, 3));  // no rows
  expect_reference_product(empty(4, 0), empty(0, 6));  // no inner dimension
  expect_reference_product(empty(9, 7), random_csr(RandomSpec{7, 13, 0.5}, 3));  // A without entries
  // Mostly empty rows and one dense one: ranges of equal entries hold very different row counts.
  RandomSpec tall{50, 11, 0.05, 0.6, 0.0, true};
  expect_reference_product(random_csr(tall, 5), random_csr(RandomSpec{11, 17, 0.4}, 6));
}

TEST(HostSpgemm, BadOperandsAreTheReferencesInputErrors) {
  const Csr<double> a = random_csr(RandomSpec{6, 5, 0.5}, 1), b = random_csr(RandomSpec{4, 3, 0.5}, 2);
  EXPECT_THROW(host::spgemm(a, b), InputError) << "inner dimensions differ";
  Csr<double> broken = random_csr(RandomSpec{5, 5, 0.6}, 3);
  ASSERT_GE(broken.nnz(), 2);
  broken.col_idx[0] = 9;  // outside the 5 columns
  std::string want, got;
  try {
    ref::spgemm(broken, broken);
  } catch (const InputError& e) {
    want = e.what();
  }
  try {
    testing::with_host_threads(3, [&] { return host::spgemm(broken, broken); }, 1);
  } catch (const InputError& e) {
    got = e.what();
  }
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

/// host::transpose on 1, 2, 3 and 5 threads (ranges of 2 rows) against ref::transpose.
void expect_reference_transpose(const Csr<double>& a) {
  const Csr<double> want = ref::transpose(a);
  for (const int threads : {1, 2, 3, 5}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    expect_same_bits(testing::with_host_threads(threads, [&] { return host::transpose(a); }, 2), want);
  }
}

TEST(HostTranspose, RandomStructuredAndOddSizes) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  expect_reference_transpose(random_csr(RandomSpec{37, 29, 0.15, 0.2, 0.1, true}, seed));
  expect_reference_transpose(random_csr(RandomSpec{11, 53, 0.3, 0.5, 0.3}, seed + 1));
  for (const char* spec : {"poisson3d:6", "elasticity3d:3", "rmat:7:6"}) {
    SCOPED_TRACE(spec);
    expect_reference_transpose(gen::generate(gen::parse_spec(spec)));
  }
  expect_reference_transpose(Csr<double>::empty(0, 0));
  expect_reference_transpose(Csr<double>::empty(0, 4));
  expect_reference_transpose(Csr<double>::empty(6, 0));
  expect_reference_transpose(Csr<double>::empty(5, 3));
  Csr<double> one = Csr<double>::empty(1, 1);
  one.row_ptr[1] = 1;
  one.col_idx.assign(1, 0);
  one.values.assign(1, 2.5);
  expect_reference_transpose(one);
}

TEST(HostTranspose, BadInputIsTheReferencesInputError) {
  Csr<double> broken = random_csr(RandomSpec{8, 8, 0.5}, 4);
  ASSERT_GE(broken.nnz(), 1);
  broken.row_ptr[broken.rows] += 1;  // past the entries
  std::string want, got;
  try {
    ref::transpose(broken);
  } catch (const InputError& e) {
    want = e.what();
  }
  try {
    testing::with_host_threads(3, [&] { return host::transpose(broken); }, 1);
  } catch (const InputError& e) {
    got = e.what();
  }
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

// The order host::dot promises, written out serially: blocks of kDotBlock left to right.
double blockwise_dot(const std::vector<double>& x, const std::vector<double>& y) {
  double total = 0.0;
  for (std::size_t b = 0; b < x.size(); b += host::kDotBlock) {
    double sum = 0.0;
    for (std::size_t i = b; i < std::min(x.size(), b + host::kDotBlock); ++i) sum += x[i] * y[i];
    total += sum;
  }
  return total;
}

TEST(HostDot, BlockwiseOrderOnAnyThreadCountWithinTheRoundingBound) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  const std::int64_t block = host::kDotBlock;
  for (const std::int64_t n : {std::int64_t{0}, std::int64_t{1}, block - 1, block, block + 1, 3 * block + 17,
                               std::int64_t{100003}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    std::vector<double> x(static_cast<std::size_t>(n)), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(rng), y[i] = value(rng) * std::ldexp(1.0, int(i % 40) - 20);
    const double want = blockwise_dot(x, y);
    long double exact = 0.0L, magnitude = 0.0L;
    for (std::size_t i = 0; i < x.size(); ++i)
      exact += static_cast<long double>(x[i]) * y[i], magnitude += std::fabs(static_cast<long double>(x[i]) * y[i]);
    EXPECT_LE(std::fabs(static_cast<long double>(want) - exact),
              static_cast<long double>(n) * std::numeric_limits<double>::epsilon() * magnitude);
    for (const int threads : {1, 2, 3, 5}) {
      const double got = testing::with_host_threads(threads, [&] { return host::dot(x.data(), y.data(), n); });
      EXPECT_EQ(0, std::memcmp(&got, &want, sizeof got)) << threads << " threads: " << got << " against " << want;
    }
  }
}

// A Csr copy writes its arrays on the threads (copy_on_threads): with poisoned fresh arrays
// (every test program sets TESSERA_POISON_HOST_ARRAYS), a missed entry would show.
TEST(HostCopy, CsrCopyIsExactOnAnyThreadCount) {
  const Csr<double> a = random_csr(RandomSpec{97, 61, 0.2, 0.1, 0.1, true}, testing::fresh_seed());
  for (const int threads : {1, 2, 3, 5}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const Csr<double> copied = testing::with_host_threads(threads, [&] { return Csr<double>(a); }, 4);
    expect_same_bits(copied, a);
    Csr<double> assigned = Csr<double>::empty(3, 3);
    testing::with_host_threads(threads, [&] { assigned = a; return 0; }, 4);
    expect_same_bits(assigned, a);
  }
  expect_same_bits(Csr<double>(Csr<double>::empty(0, 0)), Csr<double>::empty(0, 0));
}

// equal_on_threads compares by ranges: one differing element anywhere (first, inside a range,
// last) makes it false on any thread count; equal arrays, empty ones included, are equal.
TEST(HostCopy, EqualOnThreadsFindsOneDifferenceAnywhere) {
  const Csr<double> a = random_csr(RandomSpec{97, 61, 0.2, 0.1, 0.1, true}, testing::fresh_seed());
  ASSERT_GE(a.col_idx.size(), 3u);
  for (const int threads : {1, 2, 3, 5}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const auto equal = [&](const auto& x, const auto& y) {
      return testing::with_host_threads(threads, [&] { return equal_on_threads(x, y); }, 4);
    };
    EXPECT_TRUE(equal(a.col_idx, Csr<double>(a).col_idx));
    EXPECT_TRUE(equal(HostArray<double>{}, HostArray<double>{}));
    for (const std::size_t at : {std::size_t(0), a.col_idx.size() / 2, a.col_idx.size() - 1}) {
      HostArray<std::int32_t> changed = a.col_idx;
      changed[at] += 1;
      EXPECT_FALSE(equal(a.col_idx, changed)) << "a difference at " << at;
    }
    HostArray<std::int32_t> shorter(a.col_idx.begin(), a.col_idx.end() - 1);
    EXPECT_FALSE(equal(a.col_idx, shorter)) << "another length";
  }
}

// validate() checks rows by ranges: with a defect in each of two ranges, the first is reported.
TEST(HostSpgemm, ValidateReportsTheFirstBadRowOnAnyThreadCount) {
  Csr<double> m = random_csr(RandomSpec{30, 30, 0.3, 0.0, 0.0, false, true}, 11);
  const std::int64_t early = 3, late = 25;
  ASSERT_GE(m.row_length(early), 2);
  ASSERT_GE(m.row_length(late), 1);
  m.col_idx[m.row_ptr[late]] = 30;                                    // late row: a column out of range
  std::swap(m.col_idx[m.row_ptr[early]], m.col_idx[m.row_ptr[early] + 1]);  // early row: unsorted
  std::string serial;
  try {
    validate(m, "M");
  } catch (const InputError& e) {
    serial = e.what();
  }
  EXPECT_NE(serial.find("row 3 columns are not strictly increasing"), std::string::npos) << serial;
  for (const int threads : {2, 3, 7}) {
    std::string ranged;
    try {
      testing::with_host_threads(threads, [&] { validate(m, "M"); return 0; }, 1);
    } catch (const InputError& e) {
      ranged = e.what();
    }
    EXPECT_EQ(ranged, serial) << threads << " threads";
  }
  // A decreasing row_ptr ahead of a range's start: that range's own start check must not win.
  Csr<double> offsets = random_csr(RandomSpec{30, 30, 0.3}, 12);
  offsets.row_ptr[10] = offsets.nnz() + 5;
  std::string ranged;
  try {
    testing::with_host_threads(3, [&] { validate(offsets, "M"); return 0; }, 1);
  } catch (const InputError& e) {
    ranged = e.what();
  }
  EXPECT_NE(ranged.find("row_ptr[10]"), std::string::npos) << ranged;
  EXPECT_NE(ranged.find("is past the"), std::string::npos) << ranged;
}

}  // namespace
}  // namespace tessera
