#include "amg/aggregation.hpp"

#include <algorithm>

#include "amg/mis2_rules.hpp"
#include "local/core/error.hpp"

namespace tessera::amg {
namespace {

// The MIS-2 tuple (state, priority, id) as one 64-bit key: amg/mis2_rules.hpp.
using mis2::Key;
using mis2::kInSetKey;

/// out[j] = max(in[j], in[neighbours of j]) for every node (one Jacobi-style step).
void neighbour_max(const Csr<double>& graph, const std::vector<Key>& in, std::vector<Key>& out) {
  const std::int64_t* row_ptr = graph.row_ptr.data();
  const std::int32_t* col = graph.col_idx.data();
  for (std::int64_t j = 0; j < graph.rows; ++j) {
    Key m = in[j];
    for (std::int64_t p = row_ptr[j]; p < row_ptr[j + 1]; ++p) m = std::max(m, in[col[p]]);
    out[j] = m;
  }
}

}  // namespace

std::vector<std::int32_t> distance2_independent_set(const Csr<double>& graph) {
  const std::int64_t n = graph.rows;
  std::vector<Key> key(static_cast<std::size_t>(n)), reach1(static_cast<std::size_t>(n));
  std::vector<std::int32_t> undecided;  // the undecided nodes, increasing; shrinks every round
  undecided.reserve(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) {
    const bool isolated = graph.row_length(i) == 0;
    key[i] = mis2::initial_key(isolated, static_cast<std::uint64_t>(i));
    TESSERA_ASSERT(isolated || mis2::undecided(key[i]), "MIS-2 priority of node ", i, " collides with a state key");
    if (!isolated) undecided.push_back(i);
  }
  const std::int64_t* row_ptr = graph.row_ptr.data();
  const std::int32_t* col = graph.col_idx.data();
  while (!undecided.empty()) {
    neighbour_max(graph, key, reach1);
    // Second step only where it is read; a node's own key changes after every reach1 read it.
    std::size_t kept = 0;
    for (const std::int32_t i : undecided) {
      Key reach = reach1[i];
      for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) reach = std::max(reach, reach1[col[p]]);
      key[i] = mis2::decided_key(key[i], reach);
      if (mis2::undecided(key[i])) undecided[kept++] = i;
    }
    // The undecided node of largest priority always joins, so every round makes progress.
    TESSERA_ASSERT(kept < undecided.size(), "MIS-2 made no progress with ", undecided.size(), " undecided nodes");
    undecided.resize(kept);
  }
  std::vector<std::int32_t> roots;
  for (std::int32_t i = 0; i < n; ++i)
    if (key[i] == kInSetKey) roots.push_back(i);
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
      if (mis2::better_leftover_home(graph.values[p], a, best_strength, best)) {
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
