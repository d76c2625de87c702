// The host loops' building blocks (local/core/host_ranges.hpp, host_sort_unique.hpp,
// host_offsets.hpp, local/formats/stack_rows.hpp): ranges cover [0, n) in order whatever the
// thread count, a validation reports the serial loop's first failure, a failing range's exception
// reaches the caller, the parallel sort_unique is std::sort + std::unique, the parallel offsets
// are the running sum, and stacked pieces are the matrix a serial loop builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "local/core/error.hpp"
#include "local/core/host_offsets.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/host_sort_unique.hpp"
#include "local/formats/stack_rows.hpp"

namespace tessera {
namespace {

// Several threads and tiny ranges for one test, restored after it.
class HostRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_ = host::threads();
    items_ = host::min_range_items();
    host::set_threads(3);
    host::set_min_range_items(2);
  }
  void TearDown() override {
    host::set_threads(threads_);
    host::set_min_range_items(items_);
  }

 private:
  int threads_ = 1;
  std::int64_t items_ = 1;
};

TEST_F(HostRanges, RangesCoverEveryItemOnceInOrder) {
  for (std::int64_t n : {0, 1, 2, 5, 7, 100}) {
    const host::RangeSplit split(n);
    ASSERT_GE(split.count(), 1);
    EXPECT_LE(split.count(), host::threads());
    EXPECT_EQ(split.begin(0), 0);
    EXPECT_EQ(split.end(split.count() - 1), n);
    for (int r = 1; r < split.count(); ++r) EXPECT_EQ(split.begin(r), split.end(r - 1)) << "n " << n;
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    split.run([&](int, std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) ++seen[i];
    });
    EXPECT_EQ(seen, std::vector<int>(seen.size(), 1)) << "n " << n;
  }
  EXPECT_EQ(host::RangeSplit(100, 1000).count(), 1) << "a grain larger than the loop keeps one range";
}

TEST_F(HostRanges, RangesByCostShareTheCostAndCoverEveryItemOnce) {
  // Items 90-99 cost 100 each, the others 1 (1090 in all): an even split by count would give the
  // last range all ten costly items and 24 more. By cost, each of the three ranges gets about 363.
  std::vector<std::int64_t> before(101, 0);
  for (int i = 0; i < 100; ++i) before[i + 1] = before[i] + (i >= 90 ? 100 : 1);
  const auto cost_before = [&](std::int64_t i) { return before[i]; };
  const host::RangeSplit split = host::RangeSplit::by_cost(100, cost_before);
  ASSERT_EQ(split.count(), 3);
  // Cut at the first item whose cost before it reaches 1090/3 = 363 and 2*1090/3 = 726: item 93
  // (390 before it, 290 before item 92) and item 97 (790 before it, 690 before item 96).
  EXPECT_EQ(split.begin(0), 0);
  EXPECT_EQ(split.begin(1), 93);
  EXPECT_EQ(split.begin(2), 97);
  EXPECT_EQ(split.end(2), 100);
  for (int r = 1; r < split.count(); ++r) EXPECT_EQ(split.begin(r), split.end(r - 1));
  std::vector<int> seen(100, 0);
  split.run([&](int, std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) ++seen[i];
  });
  EXPECT_EQ(seen, std::vector<int>(100, 1));
  // All the cost in the first item: the later ranges are empty, and still in order.
  const host::RangeSplit front = host::RangeSplit::by_cost(10, [](std::int64_t i) { return i > 0 ? 50 : 0; });
  ASSERT_EQ(front.count(), 3);
  EXPECT_EQ(front.end(0), 1);
  EXPECT_EQ(front.begin(2), 1);
  EXPECT_EQ(front.end(2), 10);
  EXPECT_EQ(host::RangeSplit::by_cost(0, cost_before).end(0), 0);
  EXPECT_EQ(host::RangeSplit::by_cost(7, [](std::int64_t) { return 0; }).end(2), 7)
      << "no cost: the last range ends at n";
}

TEST_F(HostRanges, FirstFailureIsTheSerialLoopsFirst) {
  const std::vector<int> bad{0, 0, 0, 0, 1, 0, 1, 0, 0, 1};
  const auto check = [&](std::int64_t b, std::int64_t e) -> std::string {
    for (std::int64_t i = b; i < e; ++i)
      if (bad[i]) return "item " + std::to_string(i);
    return "";
  };
  ASSERT_GT(host::RangeSplit(10).count(), 1);
  EXPECT_EQ(host::first_failure(10, check), "item 4");
  EXPECT_EQ(host::first_failure(4, check), "");
  EXPECT_EQ(host::first_failure(0, check), "");
}

TEST_F(HostRanges, AnExceptionInARangeReachesTheCaller) {
  std::atomic<int> ran{0};
  const host::RangeSplit split(12);
  ASSERT_GT(split.count(), 1);
  EXPECT_THROW(split.run([&](int range, std::int64_t, std::int64_t) {
    ++ran;
    if (range == split.count() - 1) throw std::runtime_error("last range");
  }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), split.count()) << "every range still ran";
}

TEST_F(HostRanges, SortUniqueIsTheSerialSortAndUnique) {
  std::mt19937_64 random(7);
  // Sizes around the range counts (an odd run waits a merge round), many repeats and none,
  // values already sorted and reversed; 3 and 5 threads.
  for (int threads : {3, 5}) {
    host::set_threads(threads);
    for (std::int64_t n : {0, 1, 2, 3, 4, 5, 6, 11, 1000}) {
      for (std::int64_t distinct : {std::int64_t{1}, std::int64_t{7}, n + 1, 4 * n + 1}) {
        std::vector<std::int64_t> values(static_cast<std::size_t>(n));
        for (std::int64_t& v : values) v = static_cast<std::int64_t>(random() % distinct) - distinct / 2;
        for (int order = 0; order < 3; ++order) {
          if (order == 1) std::sort(values.begin(), values.end());
          if (order == 2) std::reverse(values.begin(), values.end());
          std::vector<std::int64_t> expected = values;
          std::sort(expected.begin(), expected.end());
          expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
          std::vector<std::int64_t> sorted = values;
          host::sort_unique(sorted);
          EXPECT_EQ(sorted, expected) << threads << " threads, n " << n << ", " << distinct << " values, order " << order;
        }
      }
    }
  }
  EXPECT_GT(host::RangeSplit(11).count(), 1) << "the test must reach the parallel path";
}

TEST_F(HostRanges, OffsetsAreTheRunningSumOfTheCounts) {
  std::mt19937_64 random(5);
  for (int threads : {1, 3, 5}) {
    host::set_threads(threads);
    for (std::int64_t n : {0, 1, 2, 3, 7, 1000}) {
      std::vector<std::int64_t> counts(static_cast<std::size_t>(n));
      for (std::int64_t& c : counts) c = random() % 4 == 0 ? 0 : static_cast<std::int64_t>(random() % 9);
      std::vector<std::int64_t> expected(counts.size() + 1, 0);
      std::partial_sum(counts.begin(), counts.end(), expected.begin() + 1);
      std::vector<std::int64_t> offsets(counts.size() + 1, -1);  // every entry must be written
      const std::int64_t total =
          host::offsets_from_counts(n, [&](std::int64_t i) { return counts[i]; }, offsets.data());
      EXPECT_EQ(offsets, expected) << threads << " threads, n " << n;
      EXPECT_EQ(total, expected.back());
    }
  }
  EXPECT_GT(host::RangeSplit(7).count(), 1) << "the test must reach the parallel path";
}

TEST_F(HostRanges, StackedPiecesAreTheWholeMatrix) {
  // 5x4: rows {0: (1, 1.0)}, {}, {2: (0, 2.0), (3, 3.0)}, {}, {4: (2, 4.0)}.
  Csr<double> top = Csr<double>::empty(2, 4), middle = Csr<double>::empty(0, 4), bottom = Csr<double>::empty(3, 4);
  top.row_ptr = {0, 1, 1};
  top.col_idx = {1};
  top.values = {1.0};
  bottom.row_ptr = {0, 2, 2, 3};
  bottom.col_idx = {0, 3, 2};
  bottom.values = {2.0, 3.0, 4.0};
  std::vector<Csr<double>> pieces{top, middle, bottom};
  const Csr<double> whole = stack_rows(pieces, 4);
  EXPECT_EQ(whole.rows, 5);
  EXPECT_EQ(whole.cols, 4);
  EXPECT_EQ(whole.row_ptr, (std::vector<std::int64_t>{0, 1, 1, 3, 3, 4}));
  EXPECT_EQ(whole.col_idx, (std::vector<std::int32_t>{1, 0, 3, 2}));
  EXPECT_EQ(whole.values, (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
  std::vector<Csr<double>> none;
  EXPECT_EQ(stack_rows(none, 7).rows, 0);
}

TEST_F(HostRanges, StackedRowBlocksAreTheWholeBlock) {
  // Rows [10, 15) of a 20x30 matrix, global columns: {10: 25}, {}, {12: 0, 29}, {}, {14: 7}.
  RowBlock top, middle, bottom;
  for (RowBlock* b : {&top, &middle, &bottom}) b->global_rows = 20, b->global_cols = 30;
  top.row_begin = 10, top.row_end = 12, middle.row_begin = middle.row_end = 12;
  bottom.row_begin = 12, bottom.row_end = 15;
  top.row_ptr = {0, 1, 1};
  top.col = {25};
  top.values = {1.0};
  bottom.row_ptr = {0, 2, 2, 3};
  bottom.col = {0, 29, 7};
  bottom.values = {2.0, 3.0, 4.0};
  std::vector<RowBlock> pieces{top, middle, bottom};
  const RowBlock whole = stack_rows(pieces);
  EXPECT_EQ(whole.global_rows, 20);
  EXPECT_EQ(whole.global_cols, 30);
  EXPECT_EQ(whole.row_begin, 10);
  EXPECT_EQ(whole.row_end, 15);
  EXPECT_EQ(whole.row_ptr, (std::vector<std::int64_t>{0, 1, 1, 3, 3, 4}));
  EXPECT_EQ(whole.col, (std::vector<std::int64_t>{25, 0, 29, 7}));
  EXPECT_EQ(whole.values, (std::vector<double>{1.0, 2.0, 3.0, 4.0}));

  std::vector<RowBlock> gap{top, bottom};
  gap[1].row_begin = 13;  // rows 12 and 13 apart: not one block
  EXPECT_THROW(stack_rows(gap), Error);
}

}  // namespace
}  // namespace tessera
