#pragma once
// The filtered operator of prolongator smoothing (amg/filtered_operator.hpp) on a distributed
// level: A_F keeps the entries of A inside a node and between strongly connected nodes, and adds
// every other entry of a row to the row's diagonal (A_F's row sums are A's). The same rule on the
// rank's rows:
//   - a node never spans ranks, so an owned row's node and its diagonal are the rank's own; the
//     node of a ghost column arrives in one halo exchange over A's plan (as in dist_strength);
//   - the strong neighbours of an owned node are its row of the distributed strong node graph
//     (dist_strength_graph: owned nodes in the local block, other ranks' in the non-local one);
//   - A_F keeps A's partitions, and only the ghosts its kept entries use (dist::assemble_blocks
//     drops the others and builds the halo plan): the filter cuts what A P_tent fetches too.
// Each diagonal of A_F is summed in the row's global column order, the serial order, so A_F
// equals the serial filtered operator of the gathered A bit for bit.
// The pattern of A_F and the map from A's entries into it are fixed at setup; a re-setup (new
// values, same pattern) refreshes the values through the map (refresh_dist_filtered_values).
#include <cstdint>
#include <optional>
#include <vector>

#include "amg/dist/dist_strength.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "local/core/host_array.hpp"

namespace tessera::amg {

struct DistFilteredOperator {
  dist::DistMatrix a;  // A_F (values as of the last refresh_dist_filtered_values)
  // A's entries numbered [local block | non-local block]; entry p is added into entry target[p]
  // of A_F's values numbered the same way: itself where kept, its row's diagonal where dropped.
  HostArray<std::int64_t> target;
};

/// Collective. A_F's pattern, map and halo plan (values zero) for the level's `a`, its `nodes`
/// and `graph`, the level's dist_strength_graph. nullopt on every rank when no rank drops an
/// entry (A_F = A). Every owned row of `a` must hold its diagonal (a setup's operators do).
std::optional<DistFilteredOperator> dist_filtered_operator(const dist::Communicator& comm, const dist::DistMatrix& a,
                                                           const DistNodes& nodes, const dist::DistMatrix& graph);

/// Not collective. A_F's values from `a` (the pattern dist_filtered_operator saw): each row's
/// entries added into their targets in global column order, from zero.
void refresh_dist_filtered_values(const dist::DistMatrix& a, DistFilteredOperator& f);

}  // namespace tessera::amg
