// RowPartition: balanced, explicit and nnz-balanced partitions, and invalid partitions refused
// with the same InputError on every rank (the test would hang, and hit the ctest TIMEOUT, if
// any rank went on to a collective the others skipped).
#include <functional>

#include "dist_test_util.hpp"
#include "local/core/error.hpp"

namespace tessera::dist {
namespace {

using testing::same_on_every_rank;

void expect_valid(const RowPartition& p, std::int64_t n, int ranks) {
  EXPECT_EQ(partition_error(n, ranks, p.offsets()), "");
  for (int r = 0; r < ranks; ++r)
    for (std::int64_t row = p.begin(r); row < p.end(r); ++row) ASSERT_EQ(p.owner(row), r) << "row " << row;
}

TEST(Partition, BalancedRowsIsTileAlignedAndEven) {
  const Communicator comm;
  for (std::int64_t n : {0, 1, 7, 8, 9, 31, 100, 1001}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const RowPartition p = RowPartition::balanced_rows(n, comm.size());
    expect_valid(p, n, comm.size());
    const std::int64_t tiles = (n + 7) / 8;
    for (int r = 0; r < comm.size(); ++r) {
      EXPECT_LE((p.size(r) + 7) / 8, tiles / comm.size() + 1);  // whole tile-rows, spread evenly
      EXPECT_GE((p.size(r) + 7) / 8, tiles / comm.size());
    }
  }
}

TEST(Partition, ExplicitUnevenOffsetsWithEmptyRanksAreAccepted) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::int64_t n : {0, 5, 64, 203}) {
    const RowPartition p = testing::uneven_partition(comm, n, seed + n);
    expect_valid(p, n, comm.size());
    // An explicit partition with every row on the last rank.
    std::vector<std::int64_t> last(static_cast<std::size_t>(comm.size()) + 1, 0);
    last.back() = n;
    expect_valid(RowPartition::from_offsets(comm, n, last), n, comm.size());
  }
}

TEST(Partition, BalancedNnzBoundsEveryRankByMeanPlusOneTileRow) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::int64_t n : {1, 13, 257, 1000}) {
    // Skewed lengths: a heavy head, empty stretches, random tail.
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) lengths[i] = i < n / 10 ? 50 : (i % 7 == 0 ? 0 : static_cast<std::int64_t>(rng() % 9));
    const RowPartition start = RowPartition::balanced_rows(n, comm.size());
    const int me = comm.rank();
    const std::vector<std::int64_t> mine(lengths.begin() + start.begin(me), lengths.begin() + start.end(me));
    const RowPartition p = RowPartition::balanced_nnz(comm, start, mine);
    expect_valid(p, n, comm.size());
    std::int64_t total = 0, heaviest_tile = 0;
    for (std::int64_t t = 0; t < n; t += 8) {
      std::int64_t tile_nnz = 0;
      for (std::int64_t i = t; i < std::min(n, t + 8); ++i) tile_nnz += lengths[i];
      heaviest_tile = std::max(heaviest_tile, tile_nnz);
      total += tile_nnz;
    }
    for (int r = 0; r < comm.size(); ++r) {
      std::int64_t nnz = 0;
      for (std::int64_t i = p.begin(r); i < p.end(r); ++i) nnz += lengths[i];
      EXPECT_LE(static_cast<double>(nnz), static_cast<double>(total) / comm.size() + heaviest_tile)
          << "rank " << r << " n " << n;
    }
  }
}

// Runs `make` on every rank and checks each rank threw an InputError with the same text
// containing `expect`.
void expect_same_error_everywhere(const Communicator& comm, const std::function<void()>& make,
                                  const std::string& expect) {
  std::string message;
  try {
    make();
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(expect), std::string::npos) << "message: '" << message << "'";
  EXPECT_TRUE(same_on_every_rank(comm, static_cast<std::int64_t>(std::hash<std::string>{}(message) >> 1)))
      << "ranks disagree; this rank says: " << message;
}

TEST(Partition, InvalidOffsetsThrowTheSameErrorOnEveryRank) {
  const Communicator comm;
  const int ranks = comm.size();
  const std::int64_t n = 8 * ranks + 5;
  std::vector<std::int64_t> good(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r < ranks; ++r) good[r] = 8 * r;
  good[ranks] = n;
  ASSERT_EQ(partition_error(n, ranks, good), "");

  auto make = [&](std::vector<std::int64_t> offsets) { return [&comm, n, offsets] { RowPartition::from_offsets(comm, n, offsets); }; };
  std::vector<std::int64_t> short_list(good.begin(), good.end() - 1);
  expect_same_error_everywhere(comm, make(short_list), "expected " + std::to_string(ranks + 1) + " offsets");
  std::vector<std::int64_t> not_zero = good;
  not_zero[0] = 8;
  expect_same_error_everywhere(comm, make(not_zero), "offsets[0] is 8");
  std::vector<std::int64_t> short_cover = good;
  short_cover[ranks] = n - 1;
  expect_same_error_everywhere(comm, make(short_cover), "must cover every row");
  if (ranks >= 2) {
    std::vector<std::int64_t> decreasing = good;
    decreasing[1] = 16;
    decreasing[ranks - 1] = std::min<std::int64_t>(decreasing[ranks - 1], 8);
    if (ranks == 2) decreasing = {0, 24, n};
    expect_same_error_everywhere(comm, make(decreasing), "decrease");
    std::vector<std::int64_t> misaligned = good;
    misaligned[1] = 3;
    expect_same_error_everywhere(comm, make(misaligned), "not a multiple of the tile height");
  }
  // Different offsets on different ranks: detected, not trusted.
  std::vector<std::int64_t> per_rank = good;
  if (comm.rank() == ranks - 1) per_rank[ranks] = n + 1;
  expect_same_error_everywhere(comm, make(per_rank), ranks == 1 ? "must cover every row" : "ranks passed different");
}

TEST(Partition, BadRowBlockOnOneRankFailsAssemblyOnEveryRank) {
  const Communicator comm;
  const std::int64_t n = 8 * comm.size() + 3;
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const int me = comm.rank(), bad = comm.size() - 1;
  Csr<double> a = Csr<double>::empty(n, n);
  for (std::int64_t r = 0; r < n; ++r) {
    a.col_idx.push_back(static_cast<std::int32_t>(r));
    a.values.push_back(1.0);
    a.row_ptr[r + 1] = a.nnz();
  }
  RowBlock block = row_block(a, p.begin(me), p.end(me));
  if (me == bad && !block.col.empty()) block.col[0] = n + 7;  // out of range on one rank only
  expect_same_error_everywhere(
      comm, [&] { assemble(comm, block, p); }, "rank " + std::to_string(bad) + ": global row");
}

}  // namespace
}  // namespace tessera::dist
