// cross_rank_strength (the strong edges between a rank's nodes and other ranks' nodes, both
// directions merged), host code, 1-4 ranks. On every case of graph_phase_cases.hpp it must be
// exactly the off-rank part of dist_strength_graph()'s owned rows (pattern, bitwise values),
// and that graph's owned x owned block plus it must be each whole row. Both are also checked
// against the serial reference: strength_graph() of the gathered operator on rank 0, whose
// entries between nodes of different owners are the gathered cross edges. Each case runs again
// on 3 threads with ranges of 3 nodes, which must give the same edges bit for bit.
#include <algorithm>

#include "amg/dist/dist_strength.hpp"
#include "graph_phase_cases.hpp"
#include "support/host_threads_scope.hpp"

namespace tessera::amg {
namespace {

using testing::GraphCase;
using testing::GraphRow;

/// Owned node n's cross edges: its listed row, or none.
GraphRow cross_row(const CrossRankEdges& cross, std::int64_t n) {
  const auto listed = std::lower_bound(cross.rows.begin(), cross.rows.end(), n);
  if (listed == cross.rows.end() || *listed != n) return {};
  const std::size_t i = listed - cross.rows.begin();
  const auto b = cross.ptr[i], e = cross.ptr[i + 1];
  return {{cross.node.begin() + b, cross.node.begin() + e}, {cross.strength.begin() + b, cross.strength.begin() + e}};
}

/// Row n of the graph's owned x owned block, in global node ids.
GraphRow owned_part(const dist::DistMatrix& graph, std::int64_t first_node, std::int64_t n) {
  GraphRow out;
  for (std::int64_t p = graph.local.row_ptr[n]; p < graph.local.row_ptr[n + 1]; ++p) {
    out.node.push_back(first_node + graph.local.col_idx[p]);
    out.strength.push_back(graph.local.values[p]);
  }
  return out;
}

/// Entries of `row` whose node `keep` accepts.
template <class Keep>
GraphRow filtered(const GraphRow& row, Keep&& keep) {
  GraphRow out;
  for (std::size_t k = 0; k < row.node.size(); ++k)
    if (keep(row.node[k])) {
      out.node.push_back(row.node[k]);
      out.strength.push_back(row.strength[k]);
    }
  return out;
}

/// Both parts merged by node (they are disjoint: one inside the owned range, one outside).
GraphRow merged(const GraphRow& x, const GraphRow& y) {
  GraphRow out;
  std::size_t i = 0, j = 0;
  while (i < x.node.size() || j < y.node.size()) {
    const bool take_x = j == y.node.size() || (i < x.node.size() && x.node[i] < y.node[j]);
    const GraphRow& from = take_x ? x : y;
    std::size_t& k = take_x ? i : j;
    out.node.push_back(from.node[k]);
    out.strength.push_back(from.strength[k++]);
  }
  return out;
}

/// Listed rows are owned nodes, increasing, each with at least one edge.
void expect_well_formed(const CrossRankEdges& cross, const DistNodes& nodes) {
  ASSERT_EQ(cross.ptr.size(), cross.rows.size() + 1);
  ASSERT_EQ(cross.ptr.front(), 0);
  ASSERT_EQ(cross.ptr.back(), static_cast<std::int64_t>(cross.node.size()));
  ASSERT_EQ(cross.node.size(), cross.strength.size());
  for (std::size_t i = 0; i < cross.rows.size(); ++i) {
    ASSERT_LT(cross.ptr[i], cross.ptr[i + 1]) << "listed row " << cross.rows[i] << " without an edge";
    ASSERT_TRUE(cross.rows[i] >= 0 && cross.rows[i] < nodes.count()) << cross.rows[i];
    if (i > 0) ASSERT_LT(cross.rows[i - 1], cross.rows[i]);
  }
}

/// This rank: cross = the off-rank part of the graph's rows; owned part + cross = the rows.
void expect_cross_is_off_rank_part(const dist::DistMatrix& graph, const DistNodes& nodes, const CrossRankEdges& cross) {
  const RowBlock rows = dist::owned_row_block(graph);
  ASSERT_EQ(rows.local_rows(), nodes.count());
  const auto off_rank = [&](std::int64_t node) { return node < nodes.first || node >= nodes.first + nodes.count(); };
  for (std::int64_t n = 0; n < nodes.count(); ++n) {
    const std::string what = "node " + std::to_string(nodes.first + n);
    const GraphRow whole = testing::row_of(rows, n);
    if (!testing::expect_same_row(cross_row(cross, n), filtered(whole, off_rank), what + ": cross edges")) return;
    if (!testing::expect_same_row(merged(owned_part(graph, nodes.first, n), cross_row(cross, n)), whole,
                                  what + ": owned part + cross edges"))
      return;
  }
}

/// Rank 0: the gathered graph is the serial strength_graph() bit for bit, and the gathered
/// cross edges are its entries between nodes of different owners.
void expect_matches_serial(const dist::Communicator& comm, const GraphCase& c, const dist::DistMatrix& graph,
                           const CrossRankEdges& cross, double theta) {
  const Csr<double> a = dist::gather(comm, c.a);
  const Csr<double> got_graph = dist::gather(comm, graph);
  const NodeLayout layout = testing::gathered_node_layout(comm, c.nodes);
  std::vector<std::int64_t> lengths;
  for (std::int64_t n = 0; n < c.nodes.count(); ++n)
    lengths.push_back(static_cast<std::int64_t>(cross_row(cross, n).node.size()));
  const std::vector<std::int64_t> all_lengths = comm.gatherv(lengths, 0);
  const std::vector<std::int64_t> all_nodes = comm.gatherv(cross.node, 0);
  const std::vector<double> all_strength = comm.gatherv(cross.strength, 0);
  if (comm.rank() != 0) return;

  const Csr<double> want = strength_graph(a, layout, theta);
  ASSERT_EQ(got_graph.rows, want.rows);
  ASSERT_EQ(got_graph.row_ptr, want.row_ptr) << "dist_strength_graph: row pattern differs from serial";
  ASSERT_EQ(got_graph.col_idx, want.col_idx) << "dist_strength_graph: column pattern differs from serial";
  ASSERT_EQ(testing::bits(got_graph.values), testing::bits(want.values)) << "dist_strength_graph: values differ";

  const dist::RowPartition& owners = c.nodes.partition;
  ASSERT_EQ(static_cast<std::int64_t>(all_lengths.size()), want.rows);
  std::int64_t k = 0;
  for (std::int64_t i = 0; i < want.rows; ++i) {
    GraphRow expected;
    for (std::int64_t p = want.row_ptr[i]; p < want.row_ptr[i + 1]; ++p)
      if (owners.owner(want.col_idx[p]) != owners.owner(i)) {
        expected.node.push_back(want.col_idx[p]);
        expected.strength.push_back(want.values[p]);
      }
    const GraphRow got{{all_nodes.begin() + k, all_nodes.begin() + k + all_lengths[i]},
                       {all_strength.begin() + k, all_strength.begin() + k + all_lengths[i]}};
    k += all_lengths[i];
    if (!testing::expect_same_row(got, expected, "serial reference, node " + std::to_string(i))) return;
  }
}

int owning_ranks(const dist::RowPartition& p) {
  int count = 0;
  for (int r = 0; r < p.num_ranks(); ++r) count += p.size(r) > 0;
  return count;
}

/// Every partition and threshold of `build`; at theta 0, with several ranks owning nodes, some
/// edge must cross ranks (else the test would check nothing).
void check(const testing::GraphCaseBuilder& build, bool expect_cross_edges = true) {
  const dist::Communicator comm;
  std::int64_t cross_edges = 0;
  testing::for_each_partition_and_theta(comm, build, [&](const GraphCase& c, double theta) {
    const dist::DistMatrix graph = dist_strength_graph(comm, c.a, c.nodes, theta);
    const CrossRankEdges cross = cross_rank_strength(comm, c.a, c.nodes, theta);
    // The checks below read the edges and are collective: if one rank's are malformed, every rank leaves.
    bool well_formed = false;
    [&] {
      ASSERT_NO_FATAL_FAILURE(expect_well_formed(cross, c.nodes));
      well_formed = true;
    }();
    ASSERT_EQ(comm.allreduce(std::int64_t(well_formed), dist::ReduceOp::min), 1) << "cross edges not well formed";
    // Ranges of 3 nodes on 3 threads: the same edges, bit for bit.
    const CrossRankEdges threaded =
        tessera::testing::with_host_threads(3, [&] { return cross_rank_strength(comm, c.a, c.nodes, theta); });
    EXPECT_EQ(threaded.rows, cross.rows);
    EXPECT_EQ(threaded.ptr, cross.ptr);
    EXPECT_EQ(threaded.node, cross.node);
    EXPECT_EQ(testing::bits(threaded.strength), testing::bits(cross.strength));
    expect_cross_is_off_rank_part(graph, c.nodes, cross);
    expect_matches_serial(comm, c, graph, cross, theta);
    if (theta == 0 && owning_ranks(c.nodes.partition) > 1) cross_edges += static_cast<std::int64_t>(cross.node.size());
  });
  const std::int64_t total = comm.allreduce(cross_edges, dist::ReduceOp::sum);
  if (comm.size() > 1 && expect_cross_edges) EXPECT_GT(total, 0) << "no edge crossed ranks";
}

TEST(CrossRankStrength, Poisson7Point) { check(testing::generated("poisson3d:7")); }

TEST(CrossRankStrength, Poisson27Point) { check(testing::generated("poisson3d27:6")); }

TEST(CrossRankStrength, ElasticityBlockSize3) { check(testing::generated("elasticity3d:4")); }

TEST(CrossRankStrength, UnsymmetricPatternScalarNodes) { check(testing::unsymmetric(203, 1)); }

TEST(CrossRankStrength, UnsymmetricPatternTwoDofNodes) { check(testing::unsymmetric(202, 2)); }

TEST(CrossRankStrength, IsolatedNodesAndEmptyRows) { check(testing::isolated_nodes(157)); }

TEST(CrossRankStrength, PowerLawGraph) { check(testing::power_law(10, 8)); }

// Values past the range of plain squares: 2^700 (they overflow), 1e-200 (they vanish).
TEST(CrossRankStrength, Poisson7PointTimes2To700) {
  check(testing::scaled(testing::generated("poisson3d:7"), 0x1p700, "times 2^700"));
  testing::expect_graph_ignores_scale(testing::generated("poisson3d:7"), 0x1p700);
}

TEST(CrossRankStrength, UnsymmetricPatternTimes1em200) {
  check(testing::scaled(testing::unsymmetric(203, 1), 1e-200, "times 1e-200"));
  testing::expect_graph_ignores_scale(testing::unsymmetric(203, 1), 1e-200);
}

TEST(CrossRankStrength, MixedNodeSizes) { check(testing::mixed_node_sizes(211)); }

TEST(CrossRankStrength, CoarseLevelOfElasticity) { check(testing::coarse_level("elasticity3d:6")); }

TEST(CrossRankStrength, OneByOneAndEmpty) {
  check(testing::tiny(1), false);
  check(testing::tiny(0), false);
}

TEST(CrossRankStrength, NodeSplitByPartitionIsInputErrorOnEveryRank) {
  const dist::Communicator comm;
  const gen::ProblemSpec spec = gen::parse_spec("elasticity3d:3");  // 81 rows, nodes of 3
  const Csr<double> a = gen::generate(spec);
  if (comm.size() == 1) {  // one rank owns every node: no partition splits one, and the layout is taken
    const dist::RowPartition whole = dist::RowPartition::from_offsets(comm, a.rows, {0, a.rows});
    const DistNodes nodes = uniform_dist_nodes(comm, dist::testing::distribute(comm, a, whole, whole), 3);
    EXPECT_EQ(nodes.count(), 27);
    EXPECT_EQ(nodes.dofs_per_node, 3);
    return;
  }
  std::vector<std::int64_t> offsets{0};
  for (int r = 1; r < comm.size(); ++r) offsets.push_back(8 + 24 * (r - 1));  // 8, 32, 56: never a multiple of 3
  offsets.push_back(a.rows);
  const dist::RowPartition rows = dist::RowPartition::from_offsets(comm, a.rows, offsets);
  const dist::DistMatrix d = dist::testing::distribute(comm, a, rows, rows);
  const std::string text = dist::testing::input_error_on_every_rank(comm, [&] { uniform_dist_nodes(comm, d, 3); });
  EXPECT_NE(text.find("splits a node of 3 dofs"), std::string::npos) << text;
}

/// The device phases make a uniform layout's offsets on the GPU (n * dofs_per_node) instead of
/// uploading ptr, and node_of divides by it: dofs_per_node must be set exactly when every node
/// has that many dofs.
void expect_layout(const DistNodes& nodes, std::int64_t dofs_per_node) {
  EXPECT_EQ(nodes.dofs_per_node, dofs_per_node);
  if (nodes.dofs_per_node > 0)
    for (std::int64_t n = 0; n <= nodes.count(); ++n) ASSERT_EQ(nodes.ptr[n], n * nodes.dofs_per_node) << n;
  for (std::int64_t n = 0; n < nodes.count(); ++n)  // node_of divides or searches: each dof's node either way
    for (std::int64_t dof = nodes.ptr[n]; dof < nodes.ptr[n + 1]; ++dof) ASSERT_EQ(nodes.node_of(dof), n) << dof;
}

TEST(DistNodes, UniformLayoutsSayTheirNodeSize) {
  const dist::Communicator comm;
  const int r = comm.rank();
  for (const int block : {1, 3}) {
    const GraphCase c = testing::generated(block == 1 ? "poisson3d:5" : "elasticity3d:3")(comm, true, 7);
    expect_layout(c.nodes, block);
  }
  expect_layout(dist_nodes_from_sizes(comm, std::vector<std::int64_t>(static_cast<std::size_t>(5 + r), 6)), 6);
  expect_layout(dist_nodes_from_sizes(comm, {6, 6, 5, 6}), 0);  // an aggregate of 5 dofs: 5 coarse dofs
  expect_layout(dist_nodes_from_sizes(comm, {2, 1}), 0);
  expect_layout(dist_nodes_from_sizes(comm, {}), 0);  // no nodes here: offsets {0} either way
}

}  // namespace
}  // namespace tessera::amg
