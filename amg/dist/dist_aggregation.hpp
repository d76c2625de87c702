#pragma once
// Distributed aggregation on the strong node graph (a DistMatrix over the node partition),
// reproducing amg/aggregation.hpp exactly on any partition: every decision is a function of a
// node's distance-2 neighbourhood and of global node ids, and the per-node rules (the tuple
// order as a 64-bit key, the priority hash of the GLOBAL id, the tie-breaks) are the serial
// ones, from amg/mis2_rules.hpp.
//
// Messages, all over the graph's halo plan (ghosts = the one-ring neighbours, symmetric graph):
//   MIS-2, per round: 2 halo exchanges of the (state, priority, id) tuple's key -- the keys,
//          then the one-ring maxima, which makes the second maximum a two-ring maximum -- and
//          one allreduce of the undecided count (stop test). Rounds: as many as the serial code.
//   phase 2 (root + neighbours): 1 allgather of root counts (aggregate numbering by rank,
//          then by root id = the serial numbering by root id, ranks owning contiguous nodes),
//          1 halo exchange of the root's aggregate id;
//   phase 3 (leftovers join the strongest placed neighbour): 1 halo exchange of placements.
// An aggregate belongs to the rank of its root; its members may be owned by other ranks.
// Between the messages, the node loops run by ranges on the rank's threads
// (local/core/host_ranges.hpp): a node's decision reads the previous step's values and writes
// only its own entry, so the result is the same on any thread count.
#include <cstdint>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"

namespace tessera::amg {

struct DistAggregates {
  std::int64_t count = 0;              // global number of aggregates
  dist::RowPartition partition;        // aggregates per rank (rank of the root)
  std::vector<std::int64_t> of_node;   // global aggregate of each owned node, or -1
  std::vector<std::int64_t> roots;     // global node id of each owned aggregate's root (increasing)
  int mis_rounds = 0;
};

/// Collective.
DistAggregates dist_aggregate(const dist::Communicator& comm, const dist::DistMatrix& graph);

}  // namespace tessera::amg
