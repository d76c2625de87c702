// The graph phases of the smoothed-aggregation setup on the device (amg/cuda/
// device_setup_phases.hpp) against their host twins: strength graph, aggregation and tentative
// prolongator on scalar and block problems, real SPD matrices, Dirichlet rows, random and
// power-law (R-MAT hubs) SPD matrices on fresh seeds, 1x1 and 0x0, theta in {0, 0.02, 0.25}.
// The strength graph's three assembly paths are all checked: symmetric patterns (also with
// unequal values) must take the mirrored paths (A's entries for scalar nodes, S's rows for
// blocks), unsymmetric patterns (scalar and 3-dof nodes) the sorted union. Patterns, aggregates
// and coarse layouts must be identical; the device code repeats the host's floating-point
// operations in the same order without FMA contraction, so values are required to match to
// kUlps units in the last place (in practice they match bit for bit; the count is printed). The
// filtered operator of prolongator smoothing on the same problems and thresholds, and on a
// coarse level: bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "amg/aggregation.hpp"
#include "amg/cuda/device_filtered_operator.hpp"
#include "amg/cuda/device_setup_phases.hpp"
#include "amg/filtered_operator.hpp"
#include "amg/near_null_space.hpp"
#include "amg/strength.hpp"
#include "amg/tentative_prolongator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "local/reference/kernels.hpp"
#include "support/matrix_files.hpp"
#include "support/random_matrix.hpp"
#include "support/generated_near_null_space.hpp"

namespace tessera::amg {
namespace {

constexpr double kThetas[] = {0.0, 0.02, 0.25};
constexpr double kUlps = 4;

struct Problem {
  std::string name;
  Csr<double> a;
  NodeLayout nodes;
  DenseMatrix b;  // near-null space, rows x k
};

Problem generated(const std::string& spec) {
  const gen::ProblemSpec s = gen::parse_spec(spec);
  Problem p{spec, gen::generate(s), {}, {}};
  const int bs = gen::block_size(s);
  p.nodes = uniform_nodes(p.a.rows, bs);
  p.b = tessera::testing::generated_near_null_space(s).vectors;
  return p;
}

Problem with_constant_space(std::string name, Csr<double> a, int block_size) {
  Problem p{std::move(name), std::move(a), {}, {}};
  p.nodes = uniform_nodes(p.a.rows, block_size);
  p.b = constant_near_null_space(p.a.rows, block_size).vectors;
  return p;
}

/// Random SPD (B + B^T + diagonal dominance, B's signs kept), odd size, some nodes coupled to nothing.
Problem random_spd(std::int64_t n, std::uint64_t seed) {
  const Csr<double> b = testing::random_csr({n, n, 0.03, 0.1}, seed);
  return with_constant_space("random SPD n=" + std::to_string(n) + " seed=" + std::to_string(seed),
                             testing::diagonally_dominant_spd(b, testing::OffDiagonalSigns::kept), 1);
}

/// poisson3d:9 with every 7th dof made a Dirichlet dof (row and column reduced to the diagonal).
Problem dirichlet_rows() {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:9"));
  std::vector<std::int64_t> ri, ci;
  std::vector<double> v;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const std::int64_t j = a.col_idx[p];
      if (i != j && (i % 7 == 0 || j % 7 == 0)) continue;
      ri.push_back(i), ci.push_back(j), v.push_back(a.values[p]);
    }
  return with_constant_space("poisson3d:9 with Dirichlet dofs", csr_from_triplets(a.rows, a.cols, ri, ci, v), 1);
}

std::vector<Problem> problems() {
  std::vector<Problem> out;
  for (const char* spec : {"poisson3d:15", "poisson3d27:9", "elasticity3d:5", "elasticity3d:4", "elasticity2d:13"})
    out.push_back(generated(spec));
  out.push_back(dirichlet_rows());
  out.push_back(with_constant_space("1x1", csr_from_triplets<double>(1, 1, {0}, {0}, {4.0}), 1));
  out.push_back(with_constant_space("0x0", Csr<double>::empty(0, 0), 1));
  out.push_back(random_spd(203, testing::fresh_seed()));
  // rmat:10:8 (1024 rows): hub rows of ~350 entries, longer than any lane group, beside ~220 rows
  // coupled to nothing; theta 0.02 keeps about half of the couplings, 0.25 a few dozen (a hub's
  // large diagonal makes its edges weak), so aggregation meets many unaggregated nodes there.
  const std::uint64_t power_law_seed = testing::fresh_seed();
  out.push_back(with_constant_space("power-law SPD rmat:10:8:seed=" + std::to_string(power_law_seed),
                                    testing::power_law_spd(10, 8, power_law_seed), 1));
  const struct { const char* name; int block; } real[] = {{"bcsstk05", 3}, {"bcsstk08", 6}, {"bcsstk22", 1}, {"gr_30_30", 1}};
  for (const testing::MatrixFile& f : testing::manifest())
    for (const auto& r : real)
      if (f.name == r.name) out.push_back(with_constant_space(f.name, io::read_matrix_market(f.path), r.block));
  return out;
}

/// Distance in units in the last place (0 for equal values, +0 vs -0 included; NaN: infinite).
double ulps(double x, double y) {
  if (x == y) return 0;
  if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::infinity();
  return std::abs(x - y) / std::max(std::numeric_limits<double>::denorm_min(),
                                    std::ldexp(std::numeric_limits<double>::epsilon(), std::ilogb(std::max(std::abs(x), std::abs(y)))));
}

/// Identical pattern, values within kUlps; returns how many values differ at all.
std::int64_t expect_same_csr(const Csr<double>& device, const Csr<double>& host, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(device.rows, host.rows);
  EXPECT_EQ(device.cols, host.cols);
  EXPECT_EQ(device.row_ptr, host.row_ptr);
  EXPECT_EQ(device.col_idx, host.col_idx);
  if (device.values.size() != host.values.size()) {
    ADD_FAILURE() << "value counts differ";
    return -1;
  }
  std::int64_t differing = 0;
  for (std::size_t k = 0; k < host.values.size(); ++k) {
    const double d = ulps(device.values[k], host.values[k]);
    differing += d > 0;
    if (d > kUlps) ADD_FAILURE() << "entry " << k << ": " << device.values[k] << " vs " << host.values[k];
  }
  return differing;
}

cuda::DeviceBuffer<std::int64_t> upload_nodes(const NodeLayout& nodes) {
  cuda::DeviceBuffer<std::int64_t> d;
  d.upload(nodes);
  return d;
}

std::int64_t num_nodes(const NodeLayout& nodes) { return static_cast<std::int64_t>(nodes.size()) - 1; }

gpu::DeviceAggregates upload(const Aggregates& agg) {
  gpu::DeviceAggregates d;
  d.count = agg.count;
  d.of_node.upload(agg.of_node);
  d.roots.upload(agg.roots);
  return d;
}

void expect_same_aggregates(const gpu::DeviceAggregates& device, const Aggregates& host) {
  EXPECT_EQ(device.count, host.count);
  EXPECT_EQ(device.of_node.download(), host.of_node);
  EXPECT_EQ(device.roots.download(), host.roots);
}

TEST(DeviceStrengthGraph, MatchesHostOnEveryProblemAndTheta) {
  for (const Problem& p : problems()) {
    const cuda::DeviceCsr<double> a = cuda::upload(p.a);
    const auto nodes = upload_nodes(p.nodes);
    for (const double theta : kThetas) {
      SCOPED_TRACE(p.name + ", theta " + std::to_string(theta));
      const Csr<double> host = strength_graph(p.a, p.nodes, theta);
      const Csr<double> device = cuda::download(gpu::device_strength_graph(a, nodes.data(), num_nodes(p.nodes), theta));
      const std::int64_t differing = expect_same_csr(device, host, "strength graph");
      if (differing != 0) std::printf("%s theta %g: %lld strength values differ in the last bits\n", p.name.c_str(), theta, (long long)differing);
    }
  }
}

/// c*A keeps A's strong edges on the device as on the host: the rule squares the entries after a
/// power-of-two scaling from A's largest magnitude (amg/strength_rule.hpp), which the device finds
/// by a reduction. Without it 1e200 squared overflows and 1e-200 squared vanishes: no edges. For
/// c a power of two the graph is A's bit for bit; for 1e200 and 1e-200 A's pattern, values near.
TEST(DeviceStrengthGraph, ScaledOperatorKeepsItsEdges) {
  for (const char* spec : {"poisson3d:6", "elasticity3d:3"}) {
    const Problem p = generated(spec);
    const auto nodes = upload_nodes(p.nodes);
    const Csr<double> unscaled = strength_graph(p.a, p.nodes, 0.02);
    ASSERT_GT(unscaled.nnz(), 0) << spec;
    for (const double c : {0x1p700, 0x1p-700, 1e200, 1e-200}) {
      SCOPED_TRACE(std::string(spec) + " times " + std::to_string(std::log10(c)) + " decades");
      Csr<double> scaled = p.a;
      for (double& v : scaled.values) v *= c;
      const Csr<double> host = strength_graph(scaled, p.nodes, 0.02);
      const Csr<double> device =
          cuda::download(gpu::device_strength_graph(cuda::upload(scaled), nodes.data(), num_nodes(p.nodes), 0.02));
      expect_same_csr(device, host, "device against host");
      EXPECT_EQ(host.row_ptr, unscaled.row_ptr);
      EXPECT_EQ(host.col_idx, unscaled.col_idx);
      if (std::exp2(std::ilogb(c)) == c) EXPECT_EQ(expect_same_csr(host, unscaled, "2^k A against A"), 0);
    }
  }
}

/// Random SPD (random_spd) with every entry above the diagonal scaled by a random factor in
/// [0.5, 2]: the pattern stays symmetric, the values do not.
Problem skewed_values(std::int64_t n, std::uint64_t seed) {
  Problem p = random_spd(n, seed);
  std::mt19937_64 rng(seed ^ 0x5eedULL);
  std::uniform_real_distribution<double> factor(0.5, 2.0);
  for (std::int64_t i = 0; i < p.a.rows; ++i)
    for (std::int64_t q = p.a.row_ptr[i]; q < p.a.row_ptr[i + 1]; ++q)
      if (p.a.col_idx[q] > i) p.a.values[q] *= factor(rng);
  p.name = "skewed " + p.name;
  return p;
}

/// A random matrix with an unsymmetric pattern on nodes of `block` dofs (n a multiple of it),
/// diagonally dominant; the first node couples strongly to the last (|a| = 50, strong for every
/// theta here) and the last not at all to the first, so S is never symmetric.
Problem random_unsymmetric(std::int64_t n, int block, std::uint64_t seed) {
  const Csr<double> r = testing::random_csr({n, n, 0.04, 0.1}, seed);
  const std::int64_t last = n / block - 1;
  std::vector<std::int64_t> ri, ci;
  std::vector<double> v;
  std::vector<double> row_sum(static_cast<std::size_t>(n), 1.0);
  const auto add = [&](std::int64_t i, std::int64_t j, double x) {
    ri.push_back(i), ci.push_back(j), v.push_back(x);
    row_sum[i] += std::abs(x);
  };
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t q = r.row_ptr[i]; q < r.row_ptr[i + 1]; ++q) {
      const std::int64_t j = r.col_idx[q];
      const bool last_to_first = i / block == last && j / block == 0;
      if (i != j && !last_to_first && !(i == 0 && j == n - 1)) add(i, j, r.values[q]);
    }
  add(0, n - 1, 50.0);
  for (std::int64_t i = 0; i < n; ++i) ri.push_back(i), ci.push_back(i), v.push_back(row_sum[i]);
  return with_constant_space("random unsymmetric n=" + std::to_string(n) + " block=" + std::to_string(block) +
                                 " seed=" + std::to_string(seed),
                             csr_from_triplets(n, n, ri, ci, v), block);
}

/// Device vs host strength graph at `theta`; returns the way the device assembled it.
gpu::StrengthAssembly expect_same_strength(const Problem& p, double theta) {
  SCOPED_TRACE(p.name + ", theta " + std::to_string(theta));
  const auto nodes = upload_nodes(p.nodes);
  gpu::StrengthAssembly assembly{};
  const Csr<double> device = cuda::download(
      gpu::device_strength_graph(cuda::upload(p.a), nodes.data(), num_nodes(p.nodes), theta, nullptr, &assembly));
  expect_same_csr(device, strength_graph(p.a, p.nodes, theta), "strength graph");
  return assembly;
}

TEST(DeviceStrengthGraph, SymmetricPatternsTakeTheMirroredPaths) {
  // Scalar nodes: A's entries with their mirrors. Block nodes: S's rows with their mirrors.
  std::vector<Problem> scalar, block;
  for (const char* spec : {"poisson3d:15", "poisson3d27:9", "poisson3d:2"}) scalar.push_back(generated(spec));
  scalar.push_back(dirichlet_rows());
  scalar.push_back(random_spd(157, testing::fresh_seed()));
  scalar.push_back(with_constant_space("1x1", csr_from_triplets<double>(1, 1, {0}, {0}, {4.0}), 1));
  block.push_back(generated("elasticity3d:4"));
  for (const auto& [problems, path] : {std::pair{&scalar, gpu::StrengthAssembly::mirrored_entries},
                                       std::pair{&block, gpu::StrengthAssembly::mirrored_rows}})
    for (const Problem& p : *problems)
      for (const double theta : kThetas) {
        SCOPED_TRACE(p.name);
        EXPECT_EQ(expect_same_strength(p, theta), path);
      }
  // Unequal values in the two directions (a Galerkin operator's rounding, here up to 4x): with
  // scalar nodes A's pattern decides, and each edge gets the larger strength, as the host's
  // union_max -- also at theta 0.25, where an edge may be strong in one direction only.
  for (int trial = 0; trial < 3; ++trial) {
    const Problem p = skewed_values(101 + 50 * trial, testing::fresh_seed());
    SCOPED_TRACE(p.name);
    for (const double theta : kThetas)
      EXPECT_EQ(expect_same_strength(p, theta), gpu::StrengthAssembly::mirrored_entries);
  }
}

TEST(DeviceStrengthGraph, MirroredEntriesOnLongAndUnevenRows) {
  // Rows longer than a group of 32 lanes (a dense block) beside short rows and rows without a
  // diagonal, values unequal in the two directions. (The group sizes 4, 8, 16 and 32 come from
  // the average row: poisson3d:2, poisson3d:15, random SPD and the 27-point problem above.)
  for (const std::int64_t n : {5, 33, 70, 131}) {
    std::vector<std::int64_t> ri, ci;
    std::vector<double> v;
    std::mt19937_64 rng(testing::fresh_seed());
    std::uniform_real_distribution<double> coupling(-1.0, -0.01);
    const std::int64_t dense = std::min<std::int64_t>(n, 45);  // the first `dense` rows couple to each other
    std::vector<double> row_sum(static_cast<std::size_t>(n), 1.0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j) {
        if (!(i < dense && j < dense) && (j - i) % 7 != 3) continue;
        const double x = coupling(rng);
        ri.insert(ri.end(), {i, j}), ci.insert(ci.end(), {j, i}), v.insert(v.end(), {x, x * 1.5});
        row_sum[i] += 2 * std::abs(x), row_sum[j] += 2 * std::abs(x);
      }
    for (std::int64_t i = 0; i < n; ++i)
      if (i % 11 != 10) ri.push_back(i), ci.push_back(i), v.push_back(row_sum[i]);  // some rows lack a diagonal
    const Problem p = with_constant_space("dense block n=" + std::to_string(n), csr_from_triplets(n, n, ri, ci, v), 1);
    for (const double theta : kThetas)
      EXPECT_EQ(expect_same_strength(p, theta), gpu::StrengthAssembly::mirrored_entries);
  }
}

TEST(DeviceStrengthGraph, UnsymmetricPatternsFallBackToTheSortedUnion) {
  for (int trial = 0; trial < 3; ++trial)
    for (const int block : {1, 3}) {
      const Problem p = random_unsymmetric(block * (67 + 22 * trial), block, testing::fresh_seed());
      for (const double theta : kThetas) {
        SCOPED_TRACE(p.name);
        EXPECT_EQ(expect_same_strength(p, theta), gpu::StrengthAssembly::sorted_union);
      }
    }
}

TEST(DeviceAggregate, MatchesHostOnTheHostGraph) {
  for (const Problem& p : problems())
    for (const double theta : kThetas) {
      SCOPED_TRACE(p.name + ", theta " + std::to_string(theta));
      const Csr<double> graph = strength_graph(p.a, p.nodes, theta);
      expect_same_aggregates(gpu::device_aggregate(cuda::upload(graph)), aggregate(graph));
    }
}

TEST(DeviceAggregate, ChainedAfterDeviceStrengthMatchesHostChain) {
  for (const Problem& p : problems()) {
    SCOPED_TRACE(p.name);
    const auto nodes = upload_nodes(p.nodes);
    const auto graph = gpu::device_strength_graph(cuda::upload(p.a), nodes.data(), num_nodes(p.nodes), 0.02);
    expect_same_aggregates(gpu::device_aggregate(graph), aggregate(strength_graph(p.a, p.nodes, 0.02)));
  }
}

/// Device P_tent from the host aggregates vs the host; returns the host result for chaining.
TentativeProlongator expect_same_tentative(const Problem& p, const Aggregates& agg) {
  const TentativeProlongator host = tentative_prolongator(agg, p.nodes, p.b);
  const auto nodes = upload_nodes(p.nodes);
  cuda::DeviceBuffer<double> b;
  b.upload(p.b.data);
  const auto device = gpu::device_tentative_prolongator(upload(agg), nodes.data(), num_nodes(p.nodes), p.a.rows,
                                                        b.data(), static_cast<int>(p.b.cols));
  EXPECT_EQ(device.coarse_dofs, host.coarse_nodes.back());
  EXPECT_EQ(device.coarse_nodes.download(), host.coarse_nodes);
  expect_same_csr(cuda::download(device.p), host.p, "P_tent");
  const std::vector<double> cv = device.coarse_vectors.download();
  EXPECT_EQ(cv.size(), host.coarse_vectors.data.size());
  for (std::size_t i = 0; i < std::min(cv.size(), host.coarse_vectors.data.size()); ++i)
    EXPECT_LE(ulps(cv[i], host.coarse_vectors.data[i]), kUlps) << "coarse vector entry " << i;
  return host;
}

TEST(DeviceTentativeProlongator, MatchesHostOnEveryProblemAndTheta) {
  for (const Problem& p : problems())
    for (const double theta : kThetas) {
      SCOPED_TRACE(p.name + ", theta " + std::to_string(theta));
      expect_same_tentative(p, aggregate(strength_graph(p.a, p.nodes, theta)));
    }
}

/// device_filtered_operator against filtered_operator on the host graph: the same answer to
/// "anything dropped?", the same pattern and map, and the same values bit for bit after a
/// refresh into poisoned (NaN) values. Returns whether anything was dropped.
bool expect_same_filtered_operator(const Problem& p, const Csr<double>& graph) {
  const std::optional<FilteredOperator> host = [&] {
    std::optional<FilteredOperator> f = filtered_operator(p.a, p.nodes, graph);
    if (f) refresh_filtered_values(p.a, *f);
    return f;
  }();
  const cuda::DeviceCsr<double> da = cuda::upload(p.a);
  const auto nodes = upload_nodes(p.nodes);
  std::optional<gpu::DeviceFilteredOperator> device =
      gpu::device_filtered_operator(da, nodes.data(), num_nodes(p.nodes), cuda::upload(graph));
  EXPECT_EQ(device.has_value(), host.has_value());
  if (!device || !host) return false;
  EXPECT_EQ(device->target.download(), host->target);
  device->a.values.upload(std::vector<double>(host->a.values.size(), std::numeric_limits<double>::quiet_NaN()));
  gpu::device_refresh_filtered_values(da, *device);
  EXPECT_EQ(expect_same_csr(cuda::download(device->a), host->a, "A_F"), 0);
  return true;
}

TEST(DeviceFilteredOperator, MatchesHostOnEveryProblemAndTheta) {
  int filtered = 0;
  for (const Problem& p : problems())
    for (const double theta : kThetas) {
      SCOPED_TRACE(p.name + ", theta " + std::to_string(theta));
      filtered += expect_same_filtered_operator(p, strength_graph(p.a, p.nodes, theta));
    }
  // The coarse level of elasticity: nodes of up to 6 dofs, fewer on small aggregates.
  const Problem fine = generated("elasticity3d:6");
  const TentativeProlongator t =
      tentative_prolongator(aggregate(strength_graph(fine.a, fine.nodes, 0.02)), fine.nodes, fine.b);
  const Problem coarse{"elasticity3d:6 level 1", ref::ptap(fine.a, t.p), t.coarse_nodes, t.coarse_vectors};
  for (const double theta : kThetas) {
    SCOPED_TRACE("elasticity3d:6 level 1, theta " + std::to_string(theta));
    filtered += expect_same_filtered_operator(coarse, strength_graph(coarse.a, coarse.nodes, theta));
  }
  EXPECT_GE(filtered, 8) << "too few cases dropped an entry to test the filter";
  std::printf("%d problem/threshold pairs dropped entries\n", filtered);
}

TEST(DeviceSetupPhases, CoarseLevelWithNonUniformNodes) {
  // Elasticity with 6 rigid-body modes: the coarse level has up to 6 dofs per node, fewer on
  // small aggregates, so its node layout is not uniform; all three phases run on it.
  for (const char* spec : {"elasticity3d:6", "elasticity3d:5"}) {
    SCOPED_TRACE(spec);
    const Problem fine = generated(spec);
    const TentativeProlongator t = tentative_prolongator(aggregate(strength_graph(fine.a, fine.nodes, 0.02)), fine.nodes, fine.b);
    Problem coarse{std::string(spec) + " level 1", ref::ptap(fine.a, t.p), t.coarse_nodes, t.coarse_vectors};
    for (const double theta : kThetas) {
      SCOPED_TRACE(theta);
      const Csr<double> graph = strength_graph(coarse.a, coarse.nodes, theta);
      const auto nodes = upload_nodes(coarse.nodes);
      expect_same_csr(cuda::download(gpu::device_strength_graph(cuda::upload(coarse.a), nodes.data(),
                                                                num_nodes(coarse.nodes), theta)),
                      graph, "coarse strength graph");
      const Aggregates agg = aggregate(graph);
      expect_same_aggregates(gpu::device_aggregate(cuda::upload(graph)), agg);
      expect_same_tentative(coarse, agg);
    }
  }
}

TEST(DeviceSetupPhases, RandomSpdOnFreshSeeds) {
  for (int trial = 0; trial < 4; ++trial) {
    const std::uint64_t seed = testing::fresh_seed();
    const Problem p = random_spd(97 + 61 * trial, seed);
    SCOPED_TRACE(p.name);
    const auto nodes = upload_nodes(p.nodes);
    const double theta = kThetas[trial % 3];
    const Csr<double> graph = strength_graph(p.a, p.nodes, theta);
    expect_same_csr(cuda::download(gpu::device_strength_graph(cuda::upload(p.a), nodes.data(), num_nodes(p.nodes), theta)),
                    graph, "strength graph");
    const Aggregates agg = aggregate(graph);
    expect_same_aggregates(gpu::device_aggregate(cuda::upload(graph)), agg);
    expect_same_tentative(p, agg);
  }
}

TEST(DeviceSetupPhases, DirichletDofsAreLeftOut) {
  const Problem p = dirichlet_rows();
  const Aggregates agg = aggregate(strength_graph(p.a, p.nodes, 0.02));
  const gpu::DeviceAggregates d = gpu::device_aggregate(cuda::upload(strength_graph(p.a, p.nodes, 0.02)));
  const std::vector<std::int32_t> of_node = d.of_node.download();
  for (std::size_t i = 0; i < of_node.size(); i += 7) EXPECT_EQ(of_node[i], kNotAggregated) << "dof " << i;
  const TentativeProlongator t = expect_same_tentative(p, agg);
  EXPECT_EQ(t.p.row_length(0), 0);
  EXPECT_EQ(t.p.row_length(1), 1);
}

TEST(DeviceSetupPhases, BadInputIsAnInputError) {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:4"));
  const auto d = cuda::upload(a);
  const auto nodes = upload_nodes(uniform_nodes(a.rows, 1));
  const auto short_nodes = upload_nodes(uniform_nodes(a.rows - 4, 1));
  EXPECT_THROW(gpu::device_strength_graph(d, short_nodes.data(), a.rows - 4, 0.1), InputError);
  EXPECT_THROW(gpu::device_strength_graph(d, nodes.data(), a.rows, -0.5), InputError);
  const auto rect = cuda::upload(testing::random_csr({5, 7, 0.5}, 3));
  EXPECT_THROW(gpu::device_strength_graph(rect, nodes.data(), 5, 0.1), InputError);
  EXPECT_THROW(gpu::device_aggregate(rect), InputError);
  const Aggregates agg = aggregate(strength_graph(a, uniform_nodes(a.rows, 1), 0.1));
  cuda::DeviceBuffer<double> b(a.rows);
  EXPECT_THROW(gpu::device_tentative_prolongator(upload(agg), nodes.data(), a.rows, a.rows, b.data(), 0), InputError);
  EXPECT_THROW(gpu::device_tentative_prolongator(upload(agg), nodes.data(), a.rows, a.rows + 1, b.data(), 1), InputError);
}

}  // namespace
}  // namespace tessera::amg
