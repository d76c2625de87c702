#include "amg/dist/dist_tentative.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "amg/dist/dist_exchange.hpp"
#include "amg/tentative_prolongator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_array.hpp"
#include "local/core/host_offsets.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::amg {
namespace {

struct Member {
  std::int64_t aggregate, dof;  // global ids
};

struct QRow {
  std::int64_t dof, first_coarse, count;  // P_tent row `dof`: columns [first, first + count)
};

/// Step 1: this rank's aggregated dofs whose aggregate another rank owns, with their near-null
/// rows, addressed to that rank. Dofs of this rank's own aggregates stay where they are. Ranges
/// of nodes count what they send to each rank, then write it at their offset in the serial
/// order (few items: only the dofs of aggregates that straddle ranks).
void send_members(const dist::Communicator& comm, const DistAggregates& agg, const DistNodes& fine,
                  std::int64_t row_begin, const DenseMatrix& b, std::vector<Member>& members, std::vector<double>& rows) {
  const std::size_t ranks = static_cast<std::size_t>(comm.size());
  const int me = comm.rank();
  const auto owner = [&](std::int64_t n) {
    return agg.of_node[n] == kNotAggregated ? me : agg.partition.owner(agg.of_node[n]);
  };
  const host::RangeSplit nodes(fine.count());
  // at[range][q]: where range's dofs for rank q start in member_to[q] (their count, first).
  std::vector<std::vector<std::size_t>> at(static_cast<std::size_t>(nodes.count()), std::vector<std::size_t>(ranks, 0));
  nodes.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n)
      if (const int q = owner(n); q != me) at[range][q] += static_cast<std::size_t>(fine.ptr[n + 1] - fine.ptr[n]);
  });
  std::vector<std::vector<Member>> member_to(ranks);
  std::vector<std::vector<double>> rows_to(ranks);
  for (std::size_t q = 0; q < ranks; ++q) {
    std::size_t total = 0;
    for (std::vector<std::size_t>& range_at : at) total += std::exchange(range_at[q], total);
    member_to[q].resize(total);
    rows_to[q].resize(total * static_cast<std::size_t>(b.cols));
  }
  nodes.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n) {
      const int q = owner(n);
      if (q == me) continue;
      for (std::int64_t d = fine.ptr[n]; d < fine.ptr[n + 1]; ++d) {
        const std::size_t i = at[range][q]++;
        member_to[q][i] = {agg.of_node[n], row_begin + d};
        for (std::int64_t j = 0; j < b.cols; ++j) rows_to[q][i * b.cols + j] = b.at(d, j);
      }
    }
  });
  members = route(comm, member_to);
  rows = route(comm, rows_to);
}

/// The members of this rank's aggregates, each aggregate's in global dof order. A member is a
/// slot: s < owned dofs is this rank's dof s, else received member s - owned dofs.
struct OwnedAggregates {
  std::vector<std::int64_t> begin;  // aggregate x's slots: slot[begin[x], begin[x + 1])
  HostArray<std::int64_t> slot;     // every entry written by the placing pass
};

/// Step 2: a bucketing by aggregate of this rank's dofs and the received members, each
/// aggregate's members in global dof order. Ranges count and place members with atomic
/// cursors (any order), then each aggregate's few members are sorted by global dof: the result
/// is the serial stable bucketing's, for any number of ranges.
OwnedAggregates group_members(const DistAggregates& agg, const DistNodes& fine, std::int64_t first_aggregate,
                              std::int64_t row_begin, const std::vector<Member>& received) {
  const std::int64_t owned_dofs = fine.ptr.back(), count = static_cast<std::int64_t>(agg.roots.size());
  const auto owned = [&](std::int64_t aggregate) {
    return aggregate != kNotAggregated && aggregate >= first_aggregate && aggregate < first_aggregate + count;
  };
  for (std::size_t i = 1; i < received.size(); ++i)
    TESSERA_ASSERT(received[i - 1].dof < received[i].dof, "AMG: aggregate members arrived out of dof order");
  const auto received_count = static_cast<std::int64_t>(received.size());
  // A slot's global dof: the sort key.
  const auto dof_of = [&](std::int64_t slot) {
    return slot < owned_dofs ? row_begin + slot : received[static_cast<std::size_t>(slot - owned_dofs)].dof;
  };
  // Phase 1 counts members into cursor[x]; phase 2 hands out positions from it.
  std::vector<std::atomic<std::int64_t>> cursor(static_cast<std::size_t>(count));
  const auto for_members = [&](auto&& visit) {  // visit(aggregate - first_aggregate, slot)
    host::for_ranges(fine.count(), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t n = begin; n < end; ++n)
        if (owned(agg.of_node[n]))
          for (std::int64_t d = fine.ptr[n]; d < fine.ptr[n + 1]; ++d) visit(agg.of_node[n] - first_aggregate, d);
    });
    host::for_ranges(received_count, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) visit(received[i].aggregate - first_aggregate, owned_dofs + i);
    });
  };
  for_members([&](std::int64_t x, std::int64_t) { cursor[x].fetch_add(1, std::memory_order_relaxed); });
  OwnedAggregates out;
  out.begin.assign(static_cast<std::size_t>(count) + 1, 0);
  for (std::int64_t x = 0; x < count; ++x) {
    out.begin[x + 1] = out.begin[x] + cursor[x].load(std::memory_order_relaxed);
    cursor[x].store(out.begin[x], std::memory_order_relaxed);
  }
  out.slot.resize(static_cast<std::size_t>(out.begin.back()));
  for_members([&](std::int64_t x, std::int64_t slot) {
    out.slot[cursor[x].fetch_add(1, std::memory_order_relaxed)] = slot;
  });
  host::for_ranges(count, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t x = begin; x < end; ++x)
      std::sort(out.slot.begin() + out.begin[x], out.slot.begin() + out.begin[x + 1],
                [&](std::int64_t s, std::int64_t t) { return dof_of(s) < dof_of(t); });
  });
  return out;
}

/// This rank's rows of P_tent as they are found: row d holds columns [first[d], first[d] +
/// count[d]) with values[d * k, d * k + count[d]). Rows of non-aggregated dofs stay empty: only
/// the counts start at zero (on the rank's threads), first and values are read where set.
struct QRowsOfOwnedDofs {
  HostArray<std::int64_t> first, count;
  HostArray<double> values;
  QRowsOfOwnedDofs(std::int64_t dofs, int k)
      : first(static_cast<std::size_t>(dofs)), count(first.size()), values(first.size() * k) {
    host::for_ranges(dofs, [&](std::int64_t begin, std::int64_t end) {
      std::fill(count.begin() + begin, count.begin() + end, 0);
    });
  }
  void set(std::int64_t d, std::int64_t first_coarse, std::int64_t c, int k, const double* q) {
    first[d] = first_coarse;
    count[d] = c;
    std::copy(q, q + k, values.begin() + d * k);
  }
};

}  // namespace

DistTentative dist_tentative_prolongator(const dist::Communicator& comm, const DistAggregates& agg,
                                         const DistNodes& fine, const dist::DistMatrix& a, const DenseMatrix& b) {
  const int k = static_cast<int>(b.cols);
  // Slots number this rank's dofs 0..owned_dofs-1: the node layout must cover exactly its rows.
  const std::string error =
      b.rows == a.owned_rows() && b.layout == Layout::row_major && k >= 1 && fine.ptr.back() == a.owned_rows()
          ? ""
          : tessera::detail::concat("AMG: rank ", comm.rank(), " holds ", b.rows, " x ", b.cols,
                                    " near-null rows (row-major, k >= 1 expected) and nodes of ", fine.ptr.back(),
                                    " dofs for its ", a.owned_rows(), " rows");
  dist::throw_if_any_rank_failed(comm, error);
  const std::int64_t owned_dofs = a.owned_rows();
  std::vector<Member> received;
  std::vector<double> received_rows;
  std::optional<trace::Step> step(std::in_place, "send_members");
  send_members(comm, agg, fine, a.row_begin(), b, received, received_rows);
  const std::int64_t first_aggregate = agg.partition.begin(comm.rank());
  const std::int64_t owned_aggregates = static_cast<std::int64_t>(agg.roots.size());
  step.emplace("group_members");
  const OwnedAggregates members = group_members(agg, fine, first_aggregate, a.row_begin(), received);
  const std::vector<std::int64_t>& begin = members.begin;

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
  // Aggregates are independent: ranges of them run in parallel. Q rows of this rank's dofs are
  // written in place; those of received dofs are kept by received slot, then addressed to
  // their owners in aggregate order (the serial loop's).
  QRowsOfOwnedDofs rows_of(owned_dofs, k);
  QRowsOfOwnedDofs rows_of_received(static_cast<std::int64_t>(received.size()), k);
  host::for_ranges(owned_aggregates, [&](std::int64_t begin_x, std::int64_t end_x) {
    std::vector<double> block, q, r, reflectors, q_row(static_cast<std::size_t>(k));
    for (std::int64_t x = begin_x; x < end_x; ++x) {
      const std::int64_t m = begin[x + 1] - begin[x], c = sizes[x];
      const std::int64_t* slot = members.slot.data() + begin[x];
      block.assign(static_cast<std::size_t>(m) * k, 0.0);
      for (std::int64_t i = 0; i < m; ++i) {
        // Row-major near-null rows: this rank's dof d at data[d * k], received ones as sent.
        const double* row =
            slot[i] < owned_dofs ? b.data.data() + slot[i] * k : &received_rows[(slot[i] - owned_dofs) * k];
        for (int j = 0; j < k; ++j) block[j * m + i] = row[j];
      }
      thin_qr(m, k, block, q, r, reflectors);
      const std::int64_t first = out.coarse_nodes.ptr[x];
      for (std::int64_t i = 0; i < c; ++i)
        for (int j = 0; j < k; ++j) out.coarse_vectors.at(first + i, j) = r[i * k + j];
      // Step 3: Q row i, padded to k values, is row slot[i] of P_tent.
      for (std::int64_t i = 0; i < m; ++i) {
        for (int j = 0; j < k; ++j) q_row[j] = j < c ? q[j * m + i] : 0.0;
        if (slot[i] < owned_dofs)
          rows_of.set(slot[i], coarse_begin + first, c, k, q_row.data());
        else
          rows_of_received.set(slot[i] - owned_dofs, coarse_begin + first, c, k, q_row.data());
      }
    }
  });
  std::vector<std::vector<QRow>> q_to(static_cast<std::size_t>(comm.size()));
  std::vector<std::vector<double>> q_values_to(q_to.size());
  {
    std::vector<std::size_t> q_rows_to(q_to.size(), 0);  // sized first, as in send_members
    for (const Member& member : received) ++q_rows_to[a.row_partition.owner(member.dof)];
    for (std::size_t owner = 0; owner < q_to.size(); ++owner) {
      q_to[owner].reserve(q_rows_to[owner]);
      q_values_to[owner].reserve(q_rows_to[owner] * static_cast<std::size_t>(k));
    }
  }
  for (std::int64_t x = 0; x < owned_aggregates; ++x)
    for (std::int64_t t = begin[x]; t < begin[x + 1]; ++t) {
      if (members.slot[t] < owned_dofs) continue;
      const std::int64_t i = members.slot[t] - owned_dofs, dof = received[i].dof;
      const int owner = a.row_partition.owner(dof);
      q_to[owner].push_back({dof, rows_of_received.first[i], rows_of_received.count[i]});
      const auto q_row = rows_of_received.values.begin() + i * k;
      q_values_to[owner].insert(q_values_to[owner].end(), q_row, q_row + k);
    }
  step.emplace("return_q");
  const std::vector<QRow> q_rows = route(comm, q_to);
  const std::vector<double> q_values = route(comm, q_values_to);
  for (std::size_t i = 0; i < q_rows.size(); ++i)
    rows_of.set(q_rows[i].dof - a.row_begin(), q_rows[i].first_coarse, q_rows[i].count, k, &q_values[i * k]);

  step.emplace("rows");
  RowBlock p;
  p.global_rows = a.global_rows();
  p.global_cols = coarse_rows.global_rows();
  p.row_begin = a.row_begin();
  p.row_end = a.row_begin() + owned_dofs;
  p.row_ptr.resize(static_cast<std::size_t>(owned_dofs) + 1);
  host::offsets_from_counts(owned_dofs, [&](std::int64_t d) { return rows_of.count[d]; }, p.row_ptr.data());
  p.col.resize(static_cast<std::size_t>(p.row_ptr.back()));  // both written below
  p.values.resize(p.col.size());
  host::for_ranges(owned_dofs, [&](std::int64_t begin_d, std::int64_t end_d) {
    for (std::int64_t d = begin_d; d < end_d; ++d)
      for (std::int64_t j = 0; j < rows_of.count[d]; ++j) {
        p.col[p.row_ptr[d] + j] = rows_of.first[d] + j;
        p.values[p.row_ptr[d] + j] = rows_of.values[d * k + j];
      }
  });
  step.emplace("assemble");
  out.p = dist::assemble(comm, p, a.row_partition, coarse_rows);
  return out;
}

}  // namespace tessera::amg
