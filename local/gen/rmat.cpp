// R-MAT power-law graphs (Chakrabarti, Zhan, Faloutsos 2004) with the Graph500 quadrant
// probabilities (a, b, c, d) = (0.57, 0.19, 0.19, 0.05): 2^S vertices, E * 2^S directed edges.
//
// Edge e is a pure function of (seed, e) through a counter-based stream: S quadrant choices,
// then a value uniform in [0.5, 1.5). Vertex labels are then relabelled by a seeded bijection
// of [0, 2^S) (as Graph500 does), so the hubs are spread over the row range instead of all
// sitting in the first rows, i.e. on one rank. Duplicate edges are summed, in edge order, so
// a row's values do not depend on which range produced it. Self-loops are kept (they are
// ordinary diagonal entries here; nothing needs a loop-free graph).
//
// Cost: an edge's row is known only after drawing it, so generate_rows draws all E * 2^S
// edges whatever the range (O(E 2^S S) hashes per call) and keeps those in its rows. Across
// P ranks that is P times the serial work: acceptable for test graphs, not for huge S.
#include <algorithm>
#include <numeric>

#include "local/gen/counter_rng.hpp"
#include "local/gen/kinds.hpp"

namespace tessera::gen::detail {
namespace {

constexpr double kA = 0.57, kB = 0.19, kC = 0.19;

struct Edge {
  std::int64_t row, col;
  double value;
};

/// A seeded bijection of the S-bit labels: odd multiply, add and xor-shift are each invertible
/// modulo 2^S.
class Relabel {
 public:
  Relabel(int scale, std::uint64_t seed)
      : mask_((1ull << scale) - 1),  // scale <= 62 (parse_spec)
        shift_(scale / 2 + 1),
        mul_(mix64(seed ^ 0x5851f42d4c957f2dull) | 1),
        add_(mix64(seed + kGolden)) {}

  std::int64_t operator()(std::uint64_t v) const {
    for (int round = 0; round < 2; ++round) {
      v = (v * mul_ + add_) & mask_;
      v ^= v >> shift_;
    }
    return static_cast<std::int64_t>(v);
  }

 private:
  std::uint64_t mask_;
  int shift_;
  std::uint64_t mul_, add_;
};

Edge draw_edge(std::uint64_t seed, std::uint64_t index, int scale, const Relabel& relabel) {
  CounterStream rng(seed, index);
  std::uint64_t row = 0, col = 0;
  for (int level = 0; level < scale; ++level) {
    const double u = rng.uniform();
    const unsigned down = u >= kA + kB, right = (u >= kA && u < kA + kB) || u >= kA + kB + kC;
    row = 2 * row + down;
    col = 2 * col + right;
  }
  return {relabel(row), relabel(col), 0.5 + rng.uniform()};
}

/// Stable counting sort by row, then a stable per-row sort by column, then duplicates summed:
/// the summation order is the edge order.
RowBlock build_rows(std::vector<Edge>& edges, std::int64_t global_rows, std::int64_t begin, std::int64_t end) {
  RowBlock b = start_block(global_rows, begin, end, 0);
  std::vector<std::int64_t> start(static_cast<std::size_t>(end - begin) + 1, 0);
  for (const Edge& e : edges) ++start[e.row - begin + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<Edge> by_row(edges.size());
  std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
  for (const Edge& e : edges) by_row[fill[e.row - begin]++] = e;
  b.col.reserve(edges.size());
  b.values.reserve(edges.size());
  for (std::int64_t r = 0; r < end - begin; ++r) {
    const auto first = by_row.begin() + start[r], last = by_row.begin() + start[r + 1];
    std::stable_sort(first, last, [](const Edge& x, const Edge& y) { return x.col < y.col; });
    const std::size_t row_start = b.col.size();
    for (auto e = first; e != last; ++e) {
      if (b.col.size() > row_start && b.col.back() == e->col) {
        b.values.back() += e->value;
      } else {
        b.col.push_back(e->col);
        b.values.push_back(e->value);
      }
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
  }
  return b;
}

}  // namespace

RowBlock rmat_rows(int scale, std::int64_t edge_factor, std::uint64_t seed, std::int64_t begin, std::int64_t end) {
  const std::int64_t vertices = std::int64_t{1} << scale;
  const std::uint64_t num_edges = static_cast<std::uint64_t>(edge_factor) << scale;
  const Relabel relabel(scale, seed);
  std::vector<Edge> kept;
  if (begin < end) {
    for (std::uint64_t i = 0; i < num_edges; ++i) {
      const Edge e = draw_edge(seed, i, scale, relabel);
      if (begin <= e.row && e.row < end) kept.push_back(e);
    }
  }
  return build_rows(kept, vertices, begin, end);
}

}  // namespace tessera::gen::detail
