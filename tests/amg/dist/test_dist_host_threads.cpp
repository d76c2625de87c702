// The distributed setup's host loops run on several threads a rank (local/core/host_ranges.hpp)
// and promise the one-thread result bit for bit. Here every rank builds the hierarchy with one
// thread and with three, with ranges of a few rows so that these small problems split, on a
// balanced and an uneven partition with an empty rank, 1-4 ranks; and a re-setup with new
// values on three threads equals the one-thread re-setup. Every block of every level is
// compared exactly (no tolerance): A, P_tent, P, R, aggregates, smoother, lambda_max, and the
// filtered operator where filtered smoothing builds one. The AMG-preconditioned CG solve
// (products, the cycle's and CG's entry-wise updates, dots) on three threads gives the one-thread
// iterates bit for bit.
#include <cmath>
#include <functional>

#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/separate_kinds.hpp"
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
    ASSERT_EQ(g.filtered.has_value(), w.filtered.has_value());
    if (!w.filtered) continue;
    expect_same_blocks(g.filtered->a, w.filtered->a, "A_F");
    EXPECT_EQ(g.filtered->target, w.filtered->target);
    EXPECT_EQ(g.omega, w.omega);
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

void check(const Problem& pb, const AmgOptions& o) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(pb.spec + ", seed " + std::to_string(seed));
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

    // Re-setup with other values (same pattern): the numeric paths, threaded alike. D A D keeps A
    // symmetric positive definite, which a slender frame's operator loses to entry-wise noise of
    // this size.
    const auto d = [](std::int64_t global) { return 1.0 + 1e-3 * double(global % 7); };
    dist::DistMatrix changed = a;
    for (std::int64_t i = 0; i < a.owned_rows(); ++i) {
      const double di = d(a.row_begin() + i);
      for (std::int64_t k = a.local.row_ptr[i]; k < a.local.row_ptr[i + 1]; ++k)
        changed.local.values[k] *= di * d(a.col_begin() + a.local.col_idx[k]);
      for (std::int64_t k = a.nonlocal.row_ptr[i]; k < a.nonlocal.row_ptr[i + 1]; ++k)
        changed.nonlocal.values[k] *= di * d(a.ghost_cols[a.nonlocal.col_idx[k]]);
    }
    tessera::testing::with_host_threads(1, [&] { one->resetup(changed); return 0; });
    tessera::testing::with_host_threads(3, [&] { three->resetup(changed); return 0; });
    expect_identical(three->hierarchy(), one->hierarchy());
  }
}

void check(const std::string& spec, SmootherKind smoother) {
  AmgOptions o;
  o.coarse_size = 40;
  o.smoother = smoother;
  check(testing::make_problem(spec), o);
}

TEST(DistHostThreads, Poisson7PointHierarchyIsTheOneThreadOne) { check("poisson3d:11", SmootherKind::chebyshev); }

TEST(DistHostThreads, ElasticityL1JacobiHierarchyIsTheOneThreadOne) {
  check("elasticity3d:6", SmootherKind::l1_jacobi);
}

// Filtered prolongator smoothing (A_F's two passes over ranges of nodes and rows, its refresh) on
// a frame with its kinds of dof separated, where the strength graph drops the weak couplings.
TEST(DistHostThreads, FilteredSmoothingHierarchyIsTheOneThreadOne) {
  const gen::ProblemSpec spec = gen::parse_spec("frame2d:16:30");
  const Csr<double> a = without_cross_kind_couplings(gen::generate(spec), gen::block_size(spec));
  AmgOptions o;
  o.coarse_size = 40;
  o.filtered_smoothing = true;
  check(Problem{"frame2d:16:30 separated", a, constant_near_null_space(a.rows, 1)}, o);
}

}  // namespace
}  // namespace tessera::amg
