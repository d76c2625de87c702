// Strength of connection and MIS-2 aggregation: hand-checked strength graphs (scalar and
// block), graphs of A scaled past the range of plain squares, the MIS-2 properties
// (independence at distance 3, maximality), aggregates covering every connected node exactly
// once, determinism, odd sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "amg/aggregation.hpp"
#include "amg/strength.hpp"
#include "local/gen/generators.hpp"
#include "local/reference/kernels.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg {
namespace {

/// Symmetric random graph with positive diagonal (diagonally dominant), some isolated nodes.
Csr<double> random_spd_like(std::int64_t n, double density, std::uint64_t seed) {
  const Csr<double> r = testing::random_csr({n, n, density, 0.1, 0.0, false, false}, seed);
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  for (std::int64_t i = 0; i < n; ++i) {
    rows.push_back(i), cols.push_back(i), vals.push_back(100.0);
    for (std::int64_t p = r.row_ptr[i]; p < r.row_ptr[i + 1]; ++p) {
      if (r.col_idx[p] == i) continue;
      rows.push_back(i), cols.push_back(r.col_idx[p]), vals.push_back(-std::abs(r.values[p]));
      rows.push_back(r.col_idx[p]), cols.push_back(i), vals.push_back(-std::abs(r.values[p]));
    }
  }
  return csr_from_triplets<double>(n, n, rows, cols, vals);
}

/// Distances up to 2 from node s (0 for s, -1 beyond).
std::vector<int> distances_up_to_2(const Csr<double>& g, std::int32_t s) {
  std::vector<int> d(static_cast<std::size_t>(g.rows), -1);
  d[s] = 0;
  for (std::int64_t p = g.row_ptr[s]; p < g.row_ptr[s + 1]; ++p) d[g.col_idx[p]] = 1;
  for (std::int64_t p = g.row_ptr[s]; p < g.row_ptr[s + 1]; ++p)
    for (std::int64_t q = g.row_ptr[g.col_idx[p]]; q < g.row_ptr[g.col_idx[p] + 1]; ++q)
      if (d[g.col_idx[q]] < 0) d[g.col_idx[q]] = 2;
  return d;
}

/// `a` with every value times `factor`.
Csr<double> times(Csr<double> a, double factor) {
  for (double& v : a.values) v *= factor;
  return a;
}

/// The bits of the values: "bit for bit" compares these (== would accept -0 for +0).
std::vector<std::uint64_t> value_bits(const Csr<double>& a) {
  std::vector<std::uint64_t> out(a.values.size());
  if (!out.empty()) std::memcpy(out.data(), a.values.data(), out.size() * sizeof(double));
  return out;
}

/// Same pattern; values bit for bit (`exact`) or to 1e-14 of themselves.
void expect_same_graph(const Csr<double>& got, const Csr<double>& want, bool exact) {
  ASSERT_EQ(got.row_ptr, want.row_ptr) << "row pattern differs";
  ASSERT_EQ(got.col_idx, want.col_idx) << "column pattern differs";
  if (exact) EXPECT_EQ(value_bits(got), value_bits(want));
  for (std::size_t p = 0; p < want.values.size() && !exact; ++p)
    ASSERT_NEAR(got.values[p], want.values[p], 1e-14 * want.values[p]) << "edge " << p;
}

void expect_valid_aggregation(const Csr<double>& g, const Aggregates& agg) {
  ASSERT_EQ(static_cast<std::int64_t>(agg.of_node.size()), g.rows);
  // MIS-2: roots pairwise at distance >= 3; every connected node within distance 2 of a root.
  std::vector<int> nearest(static_cast<std::size_t>(g.rows), 99);
  for (const std::int32_t r : agg.roots) {
    const std::vector<int> d = distances_up_to_2(g, r);
    for (const std::int32_t other : agg.roots) EXPECT_TRUE(other == r || d[other] < 0) << r << " " << other;
    for (std::int64_t i = 0; i < g.rows; ++i)
      if (d[i] >= 0) nearest[i] = std::min(nearest[i], d[i]);
  }
  std::vector<std::int64_t> size(static_cast<std::size_t>(agg.count), 0);
  for (std::int64_t i = 0; i < g.rows; ++i) {
    if (g.row_length(i) == 0) {
      EXPECT_EQ(agg.of_node[i], kNotAggregated) << "isolated node " << i;
      continue;
    }
    EXPECT_LE(nearest[i], 2) << "node " << i << " is not within distance 2 of a root";
    ASSERT_GE(agg.of_node[i], 0) << "node " << i << " not aggregated";
    ASSERT_LT(agg.of_node[i], agg.count);
    ++size[agg.of_node[i]];
    // Every member is adjacent to its root or to a node adjacent to it (aggregates connected).
    const std::vector<int> d = distances_up_to_2(g, agg.roots[agg.of_node[i]]);
    EXPECT_GE(d[i], 0) << "node " << i << " is far from its root";
  }
  for (std::int64_t a = 0; a < agg.count; ++a) {
    EXPECT_GE(size[a], 2) << "aggregate " << a;
    EXPECT_EQ(agg.of_node[agg.roots[a]], a);
  }
}

TEST(Strength, ScalarSymmetricScaling) {
  // a_01 / sqrt(a_00 a_11) = 1 / sqrt(4 * 1) = 0.5; a_12: 0.05 / sqrt(1 * 9) ~ 0.0167.
  const Csr<double> a = csr_from_triplets<double>(3, 3, {0, 0, 1, 1, 1, 2, 2}, {0, 1, 0, 1, 2, 1, 2},
                                                  {4, -1, -1, 1, 0.05, 0.05, 9});
  const Csr<double> s = strength_graph(a, uniform_nodes(3, 1), 0.02);
  EXPECT_EQ(s.row_ptr, (std::vector<std::int64_t>{0, 1, 2, 2}));
  EXPECT_EQ(s.col_idx, (std::vector<std::int32_t>{1, 0}));
  EXPECT_DOUBLE_EQ(s.values[0], 0.5);
  const Csr<double> all = strength_graph(a, uniform_nodes(3, 1), 0.0);
  EXPECT_EQ(all.nnz(), 4);
  EXPECT_NEAR(all.values[2], 0.05 / 3.0, 1e-15);
}

TEST(Strength, BlockFrobeniusNormsAndSymmetrised) {
  // Two 2-dof nodes. A_00 = diag(3, 4) (norm 5), A_11 = diag(6, 8) (norm 10), A_01 = [[1, 1],
  // [1, 1]] (norm 2), A_10 = 0: the edge exists in one direction and is kept in both.
  const Csr<double> a = csr_from_triplets<double>(4, 4, {0, 1, 2, 3, 0, 0, 1, 1}, {0, 1, 2, 3, 2, 3, 2, 3},
                                                  {3, 4, 6, 8, 1, 1, 1, 1});
  const Csr<double> s = strength_graph(a, uniform_nodes(4, 2), 0.1);
  ASSERT_EQ(s.rows, 2);
  EXPECT_EQ(s.col_idx, (std::vector<std::int32_t>{1, 0}));
  EXPECT_NEAR(s.values[0], 2.0 / std::sqrt(50.0), 1e-15);
  EXPECT_NEAR(s.values[1], 2.0 / std::sqrt(50.0), 1e-15);
  EXPECT_EQ(strength_graph(a, uniform_nodes(4, 2), 0.3).nnz(), 0);
}

// The rule sums squares of s*a, s a power of two from A's largest magnitude (amg/strength_rule.hpp):
// plain squares overflow past 1e154 and vanish below 1e-154, and every edge was lost. A * 2^k is
// exact, so its graph must be A's bit for bit; A * 1e200 rounds each entry once: A's edges, values
// to rounding. Elasticity's entries span 1.7e-18 (round-off) to 1.9: times 2^-900 still normal.
TEST(Strength, GraphIgnoresTheScaleOfA) {
  const std::vector<std::pair<std::string, int>> problems{{"poisson3d:6", 1}, {"elasticity3d:3", 3}};
  for (const auto& [spec, block_size] : problems) {
    const Csr<double> a = gen::generate(gen::parse_spec(spec));
    const NodeLayout nodes = uniform_nodes(a.rows, block_size);
    for (const double theta : {0.02, 0.0}) {
      SCOPED_TRACE(spec + ", theta " + std::to_string(theta));
      const Csr<double> want = strength_graph(a, nodes, theta);
      ASSERT_GT(want.nnz(), a.rows / block_size) << "too few edges to test";
      for (const int k : {-900, -600, 600, 900}) {
        SCOPED_TRACE("times 2^" + std::to_string(k));
        const Csr<double> scaled = times(a, std::ldexp(1.0, k));
        for (std::size_t p = 0; p < a.values.size(); ++p)  // exact: no entry leaves the normal range
          ASSERT_TRUE(a.values[p] == 0 || std::isnormal(scaled.values[p])) << a.values[p] << " times 2^" << k;
        expect_same_graph(strength_graph(scaled, nodes, theta), want, true);
      }
      for (const double factor : {1e200, 1e-200}) {
        SCOPED_TRACE(factor > 1 ? "times 1e200" : "times 1e-200");
        expect_same_graph(strength_graph(times(a, factor), nodes, theta), want, false);
      }
    }
  }
}

TEST(Aggregation, RandomGraphsSatisfyMis2AndCoverEveryNodeOnce) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int trial = 0;
  for (std::int64_t n : {0, 1, 2, 7, 63, 200, 501}) {
    for (double density : {0.0, 0.01, 0.05, 0.3}) {
      const Csr<double> a = random_spd_like(n, density, seed + trial++);
      const Csr<double> g = strength_graph(a, uniform_nodes(n, 1), 0.0);
      const Aggregates agg = aggregate(g);
      expect_valid_aggregation(g, agg);
      const Aggregates again = aggregate(g);
      EXPECT_EQ(again.of_node, agg.of_node) << "not deterministic, n " << n;
      EXPECT_EQ(again.roots, agg.roots);
    }
  }
}

TEST(Aggregation, PoissonAggregatesAreCubeLike) {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:13"));
  const Csr<double> g = strength_graph(a, uniform_nodes(a.rows, 1), 0.02);
  const Aggregates agg = aggregate(g);
  expect_valid_aggregation(g, agg);
  // Interior roots take their 6 neighbours; every aggregate has 2..(7 + leftovers) nodes, and the
  // count is near rows / 7-ish, far from rows (no coarsening) and from 1 (no hierarchy).
  EXPECT_GT(agg.count, a.rows / 20);
  EXPECT_LT(agg.count, a.rows / 4);
}

TEST(Aggregation, DiagonalMatrixHasNoAggregates) {
  Csr<double> d = Csr<double>::empty(5, 5);
  for (std::int32_t i = 0; i < 5; ++i) d.col_idx.push_back(i), d.values.push_back(2.0), d.row_ptr[i + 1] = i + 1;
  const Aggregates agg = aggregate(strength_graph(d, uniform_nodes(5, 1), 0.02));
  EXPECT_EQ(agg.count, 0);
  EXPECT_EQ(agg.of_node, std::vector<std::int32_t>(5, kNotAggregated));
}

TEST(Aggregation, ElasticityNodeGraphLeavesClampedNodesOut) {
  const gen::ProblemSpec spec = gen::parse_spec("elasticity3d:5");
  const Csr<double> a = gen::generate(spec);
  const Csr<double> g = strength_graph(a, uniform_nodes(a.rows, 3), 0.02);
  ASSERT_EQ(g.rows, 125);
  const Aggregates agg = aggregate(g);
  expect_valid_aggregation(g, agg);
  for (std::int64_t node = 0; node < g.rows; ++node) {  // x = 0 face (x fastest): clamped, no couplings
    if (node % 5 == 0) EXPECT_EQ(agg.of_node[node], kNotAggregated) << node;
    else EXPECT_NE(agg.of_node[node], kNotAggregated) << node;
  }
}

}  // namespace
}  // namespace tessera::amg
