// The distributed graph phases on each rank's GPU (amg/cuda/dist_device_graph_phases.hpp)
// against their host twins, on every case of graph_phase_cases.hpp (Poisson 7/27-point,
// elasticity with 3-dof nodes, unsymmetric patterns, nodes of 1-4 dofs, isolated nodes and
// empty rows, a power-law graph with hub rows, a coarse level, 1x1 and 0x0, values scaled past
// the range of plain squares; balanced and uneven partitions with an empty rank; theta 0.02,
// 0.08, 0.25, 0):
//   - dist_device_strength_graph, downloaded, is dist_strength_graph's rows: same columns,
//     bitwise values;
//   - dist_device_aggregate of it is dist_aggregate of the host graph: count, partition,
//     of_node, roots and MIS-2 rounds;
//   - device_graph_phases gives the same aggregates, fills its times, leaves the level's A
//     on the device for the later phases (the slot's local block is A's, bitwise) and hands
//     the graph over in dist_strength_graph's host form where asked (bitwise);
//   - DistAmg with device_graph_phases is the host DistAmg: with host products every level is
//     bitwise the same, also with the device tentative prolongator (device_tentative); with
//     device products too, the same sizes and aggregates per level, and with A held on the
//     device, P's first merge there (device_smoothing) gives the host merge's levels bitwise;
//   - bad input (a negative threshold, nodes that do not cover the rows) is the same InputError
//     on every rank, never a hang.
// Everything runs on a non-blocking stream, so work left on the legacy default stream would
// race. A GPU on every rank, maybe shared (label gpu; exit 77 without).
#include <algorithm>
#include <utility>

#include "amg/cuda/device_held_extended_a.hpp"
#include "amg/cuda/dist_device_graph_phases.hpp"
#include "amg/cuda/dist_device_smoothing.hpp"
#include "amg/cuda/dist_device_tentative.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/cuda/device_local_spgemm.hpp"
#include "graph_phase_cases.hpp"
#include "non_blocking_stream.hpp"

namespace tessera::amg {
namespace {

using gpu::DistDeviceGraph;
using testing::GraphCase;
using testing::GraphRow;

/// Row n of the device graph in global node ids: local columns + first_node, non-local
/// columns through ghost_nodes; sorted by node.
GraphRow device_row(const DistDeviceGraph& d, const Csr<double>& local, const Csr<double>& nonlocal, std::int64_t n) {
  std::vector<std::pair<std::int64_t, double>> entries;
  for (std::int64_t p = local.row_ptr[n]; p < local.row_ptr[n + 1]; ++p)
    entries.emplace_back(d.first_node + local.col_idx[p], local.values[p]);
  for (std::int64_t p = nonlocal.row_ptr[n]; p < nonlocal.row_ptr[n + 1]; ++p)
    entries.emplace_back(d.ghost_nodes.at(static_cast<std::size_t>(nonlocal.col_idx[p])), nonlocal.values[p]);
  std::sort(entries.begin(), entries.end(), [](auto& x, auto& y) { return x.first < y.first; });
  GraphRow out;
  for (const auto& [node, strength] : entries) {
    out.node.push_back(node);
    out.strength.push_back(strength);
  }
  return out;
}

/// Shapes and index ranges of the downloaded blocks.
void expect_consistent_blocks(const DistDeviceGraph& d, const DistNodes& nodes, const Csr<double>& local,
                              const Csr<double>& nonlocal) {
  EXPECT_EQ(d.first_node, nodes.first);
  EXPECT_TRUE(d.partition == nodes.partition) << "node partition differs";
  ASSERT_EQ(local.rows, nodes.count());
  ASSERT_EQ(local.cols, nodes.count());
  ASSERT_EQ(nonlocal.rows, nodes.count());
  ASSERT_EQ(nonlocal.cols, static_cast<std::int64_t>(d.ghost_nodes.size()));
  ASSERT_TRUE(std::is_sorted(d.ghost_nodes.begin(), d.ghost_nodes.end()));
  ASSERT_TRUE(std::adjacent_find(d.ghost_nodes.begin(), d.ghost_nodes.end()) == d.ghost_nodes.end());
  for (std::int64_t g : d.ghost_nodes)
    ASSERT_TRUE(g < nodes.first || g >= nodes.first + nodes.count()) << "ghost node " << g << " is owned";
  for (std::int32_t c : local.col_idx) ASSERT_TRUE(c >= 0 && c < local.cols) << "local column " << c;
  for (std::int32_t c : nonlocal.col_idx) ASSERT_TRUE(c >= 0 && c < nonlocal.cols) << "ghost column " << c;
}

void expect_same_graph(const DistDeviceGraph& d, const dist::DistMatrix& graph, const DistNodes& nodes,
                       cudaStream_t stream) {
  const Csr<double> local = cuda::download(d.local, stream), nonlocal = cuda::download(d.nonlocal, stream);
  ASSERT_NO_FATAL_FAILURE(expect_consistent_blocks(d, nodes, local, nonlocal));
  EXPECT_EQ(d.owned_nodes(), nodes.count());
  const RowBlock rows = dist::owned_row_block(graph);
  for (std::int64_t n = 0; n < nodes.count(); ++n)
    if (!testing::expect_same_row(device_row(d, local, nonlocal, n), testing::row_of(rows, n),
                                  "node " + std::to_string(nodes.first + n)))
      return;
}

void expect_same_aggregates(const DistAggregates& got, const DistAggregates& want) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_TRUE(got.partition == want.partition) << "aggregate partition differs";
  EXPECT_EQ(got.of_node, want.of_node);
  EXPECT_EQ(got.roots, want.roots);
  EXPECT_EQ(got.mis_rounds, want.mis_rounds);
}

/// (a) the graph, (b) the aggregates, and device_graph_phases, on every partition and theta.
void check(const testing::GraphCaseBuilder& build) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const testing::NonBlockingStream stream;
  double timed = 0;  // over the non-empty cases
  int timed_cases = 0;
  testing::for_each_partition_and_theta(comm, build, [&](const GraphCase& c, double theta) {
    const dist::DistMatrix graph = dist_strength_graph(comm, c.a, c.nodes, theta);
    const DistDeviceGraph d = gpu::dist_device_strength_graph(comm, c.a, c.nodes, theta, stream.s);
    expect_same_graph(d, graph, c.nodes, stream.s);
    const DistAggregates want = dist_aggregate(comm, graph);
    {
      SCOPED_TRACE("dist_device_aggregate");
      expect_same_aggregates(gpu::dist_device_aggregate(comm, d, stream.s), want);
    }
    SetupTimes times;
    SCOPED_TRACE("device_graph_phases");
    DeviceOperatorSlot device_a;
    dist::DistMatrix handed_over;  // the graph, as the filtered operator asks for it
    expect_same_aggregates(
        gpu::device_graph_phases(stream.s)(comm, c.a, c.nodes, theta, times, device_a, &handed_over), want);
    EXPECT_TRUE(handed_over.row_partition == graph.row_partition) << "the handed-over graph's partition differs";
    EXPECT_EQ(handed_over.local, graph.local);
    EXPECT_EQ(handed_over.nonlocal, graph.nonlocal);
    EXPECT_EQ(handed_over.ghost_cols, graph.ghost_cols);
    // The level's A stays on the device for the phases after it (eigenvalue estimate, solve).
    ASSERT_TRUE(device_a.matrix) << "the strength phase left no device copy of A";
    EXPECT_FALSE(device_a.stale);
    EXPECT_EQ(device_a.matrix->host, &c.a);
    const Csr<double> local = cuda::download(device_a.matrix->local, stream.s);
    EXPECT_EQ(local.row_ptr, c.a.local.row_ptr);
    EXPECT_EQ(local.col_idx, c.a.local.col_idx);
    EXPECT_EQ(local.values, c.a.local.values);
    EXPECT_GE(times.strength, 0);
    EXPECT_GE(times.aggregation, 0);
    if (c.nodes.partition.global_rows() > 0) {
      timed += std::min(times.strength, times.aggregation);
      timed_cases += 1;
    }
  });
  if (timed_cases > 0) EXPECT_GT(timed, 0) << "device_graph_phases left its times at 0";
}

TEST(DistDeviceGraphPhases, Poisson7Point) { check(testing::generated("poisson3d:7")); }

TEST(DistDeviceGraphPhases, Poisson27Point) { check(testing::generated("poisson3d27:6")); }

TEST(DistDeviceGraphPhases, ElasticityBlockSize3) { check(testing::generated("elasticity3d:4")); }

TEST(DistDeviceGraphPhases, UnsymmetricPatternScalarNodes) { check(testing::unsymmetric(203, 1)); }

TEST(DistDeviceGraphPhases, UnsymmetricPatternTwoDofNodes) { check(testing::unsymmetric(202, 2)); }

TEST(DistDeviceGraphPhases, IsolatedNodesAndEmptyRows) { check(testing::isolated_nodes(157)); }

TEST(DistDeviceGraphPhases, PowerLawGraph) { check(testing::power_law(10, 8)); }

// Values past the range of plain squares: 2^700 (they overflow), 1e-200 (they vanish).
TEST(DistDeviceGraphPhases, Poisson7PointTimes2To700) {
  check(testing::scaled(testing::generated("poisson3d:7"), 0x1p700, "times 2^700"));
  testing::expect_graph_ignores_scale(testing::generated("poisson3d:7"), 0x1p700);
}

TEST(DistDeviceGraphPhases, UnsymmetricPatternTimes1em200) {
  check(testing::scaled(testing::unsymmetric(203, 1), 1e-200, "times 1e-200"));
  testing::expect_graph_ignores_scale(testing::unsymmetric(203, 1), 1e-200);
}

TEST(DistDeviceGraphPhases, MixedNodeSizes) { check(testing::mixed_node_sizes(211)); }

TEST(DistDeviceGraphPhases, CoarseLevelOfElasticity) { check(testing::coarse_level("elasticity3d:6")); }

TEST(DistDeviceGraphPhases, OneByOne) { check(testing::tiny(1)); }

TEST(DistDeviceGraphPhases, Empty) { check(testing::tiny(0)); }

TEST(DistDeviceGraphPhases, BadInputIsTheSameErrorOnEveryRank) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const GraphCase c = testing::generated("poisson3d:7")(comm, false, dist::testing::shared_seed(comm));
  SetupTimes times;
  DeviceOperatorSlot device_a;
  const std::string negative = dist::testing::input_error_on_every_rank(
      comm, [&] { gpu::device_graph_phases()(comm, c.a, c.nodes, -0.5, times, device_a, nullptr); });
  EXPECT_NE(negative.find("theta must be non-negative"), std::string::npos) << negative;
  // Rank 0's nodes lose their last dof (every rank owns rows on this balanced partition): they
  // no longer cover its rows.
  DistNodes short_nodes = c.nodes;
  if (comm.rank() == 0) short_nodes.ptr.back() -= 1;
  const std::string uncovered = dist::testing::input_error_on_every_rank(
      comm, [&] { gpu::device_graph_phases()(comm, c.a, short_nodes, 0.02, times, device_a, nullptr); });
  EXPECT_NE(uncovered.find("nodes cover"), std::string::npos) << uncovered;
}

// ---- (c) whole hierarchies -------------------------------------------------------------------

void expect_same_bits(const Csr<double>& got, const Csr<double>& want, const std::string& what) {
  EXPECT_EQ(got.rows, want.rows) << what;
  EXPECT_EQ(got.cols, want.cols) << what;
  EXPECT_EQ(got.row_ptr, want.row_ptr) << what << ": row pattern";
  EXPECT_EQ(got.col_idx, want.col_idx) << what << ": column pattern";
  EXPECT_EQ(testing::bits(got.values), testing::bits(want.values)) << what << ": values";
}

/// This rank's part of both hierarchies: the same levels and aggregates; with `exact`, the same
/// operators and prolongators bit for bit (host products: only the graph phases differ).
void expect_same_levels(const DistHierarchy& got, const DistHierarchy& want, bool exact) {
  ASSERT_EQ(got.levels.size(), want.levels.size());
  EXPECT_EQ(got.stop_reason, want.stop_reason);
  for (std::size_t l = 0; l < want.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    const DistLevel& g = got.levels[l];
    const DistLevel& w = want.levels[l];
    EXPECT_EQ(g.a.global_rows(), w.a.global_rows());
    EXPECT_TRUE(g.a.row_partition == w.a.row_partition) << "row partition differs";
    EXPECT_EQ(g.nodes.ptr, w.nodes.ptr);
    expect_same_aggregates(g.aggregates, w.aggregates);
    if (!exact) continue;
    EXPECT_EQ(g.a.ghost_cols, w.a.ghost_cols);
    expect_same_bits(g.a.local, w.a.local, "A local block");
    expect_same_bits(g.a.nonlocal, w.a.nonlocal, "A non-local block");
    if (l + 1 == want.levels.size()) continue;
    expect_same_bits(g.p.local, w.p.local, "P local block");
    expect_same_bits(g.p.nonlocal, w.p.nonlocal, "P non-local block");
  }
}

double graph_phase_seconds(const DistHierarchy& h, double SetupTimes::*phase) {
  double sum = 0;
  for (const DistLevel& level : h.levels) sum += level.times.*phase;
  return sum;
}

void check_hierarchy(const testing::Problem& pb, std::size_t min_levels = 3) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(pb.spec + ", seed " + std::to_string(seed));
  AmgOptions options;
  options.coarse_size = 40;  // several levels on these small problems
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, pb.near_null.block_size, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const NearNullSpace b = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
    const DistAmg host(comm, a, b, options);
    ASSERT_GE(host.hierarchy().levels.size(), min_levels) << "the test wants a real hierarchy";
    {
      SCOPED_TRACE("device graph phases, host products");
      const DistAmg device(comm, a, b, options, {dist::host_local_spgemm, gpu::device_graph_phases()});
      expect_same_levels(device.hierarchy(), host.hierarchy(), true);
      EXPECT_GT(graph_phase_seconds(device.hierarchy(), &SetupTimes::strength), 0);
      EXPECT_GT(graph_phase_seconds(device.hierarchy(), &SetupTimes::aggregation), 0);
    }
    {
      SCOPED_TRACE("device graph phases and tentative prolongator, host products");
      DistSetupBackend backend{dist::host_local_spgemm, gpu::device_graph_phases()};
      backend.tentative = gpu::device_tentative();
      const DistAmg device(comm, a, b, options, backend);
      expect_same_levels(device.hierarchy(), host.hierarchy(), true);
    }
    {
      SCOPED_TRACE("device graph phases and products, A held on the device: P's first merge on the device");
      const auto which = cuda::OffloadSpgemm::automatic;
      DistSetupBackend backend{dist::device_local_spgemm(which), gpu::device_graph_phases()};
      backend.held_extended_a = gpu::device_held_extended_a(nullptr, which);
      const DistAmg merged_on_host(comm, a, b, options, backend);
      backend.smoothing = gpu::device_smoothing(nullptr, which);
      const DistAmg merged_on_device(comm, a, b, options, backend);
      expect_same_levels(merged_on_device.hierarchy(), merged_on_host.hierarchy(), true);
    }
    SCOPED_TRACE("device graph phases, device products");
    const DistAmg device(comm, a, b, options,
                         {dist::device_local_spgemm(cuda::OffloadSpgemm::automatic), gpu::device_graph_phases()});
    expect_same_levels(device.hierarchy(), host.hierarchy(), false);
  }
}

void check_hierarchy(const std::string& spec) { check_hierarchy(testing::make_problem(spec)); }

TEST(DistDeviceGraphPhases, Poisson7PointHierarchyMatchesHost) { check_hierarchy("poisson3d:10"); }

// 27-point aggregates are large (about 5^3 nodes): on 8^3 the second level is already below the
// coarse size, so 12^3 for three levels.
TEST(DistDeviceGraphPhases, Poisson27PointHierarchyMatchesHost) { check_hierarchy("poisson3d27:12"); }

TEST(DistDeviceGraphPhases, ElasticityHierarchyMatchesHost) { check_hierarchy("elasticity3d:6"); }

// Real SPD matrices (../shared/matrices; test_dist_hierarchy's list, less the one-level ones):
// irregular graphs of power networks, stiffness and mass matrices, a finite-element graph and
// Laplacians read from files, scalar nodes.
TEST(DistDeviceGraphPhases, SuiteSparseSpdMatricesHierarchyMatchesHost) {
  const std::vector<std::string> names{"1138_bus", "494_bus",  "662_bus",  "685_bus", "gr_30_30", "lap2D_5pt_n100",
                                       "lap3D_7pt_n20", "bcsstk08", "bcsstk21", "bcsstm07", "bcsstk01"};
  const std::vector<testing::Problem> problems = testing::file_problems(names);
  ASSERT_EQ(problems.size(), names.size()) << "matrices missing from " << ::tessera::testing::matrix_dir();
  for (const testing::Problem& pb : problems) check_hierarchy(pb, 2);
}

}  // namespace
}  // namespace tessera::amg
