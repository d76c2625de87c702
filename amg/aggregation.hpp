#pragma once
// Aggregation on the strong node graph, in three parallel-friendly phases (each one a
// function of a node's distance-2 neighbourhood, so a rank computes its nodes after a halo
// exchange of two rings, and the result does not depend on the partition):
//
//  1. Roots: a distance-2 maximal independent set (MIS-2) by the algorithm of Bell, Dalton and
//     Olson (SISC 2012). Every node carries the tuple (state, priority, id) with state
//     in-set > undecided > out and priority = splitmix64(id). Each round takes the maximum tuple
//     over the distance-2 neighbourhood (two rounds of neighbour max); an undecided node that
//     is its own maximum joins the set, one whose maximum is in the set drops out. Rounds
//     repeat until no node is undecided. Nodes without strong neighbours take no part.
//  2. Each root and its strong neighbours form an aggregate. Roots are at distance >= 3, so
//     the neighbourhoods are disjoint: no conflicts to resolve. Aggregates are numbered in
//     increasing root id.
//  3. A node left over is at distance 2 of a root (maximality), so it has a neighbour placed in
//     phase 2; it joins the aggregate of its strongest such neighbour (ties: lowest aggregate).
//
// Nodes with no strong neighbour (Dirichlet or clamped rows, a diagonal matrix) are left out
// of every aggregate: their prolongator rows are zero and the smoother handles them alone (as
// ML/MueLu do with Dirichlet rows), instead of keeping them as singletons on every level.
#include <cstdint>
#include <vector>

#include "amg/node_hashes.hpp"  // mis_priority
#include "local/formats/csr.hpp"

namespace tessera::amg {

inline constexpr std::int32_t kNotAggregated = -1;

struct Aggregates {
  std::int64_t count = 0;
  std::vector<std::int32_t> of_node;  // aggregate of each node, or kNotAggregated
  std::vector<std::int32_t> roots;    // root node of each aggregate (increasing)
};

/// Roots of the MIS-2 of `graph` (sorted); nodes without neighbours are excluded.
std::vector<std::int32_t> distance2_independent_set(const Csr<double>& graph);

/// The three phases above on a symmetric strength graph (values = strength).
Aggregates aggregate(const Csr<double>& graph);

}  // namespace tessera::amg
