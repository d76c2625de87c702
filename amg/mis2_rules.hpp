#pragma once
// The per-node rules of the aggregation (aggregation.hpp), defined once for the serial host
// amg::aggregate, the distributed host dist_aggregate and the two device versions
// (cuda/device_aggregation.cu, cuda/dist_device_graph_phases.cu), which differ only in where a
// neighbour's value comes from. So all four make the same aggregates:
//   MIS-2 on packed 64-bit keys: 0 = out, UINT64_MAX = in the set, otherwise the priority
//   mis_priority(global id). That is the tuple (state, priority, id) of aggregation.hpp in one
//   word with the same decisions:
//   - mis_priority is a bijection of uint64 (splitmix64's finaliser), so distinct nodes have
//     distinct priorities and the id tie-break never fires: priority alone orders the
//     undecided nodes, and the maximum key names the maximum tuple's node;
//   - an undecided node's two-ring maximum is at least its own key, so out-of-set nodes never
//     decide anything: they become 0, below every undecided key;
//   - an in-set node outranks every undecided one and only its state is read: it becomes the
//     largest key. The priorities 0 and 2^64-1 belong to ids near 4e18 and 7e18 (the host
//     checks that a connected node's initial key is undecided);
//   leftovers join the strongest placed neighbour, ties (to 2^-32 relative) to the lowest aggregate.
#include <cmath>
#include <cstdint>

#include "amg/node_hashes.hpp"
#include "local/core/host_device.hpp"

namespace tessera::amg::mis2 {

using Key = std::uint64_t;
inline constexpr Key kOutKey = 0;
inline constexpr Key kInSetKey = ~Key{0};
inline constexpr int kMaxRounds = 1000;  // MIS-2 needs a few tens of rounds on meshes; far beyond is a bug

TESSERA_HD Key initial_key(bool isolated, std::uint64_t global_id) {
  return isolated ? kOutKey : mis_priority(global_id);
}

/// The key of an undecided node after a round whose two-ring maximum is `reach`: it joins when
/// it is the maximum itself, drops out when a node of the set is within distance 2, else waits.
TESSERA_HD Key decided_key(Key own, Key reach) {
  return reach == own ? kInSetKey : reach == kInSetKey ? kOutKey : own;
}

/// Whether a key is still undecided (neither out nor in the set).
TESSERA_HD bool undecided(Key key) { return key != kOutKey && key != kInSetKey; }

/// `strength` rounded down to 32 significant bits. On structured grids a leftover often has two
/// placed neighbours whose edges are equally strong in exact arithmetic, and the Galerkin
/// products that made A sum in another order on each path (serial, distributed over any
/// partition, device): compared as they are, the last bit chose the home, and a hierarchy
/// depended on the partition (lap2D_5pt_n100's level 1 on one 4-rank partition in 20). Compared
/// at 2^-32 relative, such edges tie and the lowest aggregate takes the node on every path; the
/// rounding is monotone, so a clearly stronger edge still wins.
TESSERA_HD double comparable_strength(double strength) {
  int exponent = 0;
  const double mantissa = frexp(strength, &exponent);  // in [0.5, 1): 32 bits of it kept
  return ldexp(floor(ldexp(mantissa, 32)), exponent - 32);
}

/// Whether aggregate `a` joined by an edge of `strength` beats the best so far.
template <class Aggregate>
TESSERA_HD bool better_leftover_home(double strength, Aggregate a, double best_strength, Aggregate best) {
  const double s = comparable_strength(strength), best_s = comparable_strength(best_strength);
  return s > best_s || (s == best_s && a < best);
}

}  // namespace tessera::amg::mis2
