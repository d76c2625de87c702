#include "amg/aggregation.hpp"

#include <tuple>

#include "local/core/error.hpp"

namespace tessera::amg {
namespace {

enum State : std::uint8_t { kOut = 0, kUndecided = 1, kInSet = 2 };

struct Tuple {
  std::uint8_t state;
  std::uint64_t priority;
  std::int32_t id;
  bool operator<(const Tuple& o) const {
    return std::tie(state, priority, id) < std::tie(o.state, o.priority, o.id);
  }
};

/// One Jacobi-style step: each node takes the largest tuple among itself and its neighbours.
std::vector<Tuple> neighbour_max(const Csr<double>& graph, const std::vector<Tuple>& in) {
  std::vector<Tuple> out = in;
  for (std::int64_t i = 0; i < graph.rows; ++i)
    for (std::int64_t p = graph.row_ptr[i]; p < graph.row_ptr[i + 1]; ++p)
      if (out[i] < in[graph.col_idx[p]]) out[i] = in[graph.col_idx[p]];
  return out;
}

}  // namespace

std::uint64_t mis_priority(std::uint64_t id) {
  std::uint64_t z = id + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<std::int32_t> distance2_independent_set(const Csr<double>& graph) {
  const std::int64_t n = graph.rows;
  std::vector<Tuple> tuple(static_cast<std::size_t>(n));
  std::int64_t undecided = 0;
  for (std::int32_t i = 0; i < n; ++i) {
    const bool isolated = graph.row_length(i) == 0;
    tuple[i] = {isolated ? kOut : kUndecided, mis_priority(static_cast<std::uint64_t>(i)), i};
    undecided += !isolated;
  }
  while (undecided > 0) {
    const std::vector<Tuple> reach = neighbour_max(graph, neighbour_max(graph, tuple));
    std::int64_t decided = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      if (tuple[i].state != kUndecided) continue;
      if (reach[i].id == i) {
        tuple[i].state = kInSet, ++decided;
      } else if (reach[i].state == kInSet) {
        tuple[i].state = kOut, ++decided;
      }
    }
    // The undecided node of largest priority always joins, so every round makes progress.
    TESSERA_ASSERT(decided > 0, "MIS-2 made no progress with ", undecided, " undecided nodes");
    undecided -= decided;
  }
  std::vector<std::int32_t> roots;
  for (std::int32_t i = 0; i < n; ++i)
    if (tuple[i].state == kInSet) roots.push_back(i);
  return roots;
}

Aggregates aggregate(const Csr<double>& graph) {
  TESSERA_ASSERT(graph.rows == graph.cols, "strength graph must be square");
  Aggregates agg;
  agg.roots = distance2_independent_set(graph);
  agg.count = static_cast<std::int64_t>(agg.roots.size());
  agg.of_node.assign(static_cast<std::size_t>(graph.rows), kNotAggregated);

  for (std::int32_t a = 0; a < agg.count; ++a) {  // phase 2: root + neighbours (disjoint)
    const std::int32_t root = agg.roots[a];
    agg.of_node[root] = a;
    for (std::int64_t p = graph.row_ptr[root]; p < graph.row_ptr[root + 1]; ++p) {
      TESSERA_ASSERT(agg.of_node[graph.col_idx[p]] == kNotAggregated, "MIS-2 roots ", root, " and another share neighbour ",
                     graph.col_idx[p]);
      agg.of_node[graph.col_idx[p]] = a;
    }
  }
  const std::vector<std::int32_t> placed = agg.of_node;  // phase 3 reads only phase-2 results
  for (std::int64_t i = 0; i < graph.rows; ++i) {
    if (placed[i] != kNotAggregated || graph.row_length(i) == 0) continue;
    double best_strength = -1.0;
    std::int32_t best = kNotAggregated;
    for (std::int64_t p = graph.row_ptr[i]; p < graph.row_ptr[i + 1]; ++p) {
      const std::int32_t a = placed[graph.col_idx[p]];
      if (a == kNotAggregated) continue;
      if (graph.values[p] > best_strength || (graph.values[p] == best_strength && a < best)) {
        best_strength = graph.values[p];
        best = a;
      }
    }
    TESSERA_ASSERT(best != kNotAggregated, "node ", i, " is not within distance 2 of an MIS-2 root");
    agg.of_node[i] = best;
  }
  return agg;
}

}  // namespace tessera::amg
