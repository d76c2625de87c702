#include "amg/dist/dist_aggregation.hpp"

#include <algorithm>

#include "amg/aggregation.hpp"
#include "amg/dist/dist_exchange.hpp"
#include "amg/mis2_rules.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera::amg {
namespace {

// The MIS-2 tuple (state, priority, id) as one 64-bit key, as every aggregation here and on
// the GPUs keeps it: amg/mis2_rules.hpp.
using mis2::Key;

std::int64_t degree(const dist::DistMatrix& g, std::int64_t i) { return g.local.row_length(i) + g.nonlocal.row_length(i); }

/// Calls f(value of neighbour) for every neighbour of owned node i: owned ones from `owned`,
/// others from `ghosts` (halo order).
template <class T, class F>
void for_neighbours(const dist::DistMatrix& g, std::int64_t i, const std::vector<T>& owned, const std::vector<T>& ghosts,
                    F&& f) {
  for (std::int64_t p = g.local.row_ptr[i]; p < g.local.row_ptr[i + 1]; ++p) f(owned[g.local.col_idx[p]], g.local.values[p]);
  for (std::int64_t p = g.nonlocal.row_ptr[i]; p < g.nonlocal.row_ptr[i + 1]; ++p)
    f(ghosts[g.nonlocal.col_idx[p]], g.nonlocal.values[p]);
}

/// Sum over ranges of [0, n) of count(begin, end), each range on a thread of the rank: the
/// node loops below each write only their own nodes, and count what they decided.
template <class Count>
std::int64_t sum_over_ranges(std::int64_t n, Count&& count) {
  const host::RangeSplit ranges(n);
  std::vector<std::int64_t> counted(static_cast<std::size_t>(ranges.count()), 0);
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) { counted[range] = count(begin, end); });
  std::int64_t total = 0;
  for (std::int64_t c : counted) total += c;
  return total;
}

/// out[i] = max(in[i], in[neighbours of i]) for every owned node, after one exchange of the
/// ghosts' values.
void neighbour_max(const dist::Communicator& comm, const dist::DistMatrix& g, const std::vector<Key>& in,
                   std::vector<Key>& out) {
  const std::vector<Key> ghosts = halo_values(comm, g, in);
  host::for_ranges(g.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      Key m = in[i];
      for_neighbours(g, i, in, ghosts, [&](Key k, double) { m = std::max(m, k); });
      out[i] = m;
    }
  });
}

/// The MIS-2 roots (global ids, increasing) and the number of rounds. Each round takes the
/// two-ring maximum of the keys; its second step runs only for the undecided nodes, whose keys
/// it decides.
std::vector<std::int64_t> distributed_mis2(const dist::Communicator& comm, const dist::DistMatrix& g, int& rounds) {
  const std::int64_t n = g.owned_rows(), first = g.row_begin();
  std::vector<Key> key(static_cast<std::size_t>(n)), reach1(key.size());
  std::int64_t undecided = sum_over_ranges(n, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t connected = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const bool isolated = degree(g, i) == 0;
      const auto id = static_cast<std::uint64_t>(first + i);
      key[i] = mis2::initial_key(isolated, id);
      TESSERA_ASSERT(isolated || mis2::undecided(key[i]), "MIS-2 priority of node ", id, " collides with a state key");
      connected += !isolated;
    }
    return connected;
  });
  rounds = 0;
  while (comm.allreduce(undecided, dist::ReduceOp::sum) > 0) {
    ++rounds;
    neighbour_max(comm, g, key, reach1);
    const std::vector<Key> ghost_reach1 = halo_values(comm, g, reach1);
    const std::int64_t decided = sum_over_ranges(n, [&](std::int64_t begin, std::int64_t end) {
      std::int64_t decided_here = 0;
      for (std::int64_t i = begin; i < end; ++i) {
        if (!mis2::undecided(key[i])) continue;
        Key reach = reach1[i];
        for_neighbours(g, i, reach1, ghost_reach1, [&](Key k, double) { reach = std::max(reach, k); });
        key[i] = mis2::decided_key(key[i], reach);
        decided_here += !mis2::undecided(key[i]);
      }
      return decided_here;
    });
    undecided -= decided;
    // The global undecided node of largest priority always joins: every round makes progress.
    TESSERA_ASSERT(comm.allreduce(decided, dist::ReduceOp::sum) > 0, "distributed MIS-2 made no progress");
  }
  std::vector<std::int64_t> roots;
  for (std::int64_t i = 0; i < n; ++i)
    if (key[i] == mis2::kInSetKey) roots.push_back(first + i);
  return roots;
}

}  // namespace

DistAggregates dist_aggregate(const dist::Communicator& comm, const dist::DistMatrix& g) {
  TESSERA_ASSERT(g.row_partition == g.col_partition, "strength graph must be square");
  DistAggregates agg;
  agg.roots = distributed_mis2(comm, g, agg.mis_rounds);
  agg.partition = dist::RowPartition::from_counts(comm, static_cast<std::int64_t>(agg.roots.size()));
  agg.count = agg.partition.global_rows();
  const std::int64_t n = g.owned_rows(), first = g.row_begin();
  const std::int64_t first_aggregate = agg.partition.begin(comm.rank());

  // Phase 2: each root and its neighbours (disjoint neighbourhoods: roots are >= 3 apart).
  std::vector<std::int64_t> root_of(static_cast<std::size_t>(n), kNotAggregated);
  for (std::size_t a = 0; a < agg.roots.size(); ++a) root_of[agg.roots[a] - first] = first_aggregate + std::int64_t(a);
  const std::vector<std::int64_t> ghost_roots = halo_values(comm, g, root_of);
  std::vector<std::int64_t> placed = root_of;
  host::for_ranges(n, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      if (root_of[i] != kNotAggregated) continue;
      for_neighbours(g, i, root_of, ghost_roots, [&](std::int64_t a, double) {
        if (a == kNotAggregated) return;
        TESSERA_ASSERT(placed[i] == kNotAggregated, "MIS-2 roots of aggregates ", placed[i], " and ", a,
                       " share neighbour ", first + i);
        placed[i] = a;
      });
    }
  });
  // Phase 3: a leftover joins its strongest placed neighbour (ties: lowest aggregate).
  const std::vector<std::int64_t> ghost_placed = halo_values(comm, g, placed);
  agg.of_node = placed;
  host::for_ranges(n, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      if (placed[i] != kNotAggregated || degree(g, i) == 0) continue;
      double best_strength = -1.0;
      std::int64_t best = kNotAggregated;
      for_neighbours(g, i, placed, ghost_placed, [&](std::int64_t a, double strength) {
        if (a == kNotAggregated) return;
        if (mis2::better_leftover_home(strength, a, best_strength, best)) best_strength = strength, best = a;
      });
      TESSERA_ASSERT(best != kNotAggregated, "node ", first + i, " is not within distance 2 of an MIS-2 root");
      agg.of_node[i] = best;
    }
  });
  return agg;
}

}  // namespace tessera::amg
