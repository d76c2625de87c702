#include "amg/dist/dist_tentative_steps.hpp"

#include <algorithm>
#include <utility>

#include "amg/aggregation.hpp"
#include "amg/dist/dist_exchange.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/host_sort_unique.hpp"

namespace tessera::amg {

void check_tentative_input(const dist::Communicator& comm, const DistNodes& fine, const dist::DistMatrix& a,
                           const DenseMatrix& b) {
  // Slots number this rank's dofs 0..owned_dofs-1: the node layout must cover exactly its rows.
  const std::string error =
      b.rows == a.owned_rows() && b.layout == Layout::row_major && b.cols >= 1 && fine.ptr.back() == a.owned_rows()
          ? ""
          : tessera::detail::concat("AMG: rank ", comm.rank(), " holds ", b.rows, " x ", b.cols,
                                    " near-null rows (row-major, k >= 1 expected) and nodes of ", fine.ptr.back(),
                                    " dofs for its ", a.owned_rows(), " rows");
  dist::throw_if_any_rank_failed(comm, error);
}

// Ranges of nodes count what they send to each rank, then write it at their offset in the
// serial order (few items: only the dofs of aggregates that straddle ranks).
RoutedMembers route_members(const dist::Communicator& comm, const DistAggregates& agg, const DistNodes& fine,
                            std::int64_t row_begin, const DenseMatrix& b) {
  const std::size_t ranks = static_cast<std::size_t>(comm.size());
  const int me = comm.rank();
  // The owned aggregates' range: most nodes are in it, and need no search of the partition.
  const std::int64_t first_owned = agg.partition.begin(me), end_owned = agg.partition.end(me);
  const auto owner = [&](std::int64_t n) {
    const std::int64_t x = agg.of_node[n];
    return x == kNotAggregated || (x >= first_owned && x < end_owned) ? me : agg.partition.owner(x);
  };
  const host::RangeSplit nodes(fine.count());
  // at[range][q]: where range's dofs for rank q start in member_to[q] (their count, first).
  std::vector<std::vector<std::size_t>> at(static_cast<std::size_t>(nodes.count()), std::vector<std::size_t>(ranks, 0));
  nodes.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n)
      if (const int q = owner(n); q != me) at[range][q] += static_cast<std::size_t>(fine.ptr[n + 1] - fine.ptr[n]);
  });
  std::vector<std::vector<AggregateMember>> member_to(ranks);
  std::vector<std::vector<double>> rows_to(ranks);
  std::size_t sent = 0;
  for (std::size_t q = 0; q < ranks; ++q) {
    std::size_t total = 0;
    for (std::vector<std::size_t>& range_at : at) total += std::exchange(range_at[q], total);
    member_to[q].resize(total);
    rows_to[q].resize(total * static_cast<std::size_t>(b.cols));
    sent += total;
  }
  // A rank whose nodes all lie in its own aggregates (always, on one rank) places nothing.
  const auto place = [&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n) {
      const int q = owner(n);
      if (q == me) continue;
      for (std::int64_t d = fine.ptr[n]; d < fine.ptr[n + 1]; ++d) {
        const std::size_t i = at[range][q]++;
        member_to[q][i] = {agg.of_node[n], row_begin + d};
        for (std::int64_t j = 0; j < b.cols; ++j) rows_to[q][i * b.cols + j] = b.at(d, j);
      }
    }
  };
  if (sent > 0) nodes.run(place);
  RoutedMembers out;
  out.members = route(comm, member_to);
  out.rows = route(comm, rows_to);
  // Ranks own increasing row ranges and send in node order: both versions rely on this order.
  for (std::size_t i = 1; i < out.members.size(); ++i)
    TESSERA_ASSERT(out.members[i - 1].dof < out.members[i].dof, "AMG: aggregate members arrived out of dof order");
  return out;
}

CoarseNumbering number_coarse_dofs(const dist::Communicator& comm, const std::vector<std::int64_t>& sizes) {
  CoarseNumbering out;
  out.nodes = dist_nodes_from_sizes(comm, sizes);
  std::vector<std::int64_t> offsets{0};
  for (std::int64_t c : comm.allgather(out.nodes.ptr.back())) offsets.push_back(offsets.back() + c);
  out.rows = dist::RowPartition::from_offsets(comm, offsets.back(), offsets, dist::Alignment::any);
  return out;
}

ReturnedQRows return_q_rows(const dist::Communicator& comm, const QRowsByRank& to) {
  ReturnedQRows out;
  out.rows = route(comm, to.rows);
  out.values = route(comm, to.values);
  return out;
}

dist::DistMatrix tentative_blocks(const dist::Communicator& comm, Csr<double> own, const ReturnedQRows& returned,
                                  int k, const dist::RowPartition& row_partition,
                                  const dist::RowPartition& coarse_rows, ListedRows* nonlocal_rows) {
  const std::int64_t row_begin = row_partition.begin(comm.rank()), rows = own.rows;
  // The returned rows' columns are the ghosts; each row is a run of consecutive coarse dofs of
  // one aggregate, so its ghost indices increase too.
  std::vector<std::int64_t> ghosts;
  for (const QRow& q : returned.rows)
    for (std::int64_t j = 0; j < q.count; ++j) ghosts.push_back(q.first_coarse + j);
  host::sort_unique(ghosts);
  // Few rows come back (the dofs of aggregates that straddle ranks): in dof order, they give
  // the non-local block's offsets in one parallel pass over the rows.
  std::vector<std::size_t> order(returned.rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto dof_of = [&](std::size_t i) { return returned.rows[i].dof - row_begin; };
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return dof_of(x) < dof_of(y); });
  std::vector<std::int64_t> entries_before(order.size() + 1, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::int64_t d = dof_of(order[i]);
    TESSERA_ASSERT(d >= 0 && d < rows && (i == 0 || d != dof_of(order[i - 1])) && own.row_length(d) == 0,
                   "AMG: a Q row returned for dof ", d + row_begin, ", which is not this rank's or has one already");
    entries_before[i + 1] = entries_before[i] + returned.rows[order[i]].count;
  }
  if (nonlocal_rows) {
    nonlocal_rows->rows.resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) nonlocal_rows->rows[i] = dof_of(order[i]);
    nonlocal_rows->ptr = entries_before;
  }
  Csr<double> nonlocal;
  nonlocal.rows = rows;
  nonlocal.cols = static_cast<std::int64_t>(ghosts.size());
  nonlocal.row_ptr.resize(static_cast<std::size_t>(rows) + 1);
  nonlocal.row_ptr[0] = 0;
  host::for_ranges(rows, [&](std::int64_t begin, std::int64_t end) {
    std::size_t i = static_cast<std::size_t>(
        std::lower_bound(order.begin(), order.end(), begin, [&](std::size_t x, std::int64_t d) { return dof_of(x) < d; }) -
        order.begin());
    for (std::int64_t d = begin; d < end; ++d) {
      if (i < order.size() && dof_of(order[i]) == d) ++i;
      nonlocal.row_ptr[d + 1] = entries_before[i];
    }
  });
  nonlocal.col_idx.resize(static_cast<std::size_t>(nonlocal.row_ptr[rows]));
  nonlocal.values.resize(nonlocal.col_idx.size());
  for (std::size_t i = 0; i < returned.rows.size(); ++i) {
    const QRow& q = returned.rows[i];
    const std::int64_t start = nonlocal.row_ptr[q.dof - row_begin];
    const auto first = static_cast<std::int32_t>(std::lower_bound(ghosts.begin(), ghosts.end(), q.first_coarse) -
                                                 ghosts.begin());
    for (std::int64_t j = 0; j < q.count; ++j) {
      nonlocal.col_idx[start + j] = first + static_cast<std::int32_t>(j);
      nonlocal.values[start + j] = returned.values[i * k + j];
    }
  }
  return dist::assemble_blocks(comm, std::move(own), std::move(nonlocal), std::move(ghosts), row_partition,
                               coarse_rows);
}

}  // namespace tessera::amg
