#include "amg/dist/dist_tentative.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "amg/dist/dist_tentative_steps.hpp"
#include "amg/tentative_prolongator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_array.hpp"
#include "local/core/host_offsets.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::amg {
namespace {

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
                              std::int64_t row_begin, const std::vector<AggregateMember>& received) {
  const std::int64_t owned_dofs = fine.ptr.back(), count = static_cast<std::int64_t>(agg.roots.size());
  const auto owned = [&](std::int64_t aggregate) {
    return aggregate != kNotAggregated && aggregate >= first_aggregate && aggregate < first_aggregate + count;
  };
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

/// Q rows of this rank's aggregates as they are found: row d holds this rank's coarse dofs
/// [first[d], first[d] + count[d]) (numbered from 0) with values[d * k, d * k + count[d]).
/// Rows of dofs no aggregate of this rank holds stay empty: only
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
  check_tentative_input(comm, fine, a, b);
  const std::int64_t owned_dofs = a.owned_rows();
  std::optional<trace::Step> step(std::in_place, "send_members");
  const RoutedMembers routed = route_members(comm, agg, fine, a.row_begin(), b);
  const std::vector<AggregateMember>& received = routed.members;
  const std::int64_t first_aggregate = agg.partition.begin(comm.rank());
  const std::int64_t owned_aggregates = static_cast<std::int64_t>(agg.roots.size());
  step.emplace("group_members");
  const OwnedAggregates members = group_members(agg, fine, first_aggregate, a.row_begin(), received);
  const std::vector<std::int64_t>& begin = members.begin;

  step.emplace("coarse_numbering");
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(owned_aggregates));
  for (std::int64_t x = 0; x < owned_aggregates; ++x) sizes[x] = std::min<std::int64_t>(begin[x + 1] - begin[x], k);
  CoarseNumbering coarse = number_coarse_dofs(comm, sizes);
  const std::int64_t coarse_begin = coarse.rows.begin(comm.rank());
  DistTentative out;
  out.coarse_vectors = DenseMatrix(coarse.nodes.ptr.back(), k, Layout::row_major, 0.0);

  step.emplace("qr");
  // Aggregates are independent: ranges of them run in parallel. Q rows of this rank's dofs are
  // written in place (first coarse dof numbered locally); those of received dofs are kept by
  // received slot, then addressed to their owners in aggregate order (the serial loop's).
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
            slot[i] < owned_dofs ? b.data.data() + slot[i] * k : &routed.rows[(slot[i] - owned_dofs) * k];
        for (int j = 0; j < k; ++j) block[j * m + i] = row[j];
      }
      thin_qr(m, k, block, q, r, reflectors);
      const std::int64_t first = coarse.nodes.ptr[x];
      for (std::int64_t i = 0; i < c; ++i)
        for (int j = 0; j < k; ++j) out.coarse_vectors.at(first + i, j) = r[i * k + j];
      // Step 3: Q row i, padded to k values, is row slot[i] of P_tent.
      for (std::int64_t i = 0; i < m; ++i) {
        for (int j = 0; j < k; ++j) q_row[j] = j < c ? q[j * m + i] : 0.0;
        if (slot[i] < owned_dofs)
          rows_of.set(slot[i], first, c, k, q_row.data());
        else
          rows_of_received.set(slot[i] - owned_dofs, first, c, k, q_row.data());
      }
    }
  });
  QRowsByRank q_to(comm.size(), k);
  for (std::int64_t x = 0; x < owned_aggregates; ++x)
    for (std::int64_t t = begin[x]; t < begin[x + 1]; ++t) {
      if (members.slot[t] < owned_dofs) continue;
      const std::int64_t i = members.slot[t] - owned_dofs, dof = received[i].dof;
      q_to.add(a.row_partition.owner(dof), {dof, coarse_begin + rows_of_received.first[i], rows_of_received.count[i]},
               rows_of_received.values.data() + i * k);
    }
  step.emplace("return_q");
  const ReturnedQRows returned = return_q_rows(comm, q_to);

  step.emplace("rows");
  // The local block: rows of this rank's aggregates' dofs, over the owned coarse dofs.
  Csr<double> own;
  own.rows = owned_dofs;
  own.cols = coarse.nodes.ptr.back();
  own.row_ptr.resize(static_cast<std::size_t>(owned_dofs) + 1);
  host::offsets_from_counts(owned_dofs, [&](std::int64_t d) { return rows_of.count[d]; }, own.row_ptr.data());
  own.col_idx.resize(static_cast<std::size_t>(own.row_ptr[owned_dofs]));  // both written below
  own.values.resize(own.col_idx.size());
  host::for_ranges(owned_dofs, [&](std::int64_t begin_d, std::int64_t end_d) {
    for (std::int64_t d = begin_d; d < end_d; ++d)
      for (std::int64_t j = 0; j < rows_of.count[d]; ++j) {
        own.col_idx[own.row_ptr[d] + j] = static_cast<std::int32_t>(rows_of.first[d] + j);
        own.values[own.row_ptr[d] + j] = rows_of.values[d * k + j];
      }
  });
  step.emplace("assemble");
  out.p = tentative_blocks(comm, std::move(own), returned, k, a.row_partition, coarse.rows);
  out.coarse_nodes = std::move(coarse.nodes);
  return out;
}

}  // namespace tessera::amg
