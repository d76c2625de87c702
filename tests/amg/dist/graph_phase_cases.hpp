#pragma once
// The inputs of the distributed graph-phase tests (strength graph, cross-rank edges,
// aggregation; host and device): a distributed operator with its nodes, on a balanced and an
// uneven node-aligned partition with a rank owning no rows, at thresholds 0.02 (the default),
// 0.08, 0.25 and 0.
// The cases are the shapes that stress the cross-rank part of the graph:
//   - Poisson 7/27-point and elasticity with 3-dof nodes (symmetric patterns);
//   - a random matrix with a structurally unsymmetric pattern, 1- and 2-dof nodes: an edge kept
//     in one direction only must reach the other end's owner;
//   - isolated nodes (a diagonal only, an empty row, a zero diagonal with off-diagonals);
//   - a power-law SPD matrix (R-MAT, scalar nodes): hub rows of hundreds of entries beside rows
//     coupled to nothing;
//   - nodes of mixed sizes (1-4 dofs), and a coarse level of the elasticity hierarchy (nodes of
//     6 dofs, one per aggregate, on the partition the aggregates gave);
//   - 1x1 and 0x0 operators;
//   - any of them scaled past the range of plain squares (2^700, 1e-200).
// Also the serial reference: the gathered operator's strength_graph() on rank 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/dist/dist_strength.hpp"
#include "amg/strength.hpp"
#include "dist_amg_test_util.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg::testing {

struct GraphCase {
  std::string name;
  dist::DistMatrix a;
  DistNodes nodes;
};

/// Builds a case on every rank from the shared seed; `uneven` picks the partition with an
/// empty rank.
using GraphCaseBuilder = std::function<GraphCase(const dist::Communicator&, bool uneven, std::uint64_t seed)>;

inline GraphCase distributed_case(const dist::Communicator& comm, const std::string& name, const Csr<double>& a,
                                  int block_size, bool uneven, std::uint64_t seed) {
  const dist::RowPartition rows = aligned_partition(comm, a.rows, block_size, uneven, seed);
  dist::DistMatrix d = dist::testing::distribute(comm, a, rows, rows);
  DistNodes nodes = uniform_dist_nodes(comm, d, block_size);
  return {name, std::move(d), std::move(nodes)};
}

/// A generated problem ("poisson3d:7", "elasticity3d:4", ...) with its natural block size.
inline GraphCaseBuilder generated(const std::string& spec) {
  return [spec](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
    const gen::ProblemSpec s = gen::parse_spec(spec);
    return distributed_case(comm, spec, gen::generate(s), gen::block_size(s), uneven, seed);
  };
}

/// Random off-diagonal entries (density ~4%, each direction drawn independently, so the pattern
/// is structurally unsymmetric) plus a diagonal in [1, 2).
inline Csr<double> unsymmetric_random(std::int64_t n, std::uint64_t seed) {
  const Csr<double> off = tessera::testing::random_csr(tessera::testing::RandomSpec{n, n, 0.04}, seed);
  const std::vector<double> diagonal = tessera::testing::random_values(n, seed + 1);
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) {
    r.push_back(i);
    c.push_back(i);
    v.push_back(1.5 + 0.5 * diagonal[i]);
    for (std::int64_t k = off.row_ptr[i]; k < off.row_ptr[i + 1]; ++k)
      if (off.col_idx[k] != i) {
        r.push_back(i);
        c.push_back(off.col_idx[k]);
        v.push_back(off.values[k]);
      }
  }
  return csr_from_triplets<double>(n, n, r, c, v);
}

inline GraphCaseBuilder unsymmetric(std::int64_t n, int block_size) {
  return [n, block_size](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
    return distributed_case(comm, "unsymmetric random n=" + std::to_string(n) + " bs=" + std::to_string(block_size),
                            unsymmetric_random(n, seed), block_size, uneven, seed);
  };
}

/// tessera::testing::power_law_spd(scale, edge_factor) on the shared seed, scalar nodes: 2^scale
/// rows; rmat:10:8 has hub rows of ~350 entries and ~20% of its rows coupled to nothing.
inline GraphCaseBuilder power_law(int scale, int edge_factor) {
  return [scale, edge_factor](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
    const std::string name = "power-law SPD rmat:" + std::to_string(scale) + ":" + std::to_string(edge_factor);
    return distributed_case(comm, name, tessera::testing::power_law_spd(scale, edge_factor, seed), 1, uneven, seed);
  };
}

/// `a` with its values (local and non-local blocks) times `factor`.
inline dist::DistMatrix times(dist::DistMatrix a, double factor) {
  for (double& v : a.local.values) v *= factor;
  for (double& v : a.nonlocal.values) v *= factor;
  return a;
}

/// `build`'s case with its values times `factor` (1e-200, 2^700: past the range of plain squares),
/// `label` appended to its name.
inline GraphCaseBuilder scaled(GraphCaseBuilder build, double factor, std::string label) {
  return [build = std::move(build), factor, label = std::move(label)](const dist::Communicator& comm, bool uneven,
                                                                       std::uint64_t seed) {
    GraphCase c = build(comm, uneven, seed);
    return GraphCase{c.name + " " + label, times(std::move(c.a), factor), std::move(c.nodes)};
  };
}

/// An unsymmetric random matrix where every 5th row (from 2) keeps its diagonal only, every 5th
/// (from 4) is empty, and every 5th (from 0) loses its diagonal; the first two kinds lose their
/// columns too (isolated nodes), the third keeps them (zero own norm: no strong edge either way).
inline Csr<double> with_isolated_nodes(std::int64_t n, std::uint64_t seed) {
  const Csr<double> a = unsymmetric_random(n, seed);
  const auto isolated = [](std::int64_t i) { return i % 5 == 2 || i % 5 == 4; };
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t j = a.col_idx[k];
      const bool keep = i == j ? i % 5 != 4 && i % 5 != 0 : !isolated(i) && !isolated(j);
      if (!keep) continue;
      r.push_back(i);
      c.push_back(j);
      v.push_back(a.values[k]);
    }
  return csr_from_triplets<double>(n, n, r, c, v);
}

inline GraphCaseBuilder isolated_nodes(std::int64_t n) {
  return [n](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
    return distributed_case(comm, "isolated nodes and empty rows n=" + std::to_string(n), with_isolated_nodes(n, seed),
                            1, uneven, seed);
  };
}

/// The unsymmetric random matrix with nodes of 1 to 4 dofs (random sizes per rank, filling its
/// rows exactly): node blocks of mixed shapes, as on coarse levels where aggregates differ.
inline GraphCaseBuilder mixed_node_sizes(std::int64_t n) {
  return [n](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
    const dist::RowPartition rows = aligned_partition(comm, n, 1, uneven, seed);
    dist::DistMatrix a = dist::testing::distribute(comm, unsymmetric_random(n, seed), rows, rows);
    std::mt19937_64 rng(seed + 7 + static_cast<std::uint64_t>(comm.rank()));
    std::vector<std::int64_t> sizes;
    for (std::int64_t left = a.owned_rows(); left > 0; left -= sizes.back())
      sizes.push_back(std::min<std::int64_t>(left, 1 + static_cast<std::int64_t>(rng() % 4)));
    DistNodes nodes = dist_nodes_from_sizes(comm, sizes);
    return GraphCase{"nodes of 1-4 dofs, n=" + std::to_string(n), std::move(a), std::move(nodes)};
  };
}

/// n x n, diagonal 2 (n = 0 or 1: a rank owns at most one row).
inline GraphCaseBuilder tiny(std::int64_t n) {
  return [n](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
    std::vector<std::int64_t> idx;
    for (std::int64_t i = 0; i < n; ++i) idx.push_back(i);
    const Csr<double> a = csr_from_triplets<double>(n, n, idx, idx, std::vector<double>(idx.size(), 2.0));
    return distributed_case(comm, std::to_string(n) + "x" + std::to_string(n), a, 1, uneven, seed);
  };
}

/// Level 1 of the distributed hierarchy of `spec`: the coarse nodes (one per aggregate, of the
/// tentative prolongator's column count) on the partition the aggregates gave.
inline GraphCaseBuilder coarse_level(const std::string& spec) {
  return [spec](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
    const Problem pb = make_problem(spec);
    const dist::RowPartition rows = aligned_partition(comm, pb.a.rows, pb.near_null.block_size, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    AmgOptions options;
    options.coarse_size = 40;
    const DistAmg amg(comm, a, owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())), options);
    const DistLevel& level = amg.hierarchy().levels.at(1);
    return GraphCase{spec + " level 1", level.a, level.nodes};
  };
}

/// A rank's near-null rows for the tentative-prolongator tests: the constant vector for k = 1,
/// else values in [-1, 1) (so aggregates with fewer dofs than k are rank-deficient blocks).
inline DenseMatrix near_null_rows(std::int64_t rows, int k, std::uint64_t seed) {
  DenseMatrix b(rows, k, Layout::row_major, 1.0);
  if (k == 1) return b;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (double& v : b.data) v = value(gen);
  return b;
}

inline std::vector<double> thresholds() { return {0.02, 0.08, 0.25, 0.0}; }

/// check(graph_case, theta) on both partitions and every threshold, inside SCOPED_TRACEs.
template <class Check>
void for_each_partition_and_theta(const dist::Communicator& comm, const GraphCaseBuilder& build, Check&& check) {
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  for (const bool uneven : {false, true}) {
    const GraphCase c = build(comm, uneven, seed);
    SCOPED_TRACE(c.name + ", seed " + std::to_string(seed) +
                 (uneven ? ", uneven partition with an empty rank" : ", balanced partition"));
    for (const double theta : thresholds()) {
      SCOPED_TRACE("theta " + std::to_string(theta));
      check(c, theta);
    }
  }
}

/// The bits of a double: "bitwise equal" compares these (== would accept -0 for +0).
inline std::vector<std::uint64_t> bits(const double* first, const double* last) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(last - first));
  if (!out.empty()) std::memcpy(out.data(), first, out.size() * sizeof(double));
  return out;
}

template <class Allocator>
std::vector<std::uint64_t> bits(const std::vector<double, Allocator>& v) {
  return bits(v.data(), v.data() + v.size());
}

/// One graph row: global column nodes and strength values.
struct GraphRow {
  std::vector<std::int64_t> node;
  std::vector<double> strength;
};

inline GraphRow row_of(const RowBlock& rows, std::int64_t r) {
  GraphRow out;
  for (std::int64_t p = rows.row_ptr[r]; p < rows.row_ptr[r + 1]; ++p) {
    out.node.push_back(rows.col[p]);
    out.strength.push_back(rows.values[p]);
  }
  return out;
}

/// Same columns, bitwise equal values; false (and a failure) otherwise, so that callers stop at
/// the first bad row instead of reporting thousands.
inline bool expect_same_row(const GraphRow& got, const GraphRow& want, const std::string& what) {
  EXPECT_EQ(got.node, want.node) << what;
  EXPECT_EQ(bits(got.strength), bits(want.strength)) << what;
  return got.node == want.node && bits(got.strength) == bits(want.strength);
}

/// The global node layout (rank 0; others get an empty one): every rank's node sizes in order.
inline NodeLayout gathered_node_layout(const dist::Communicator& comm, const DistNodes& nodes) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t n = 0; n < nodes.count(); ++n) sizes.push_back(nodes.ptr[n + 1] - nodes.ptr[n]);
  const std::vector<std::int64_t> all = comm.gatherv(sizes, 0);
  NodeLayout layout{0};
  for (std::int64_t s : all) layout.push_back(layout.back() + s);
  return layout;
}

/// One block of a graph: same pattern, values bitwise (`exact`) or to 1e-14 of themselves.
inline void expect_same_block(const Csr<double>& got, const Csr<double>& want, bool exact, const std::string& what) {
  EXPECT_EQ(got.row_ptr, want.row_ptr) << what;
  EXPECT_EQ(got.col_idx, want.col_idx) << what;
  if (exact || got.values.size() != want.values.size()) {
    EXPECT_EQ(bits(got.values), bits(want.values)) << what;
    return;
  }
  for (std::size_t k = 0; k < want.values.size(); ++k)
    if (!(std::fabs(got.values[k] - want.values[k]) <= 1e-14 * want.values[k])) {
      EXPECT_NEAR(got.values[k], want.values[k], 1e-14 * want.values[k]) << what << ", entry " << k;
      return;
    }
}

/// The strength rule sees A only up to scale (amg/strength_rule.hpp): on every partition and
/// theta, dist_strength_graph of `build`'s case times `factor` is the unscaled case's graph,
/// bitwise where `factor` is a power of two (exact), else to rounding. Plain squares overflowed
/// or vanished there, and every graph (serial, distributed, device) lost its edges alike, which
/// the comparisons of one with another cannot see. Collective.
inline void expect_graph_ignores_scale(const GraphCaseBuilder& build, double factor) {
  const dist::Communicator comm;
  int exponent = 0;
  const bool exact = std::frexp(factor, &exponent) == 0.5;
  std::int64_t edges = 0;
  for_each_partition_and_theta(comm, build, [&](const GraphCase& c, double theta) {
    const dist::DistMatrix want = dist_strength_graph(comm, c.a, c.nodes, theta);
    const dist::DistMatrix got = dist_strength_graph(comm, times(c.a, factor), c.nodes, theta);
    EXPECT_EQ(got.ghost_cols, want.ghost_cols) << "rank " << comm.rank();
    expect_same_block(got.local, want.local, exact, "local block, rank " + std::to_string(comm.rank()));
    expect_same_block(got.nonlocal, want.nonlocal, exact, "non-local block, rank " + std::to_string(comm.rank()));
    edges += want.nnz();
  });
  EXPECT_GT(comm.allreduce(edges, dist::ReduceOp::sum), 0) << "no edge: nothing to keep";
}

}  // namespace tessera::amg::testing
