#pragma once
// The per-node rules of the device aggregation, shared by the one-GPU (device_aggregation.cu)
// and the distributed (dist_device_graph_phases.cu) versions, which differ only in where a
// neighbour's value comes from. Both reproduce the host amg::aggregate / dist_aggregate:
//   MIS-2 on packed 64-bit keys: 0 = out, UINT64_MAX = in the set, otherwise the priority
//   mis_priority(global id), a bijection (distinct nodes, distinct keys; the two reserved values
//   are the priorities of ids near 4e18 and 7e18), so the key order is the host's
//   (state, priority, id) tuple order;
//   leftovers join the strongest placed neighbour, ties to the lowest aggregate.
#include <cstdint>

#include "amg/node_hashes.hpp"

namespace tessera::amg::gpu::mis2 {

using Key = std::uint64_t;
constexpr Key kOutKey = 0;
constexpr Key kInSetKey = ~Key{0};
constexpr int kMaxRounds = 1000;  // MIS-2 needs a few tens of rounds on meshes; far beyond is a bug

__device__ inline Key initial_key(bool isolated, std::uint64_t global_id) {
  return isolated ? kOutKey : mis_priority(global_id);
}

/// The key of an undecided node after a round whose two-ring maximum is `reach`: it joins when
/// it is the maximum itself, drops out when a node of the set is within distance 2, else waits.
__device__ inline Key decided_key(Key own, Key reach) {
  return reach == own ? kInSetKey : reach == kInSetKey ? kOutKey : own;
}

/// Whether aggregate `a` joined by an edge of `strength` beats the best so far.
template <class Aggregate>
__device__ inline bool better_leftover_home(double strength, Aggregate a, double best_strength, Aggregate best) {
  return strength > best_strength || (strength == best_strength && a < best);
}

}  // namespace tessera::amg::gpu::mis2
