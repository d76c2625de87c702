#include "amg/dist/dist_tentative.hpp"

#include <algorithm>
#include <optional>

#include "amg/dist/dist_exchange.hpp"
#include "amg/tentative_prolongator.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::amg {
namespace {

struct Member {
  std::int64_t aggregate, dof;  // global ids
};

struct QRow {
  std::int64_t dof, first_coarse, count;  // P_tent row `dof`: columns [first, first + count)
};

/// Step 1: members and their near-null rows, addressed to the aggregates' owners.
void send_members(const dist::Communicator& comm, const DistAggregates& agg, const DistNodes& fine,
                  std::int64_t row_begin, const DenseMatrix& b, std::vector<Member>& members, std::vector<double>& rows) {
  const std::size_t ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::vector<Member>> member_to(ranks);
  std::vector<std::vector<double>> rows_to(ranks);
  std::vector<std::size_t> dofs_to(ranks, 0);  // sized first: millions of members, no regrowth
  for (std::int64_t n = 0; n < fine.count(); ++n)
    if (agg.of_node[n] != kNotAggregated)
      dofs_to[agg.partition.owner(agg.of_node[n])] += static_cast<std::size_t>(fine.ptr[n + 1] - fine.ptr[n]);
  for (std::size_t q = 0; q < ranks; ++q) {
    member_to[q].reserve(dofs_to[q]);
    rows_to[q].reserve(dofs_to[q] * static_cast<std::size_t>(b.cols));
  }
  for (std::int64_t n = 0; n < fine.count(); ++n) {
    const std::int64_t a = agg.of_node[n];
    if (a == kNotAggregated) continue;
    const int owner = agg.partition.owner(a);
    for (std::int64_t d = fine.ptr[n]; d < fine.ptr[n + 1]; ++d) {
      member_to[owner].push_back({a, row_begin + d});
      for (std::int64_t j = 0; j < b.cols; ++j) rows_to[owner].push_back(b.at(d, j));
    }
  }
  members = route(comm, member_to);
  rows = route(comm, rows_to);
}

}  // namespace

DistTentative dist_tentative_prolongator(const dist::Communicator& comm, const DistAggregates& agg,
                                         const DistNodes& fine, const dist::DistMatrix& a, const DenseMatrix& b) {
  const int k = static_cast<int>(b.cols);
  const std::string error =
      b.rows == a.owned_rows() && b.layout == Layout::row_major && k >= 1
          ? ""
          : tessera::detail::concat("AMG: rank ", comm.rank(), " holds ", b.rows, " x ", b.cols,
                           " near-null rows (row-major, k >= 1 expected) for its ", a.owned_rows(), " rows");
  dist::throw_if_any_rank_failed(comm, error);
  std::vector<Member> members;
  std::vector<double> rows;
  std::optional<trace::Step> step(std::in_place, "send_members");
  send_members(comm, agg, fine, a.row_begin(), b, members, rows);

  // Step 2: group the received members by owned aggregate, in global dof order. They arrive
  // in dof order already (route delivers in source rank order, each source sent its dofs in
  // increasing order, and ranks own increasing dof ranges), so a stable bucketing by aggregate
  // is the sort by (aggregate, dof).
  const std::int64_t first_aggregate = agg.partition.begin(comm.rank());
  const std::int64_t owned_aggregates = static_cast<std::int64_t>(agg.roots.size());
  std::vector<std::int64_t> begin(static_cast<std::size_t>(owned_aggregates) + 1, 0);
  for (const Member& m : members) ++begin[m.aggregate - first_aggregate + 1];
  for (std::int64_t x = 0; x < owned_aggregates; ++x) begin[x + 1] += begin[x];
  std::vector<std::int64_t> order(members.size());
  std::vector<std::int64_t> at(begin.begin(), begin.end() - 1);
  for (std::size_t i = 0; i < members.size(); ++i) {
    TESSERA_ASSERT(i == 0 || members[i - 1].dof < members[i].dof, "AMG: aggregate members arrived out of dof order");
    order[at[members[i].aggregate - first_aggregate]++] = static_cast<std::int64_t>(i);
  }

  step.emplace("coarse_numbering");
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(owned_aggregates));
  for (std::int64_t x = 0; x < owned_aggregates; ++x) sizes[x] = std::min<std::int64_t>(begin[x + 1] - begin[x], k);
  DistTentative out;
  out.coarse_nodes = dist_nodes_from_sizes(comm, sizes);  // coarse dofs: owned aggregates' sizes
  std::vector<std::int64_t> coarse_counts_offsets{0};
  for (std::int64_t c : comm.allgather(out.coarse_nodes.ptr.back()))
    coarse_counts_offsets.push_back(coarse_counts_offsets.back() + c);
  const dist::RowPartition coarse_rows = dist::RowPartition::from_offsets(
      comm, coarse_counts_offsets.back(), coarse_counts_offsets, dist::Alignment::any);
  const std::int64_t coarse_begin = coarse_rows.begin(comm.rank());
  out.coarse_vectors = DenseMatrix(out.coarse_nodes.ptr.back(), k, Layout::row_major, 0.0);

  step.emplace("qr");
  std::vector<std::vector<QRow>> q_to(static_cast<std::size_t>(comm.size()));
  std::vector<std::vector<double>> q_values_to(q_to.size());
  {
    std::vector<std::size_t> q_rows_to(q_to.size(), 0);  // sized first, as in send_members
    for (const Member& member : members) ++q_rows_to[a.row_partition.owner(member.dof)];
    for (std::size_t owner = 0; owner < q_to.size(); ++owner) {
      q_to[owner].reserve(q_rows_to[owner]);
      q_values_to[owner].reserve(q_rows_to[owner] * static_cast<std::size_t>(k));
    }
  }
  std::vector<double> block, q, r, reflectors;
  for (std::int64_t x = 0; x < owned_aggregates; ++x) {
    const std::int64_t m = begin[x + 1] - begin[x], c = sizes[x];
    block.assign(static_cast<std::size_t>(m) * k, 0.0);
    for (std::int64_t i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) block[j * m + i] = rows[order[begin[x] + i] * k + j];
    thin_qr(m, k, block, q, r, reflectors);
    const std::int64_t first = out.coarse_nodes.ptr[x];
    for (std::int64_t i = 0; i < c; ++i)
      for (int j = 0; j < k; ++j) out.coarse_vectors.at(first + i, j) = r[i * k + j];
    // Step 3: Q row i goes back to the owner of dof i, padded to k values.
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t dof = members[order[begin[x] + i]].dof;
      const int owner = a.row_partition.owner(dof);
      q_to[owner].push_back({dof, coarse_begin + first, c});
      for (int j = 0; j < k; ++j) q_values_to[owner].push_back(j < c ? q[j * m + i] : 0.0);
    }
  }
  step.emplace("return_q");
  const std::vector<QRow> q_rows = route(comm, q_to);
  const std::vector<double> q_values = route(comm, q_values_to);

  step.emplace("rows");
  RowBlock p;
  p.global_rows = a.global_rows();
  p.global_cols = coarse_rows.global_rows();
  p.row_begin = a.row_begin();
  p.row_end = a.row_begin() + a.owned_rows();
  // Row lengths first (each dof receives at most one Q row), then every row written in place.
  p.row_ptr.assign(static_cast<std::size_t>(a.owned_rows()) + 1, 0);
  for (const QRow& row : q_rows) p.row_ptr[row.dof - a.row_begin() + 1] = row.count;
  for (std::int64_t d = 0; d < a.owned_rows(); ++d) p.row_ptr[d + 1] += p.row_ptr[d];
  p.col.resize(static_cast<std::size_t>(p.row_ptr.back()));
  p.values.resize(p.col.size());
  for (std::size_t i = 0; i < q_rows.size(); ++i) {
    const std::int64_t start = p.row_ptr[q_rows[i].dof - a.row_begin()];
    for (std::int64_t j = 0; j < q_rows[i].count; ++j) {
      p.col[start + j] = q_rows[i].first_coarse + j;
      p.values[start + j] = q_values[i * k + j];
    }
  }
  step.emplace("assemble");
  out.p = dist::assemble(comm, p, a.row_partition, coarse_rows);
  return out;
}

}  // namespace tessera::amg
