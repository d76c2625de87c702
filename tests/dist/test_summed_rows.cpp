// dist/summed_rows.hpp on random partial rows, 1-4 ranks (uneven partitions, an empty rank):
// the sum's pattern and values against a sum by (row, global column) in contribution order, bit
// for bit; each contribution's position is the entry of its row and column, and a sum through the
// positions (the device's) is the sum; one host thread against three with short ranges; new
// values through the same map; partial rows out of column order; and the hand-over
// (own_rows_as_sum), which ranks may mix with summed_pattern.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dist/summed_rows.hpp"
#include "dist_test_util.hpp"
#include "support/host_threads_scope.hpp"

namespace tessera::dist {
namespace {

/// One rank's input: its own partial block over compact columns (owned rows, then rows for
/// other ranks) and the partial rows it received.
struct PartialRows {
  Csr<double> own;
  std::vector<std::int64_t> global_of;
  std::vector<std::int64_t> row, lengths, cols;  // received
  std::vector<double> received;                  // their values
  ReceivedRows view() const { return {row, lengths, cols}; }
};

/// A random value, sometimes -0.0 (a sum from 0 turns it into +0.0) or an integer (ties).
double random_value(std::mt19937_64& rng) {
  const std::uint64_t kind = rng() % 8;
  if (kind == 0) return -0.0;
  if (kind == 1) return static_cast<double>(static_cast<int>(rng() % 5) - 2);
  return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
}

/// Sorted distinct picks of [0, n), each with probability `p`.
std::vector<std::int64_t> random_subset(std::mt19937_64& rng, std::int64_t n, double p) {
  std::vector<std::int64_t> out;
  std::bernoulli_distribution pick(p);
  for (std::int64_t c = 0; c < n; ++c)
    if (pick(rng)) out.push_back(c);
  return out;
}

PartialRows random_partial_rows(const RowPartition& partition, int rank, std::uint64_t seed) {
  std::mt19937_64 rng(seed + 7919 * static_cast<std::uint64_t>(rank));
  const std::int64_t n = partition.global_rows(), rows = partition.size(rank);
  PartialRows in;
  in.global_of = random_subset(rng, n, 0.3);
  const auto used = static_cast<std::int64_t>(in.global_of.size());
  const std::int64_t extra_rows = static_cast<std::int64_t>(rng() % 4);
  in.own = Csr<double>::empty(rows + extra_rows, used);
  for (std::int64_t r = 0; r < in.own.rows; ++r) {
    for (std::int64_t c : random_subset(rng, used, rng() % 5 == 0 ? 0.0 : 0.1)) {
      in.own.col_idx.push_back(static_cast<std::int32_t>(c));
      in.own.values.push_back(random_value(rng));
    }
    in.own.row_ptr[r + 1] = static_cast<std::int64_t>(in.own.col_idx.size());
  }
  const int partial_rows = rows > 0 ? static_cast<int>(rng() % 25) : 0;
  for (int i = 0; i < partial_rows; ++i) {
    in.row.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows)));  // repeats allowed
    const std::vector<std::int64_t> cols = random_subset(rng, n, rng() % 4 == 0 ? 0.0 : 0.05);
    in.lengths.push_back(static_cast<std::int64_t>(cols.size()));
    in.cols.insert(in.cols.end(), cols.begin(), cols.end());
  }
  for (std::size_t e = 0; e < in.cols.size(); ++e) in.received.push_back(random_value(rng));
  return in;
}

/// Contribution i's owned row and global column: the own entries of the owned rows, then the
/// received ones.
std::vector<std::pair<std::int64_t, std::int64_t>> contribution_coordinates(const PartialRows& in,
                                                                            std::int64_t rows) {
  std::vector<std::pair<std::int64_t, std::int64_t>> at;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = in.own.row_ptr[r]; k < in.own.row_ptr[r + 1]; ++k)
      at.emplace_back(r, in.global_of[static_cast<std::size_t>(in.own.col_idx[k])]);
  for (std::size_t i = 0, e = 0; i < in.row.size(); ++i)
    for (std::int64_t k = 0; k < in.lengths[i]; ++k) at.emplace_back(in.row[i], in.cols[e++]);
  return at;
}

std::vector<double> contribution_values(const PartialRows& in, std::int64_t rows) {
  std::vector<double> v(in.own.values.begin(), in.own.values.begin() + in.own.row_ptr[rows]);
  v.insert(v.end(), in.received.begin(), in.received.end());
  return v;
}

/// The sum by (row, global column): each entry 0 plus its contributions in contribution order.
std::vector<std::map<std::int64_t, double>> sum_by_coordinates(const PartialRows& in, std::int64_t rows) {
  std::vector<std::map<std::int64_t, double>> sum(static_cast<std::size_t>(rows));
  const auto at = contribution_coordinates(in, rows);
  const std::vector<double> values = contribution_values(in, rows);
  for (std::size_t i = 0; i < at.size(); ++i) {
    auto [entry, inserted] = sum[static_cast<std::size_t>(at[i].first)].try_emplace(at[i].second, 0.0);
    entry->second += values[i];
  }
  return sum;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_sum(const DistMatrix& sum, const std::vector<std::map<std::int64_t, double>>& want) {
  std::vector<std::int64_t> ghosts;
  for (std::int64_t r = 0; r < sum.owned_rows(); ++r) {
    std::vector<std::int64_t> cols;
    std::vector<double> values;
    append_row_in_row_order(sum, r, &cols, &values);
    const std::map<std::int64_t, double>& row = want[static_cast<std::size_t>(r)];
    ASSERT_EQ(cols.size(), row.size()) << "row " << r;
    std::size_t i = 0;
    for (const auto& [col, value] : row) {
      EXPECT_EQ(cols[i], col) << "row " << r;
      EXPECT_TRUE(same_bits(values[i], value))
          << "row " << r << " column " << col << ": " << values[i] << " vs " << value;
      if (col < sum.col_begin() || col >= sum.col_begin() + sum.local.cols) ghosts.push_back(col);
      ++i;
    }
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  EXPECT_EQ(sum.ghost_cols, ghosts);
  EXPECT_EQ(sum.nonlocal.cols, static_cast<std::int64_t>(ghosts.size()));
  EXPECT_EQ(sum.local.cols, sum.col_partition.size(sum.rank));
}

/// Each contribution's position holds its row and column, and summing the contributions through
/// the positions in index order from 0 (as DeviceDistPtap does) gives the sum bit for bit.
void expect_positions(const SummationMap& map, const DistMatrix& sum, const PartialRows& in) {
  const std::int64_t rows = sum.owned_rows(), local_entries = sum.local.nnz();
  std::vector<std::pair<std::int64_t, std::int64_t>> of_position(static_cast<std::size_t>(sum.nnz()));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = sum.local.row_ptr[r]; k < sum.local.row_ptr[r + 1]; ++k)
      of_position[static_cast<std::size_t>(k)] = {r, sum.col_begin() + sum.local.col_idx[k]};
    for (std::int64_t k = sum.nonlocal.row_ptr[r]; k < sum.nonlocal.row_ptr[r + 1]; ++k)
      of_position[static_cast<std::size_t>(local_entries + k)] = {r, sum.ghost_cols[sum.nonlocal.col_idx[k]]};
  }
  const std::vector<std::int64_t> positions = contribution_positions(map, sum);
  const auto at = contribution_coordinates(in, rows);
  ASSERT_EQ(positions.size(), at.size());
  std::vector<double> by_position(of_position.size(), 0.0);
  const std::vector<double> values = contribution_values(in, rows);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    ASSERT_GE(positions[i], 0);
    ASSERT_LT(positions[i], sum.nnz());
    EXPECT_EQ(of_position[static_cast<std::size_t>(positions[i])], at[i]) << "contribution " << i;
    by_position[static_cast<std::size_t>(positions[i])] += values[i];
  }
  std::vector<double> got(sum.local.values.begin(), sum.local.values.end());
  got.insert(got.end(), sum.nonlocal.values.begin(), sum.nonlocal.values.end());
  for (std::size_t p = 0; p < got.size(); ++p)
    EXPECT_TRUE(same_bits(got[p], by_position[p])) << "position " << p << ": " << got[p] << " vs " << by_position[p];
}

void expect_same_map(const SummationMap& a, const SummationMap& b) {
  EXPECT_EQ(a.own_entries, b.own_entries);
  EXPECT_EQ(a.merged_rows, b.merged_rows);
  EXPECT_EQ(a.own_first, b.own_first);
  EXPECT_EQ(a.own_positions, b.own_positions);
  EXPECT_EQ(a.received_positions, b.received_positions);
}

SummedPattern summed(const Communicator& comm, const PartialRows& in, const RowPartition& partition) {
  SummedPattern s = summed_pattern(comm, in.own, in.global_of, in.view(), partition);
  add_contributions(s.map, in.own, in.received.data(), s.sum);
  return s;
}

TEST(SummedRows, SumsPartialRowsByRowAndColumnInContributionOrder) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::int64_t n : {1, 9, 203}) {
    for (const RowPartition& partition :
         {RowPartition::balanced_rows(n, comm.size()), testing::uneven_partition(comm, n, seed + n)}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", rank " + std::to_string(comm.rank()) + " owns " +
                   std::to_string(partition.size(comm.rank())) + " rows");
      PartialRows in = random_partial_rows(partition, comm.rank(), seed + n);
      const std::int64_t rows = partition.size(comm.rank());
      SummedPattern s = summed(comm, in, partition);
      expect_sum(s.sum, sum_by_coordinates(in, rows));
      expect_positions(s.map, s.sum, in);

      const SummedPattern threaded =
          tessera::testing::with_host_threads(3, [&] { return summed(comm, in, partition); });
      expect_same_map(threaded.map, s.map);
      EXPECT_EQ(threaded.sum.local, s.sum.local);
      EXPECT_EQ(threaded.sum.nonlocal, s.sum.nonlocal);

      // New values through the same map, as a recompute sends them.
      std::mt19937_64 rng(seed + 1);
      for (double& v : in.own.values) v = random_value(rng);
      for (double& v : in.received) v = random_value(rng);
      add_contributions(s.map, in.own, in.received.data(), s.sum);
      expect_sum(s.sum, sum_by_coordinates(in, rows));

      // Partial rows whose columns are not in order (a product's are; the merge of sorted runs
      // must not depend on it): the same sum by coordinates.
      for (std::size_t i = 0, e = 0; i < in.row.size(); e += static_cast<std::size_t>(in.lengths[i++]))
        std::shuffle(in.cols.begin() + static_cast<std::ptrdiff_t>(e),
                     in.cols.begin() + static_cast<std::ptrdiff_t>(e + static_cast<std::size_t>(in.lengths[i])), rng);
      const SummedPattern unordered = summed(comm, in, partition);
      expect_sum(unordered.sum, sum_by_coordinates(in, rows));
      expect_positions(unordered.map, unordered.sum, in);
    }
  }
}

/// A rank's own rows that are the whole sum: the owned rows over its first `used` owned columns.
PartialRows own_rows_only(const RowPartition& partition, int rank, std::uint64_t seed) {
  std::mt19937_64 rng(seed + rank);
  const std::int64_t rows = partition.size(rank), used = rows > 0 ? 1 + static_cast<std::int64_t>(rng() % rows) : 0;
  PartialRows in;
  for (std::int64_t c = 0; c < used; ++c) in.global_of.push_back(partition.begin(rank) + c);
  in.own = Csr<double>::empty(rows, used);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c : random_subset(rng, used, 0.3)) {
      in.own.col_idx.push_back(static_cast<std::int32_t>(c));
      in.own.values.push_back(random_value(rng));
    }
    in.own.row_ptr[r + 1] = static_cast<std::int64_t>(in.own.col_idx.size());
  }
  return in;
}

TEST(SummedRows, OwnRowsAreHandedOverAndRanksMayMixBothWays) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const RowPartition partition = testing::uneven_partition(comm, 203, seed);
  const int me = comm.rank();
  const std::int64_t rows = partition.size(me);
  PartialRows in = own_rows_only(partition, me, seed);
  EXPECT_TRUE(sum_is_own_rows(in.own, in.global_of, in.view(), partition, me));  // not ASSERT: collectives follow

  // Odd ranks build the same sum's pattern; even ranks hand their rows over (the collectives match).
  Csr<double> own = in.own;
  own.cols = rows;  // the sum's local block: its owned columns
  SummedPattern s = me % 2 == 1 ? summed(comm, in, partition) : own_rows_as_sum(comm, Csr<double>(in.own), partition);
  EXPECT_EQ(s.sum.local, own);
  EXPECT_EQ(s.sum.nonlocal.nnz(), 0);
  EXPECT_TRUE(s.sum.ghost_cols.empty());
  std::vector<std::int64_t> entry_i(static_cast<std::size_t>(own.nnz()));
  std::iota(entry_i.begin(), entry_i.end(), 0);
  EXPECT_EQ(contribution_positions(s.map, s.sum), entry_i);

  // Not the own rows: a received partial row, a used column left of the owned ones, or an entry in
  // a row for another rank.
  PartialRows receiving = in;
  receiving.row = {0}, receiving.lengths = {1}, receiving.cols = {0};
  if (rows > 0) EXPECT_FALSE(sum_is_own_rows(receiving.own, receiving.global_of, receiving.view(), partition, me));
  PartialRows shifted = in;
  if (!shifted.global_of.empty() && shifted.global_of.front() > 0) {
    --shifted.global_of.front();
    EXPECT_FALSE(sum_is_own_rows(shifted.own, shifted.global_of, shifted.view(), partition, me));
  }
  PartialRows extra = in;
  if (!extra.global_of.empty()) {
    extra.own.rows += 1;
    extra.own.col_idx.push_back(0);
    extra.own.values.push_back(1.0);
    extra.own.row_ptr.push_back(extra.own.nnz());
    EXPECT_FALSE(sum_is_own_rows(extra.own, extra.global_of, extra.view(), partition, me));
  }
}

}  // namespace
}  // namespace tessera::dist
