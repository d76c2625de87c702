// The distributed setup's host loops run on several threads a rank (local/core/host_ranges.hpp)
// and promise the one-thread result bit for bit. Here every rank builds the hierarchy with one
// thread and with three, with ranges of a few rows so that these small problems split, on a
// balanced and an uneven partition with an empty rank, 1-4 ranks; and a re-setup with new
// values on three threads equals the one-thread re-setup. Every block of every level is
// compared exactly (no tolerance): A, P_tent, P, R, aggregates, smoother, lambda_max. The
// AMG-preconditioned CG solve (products, the cycle's and CG's entry-wise updates, dots) on three
// threads gives the one-thread iterates bit for bit.
#include <cmath>
#include <functional>

#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "dist_amg_test_util.hpp"
#include "support/host_threads_scope.hpp"

namespace tessera::amg {
namespace {

using testing::Problem;

void expect_same_blocks(const dist::DistMatrix& got, const dist::DistMatrix& want, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.ghost_cols, want.ghost_cols);
  EXPECT_EQ(got.local, want.local);
  EXPECT_EQ(got.nonlocal, want.nonlocal);
}

void expect_identical(const DistHierarchy& got, const DistHierarchy& want) {
  ASSERT_EQ(got.levels.size(), want.levels.size());
  for (std::size_t l = 0; l < want.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    const DistLevel &g = got.levels[l], &w = want.levels[l];
    expect_same_blocks(g.a, w.a, "A");
    EXPECT_EQ(g.smoother.inv_diag, w.smoother.inv_diag);
    if (l + 1 == want.levels.size()) continue;
    EXPECT_EQ(g.aggregates.of_node, w.aggregates.of_node);
    EXPECT_EQ(g.eigen.safe, w.eigen.safe);
    expect_same_blocks(g.p_tent, w.p_tent, "P_tent");
    expect_same_blocks(g.p, w.p, "P");
    expect_same_blocks(g.r, w.r, "R");
  }
}

struct Solve {
  SolveResult result;
  std::vector<double> x;
};

// CG with `m` from x = 0 on b_i = 1 + sin(global row i) (every rank a different slice).
Solve solve(const dist::Communicator& comm, const dist::DistMatrix& a, const DistAmg& m) {
  std::vector<double> b(static_cast<std::size_t>(a.owned_rows()));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 + std::sin(double(a.row_begin() + std::int64_t(i)));
  Solve s{{}, std::vector<double>(b.size(), 0.0)};
  KrylovOptions o;
  o.rtol = 1e-10;
  o.history = true;
  s.result = dist_pcg(comm, a, b, s.x, m, o);
  return s;
}

void check(const std::string& spec, SmootherKind smoother) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(spec + ", seed " + std::to_string(seed));
  const Problem pb = testing::make_problem(spec);
  AmgOptions o;
  o.coarse_size = 40;
  o.smoother = smoother;
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows =
        testing::aligned_partition(comm, pb.a.rows, pb.near_null.block_size, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const NearNullSpace b = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
    auto one = tessera::testing::with_host_threads(1, [&] { return std::make_unique<DistAmg>(comm, a, b, o); });
    auto three = tessera::testing::with_host_threads(3, [&] { return std::make_unique<DistAmg>(comm, a, b, o); });
    ASSERT_GE(one->hierarchy().levels.size(), 3u) << "the test wants a real hierarchy";
    expect_identical(three->hierarchy(), one->hierarchy());

    const Solve by_one = tessera::testing::with_host_threads(1, [&] { return solve(comm, a, *one); });
    const Solve by_three = tessera::testing::with_host_threads(3, [&] { return solve(comm, a, *three); });
    ASSERT_EQ(by_one.result.status, SolveStatus::converged) << by_one.result.message;
    EXPECT_GE(by_one.result.iterations, 3) << "the test wants several iterations";
    EXPECT_EQ(by_three.result.iterations, by_one.result.iterations);
    EXPECT_EQ(by_three.result.history, by_one.result.history);
    EXPECT_EQ(by_three.x, by_one.x);

    // Re-setup with other values (same pattern): the numeric paths, threaded alike.
    dist::DistMatrix changed = a;
    for (std::size_t k = 0; k < changed.local.values.size(); ++k) changed.local.values[k] *= 1.0 + 1e-3 * double(k % 7);
    for (double& v : changed.nonlocal.values) v *= 1.0 + 2e-3;
    tessera::testing::with_host_threads(1, [&] { one->resetup(changed); return 0; });
    tessera::testing::with_host_threads(3, [&] { three->resetup(changed); return 0; });
    expect_identical(three->hierarchy(), one->hierarchy());
  }
}

TEST(DistHostThreads, Poisson7PointHierarchyIsTheOneThreadOne) { check("poisson3d:11", SmootherKind::chebyshev); }

TEST(DistHostThreads, ElasticityL1JacobiHierarchyIsTheOneThreadOne) {
  check("elasticity3d:6", SmootherKind::l1_jacobi);
}

}  // namespace
}  // namespace tessera::amg
