// The distributed lambda_max estimate on the ranks' GPUs (amg/cuda/dist_device_eigen_estimate.hpp)
// against the host one (dist_estimate_lambda_max) on the same partition: the same Gershgorin
// bound bit for bit (each row summed in the host's order, on the device), the same number of
// Lanczos steps, Ritz values equal to rounding (the dots and the SpMV sum in other orders) and
// the same on every rank, bit for bit;
// on balanced and uneven partitions with a rank owning no rows, Poisson, elasticity, a random
// symmetric positive definite matrix, a matrix with fewer rows than steps (an early stop), 1x1,
// 0x0 (no rows anywhere: all zeros, the host's), and zero steps; the device copy of A is kept
// in the slot between estimates and refreshed when stale, and the estimate reads 1 / a_ii from
// the slot where the inverse diagonal step left it there. Then the whole setup with it: a
// DistAmg whose estimates run on the GPUs builds the host's levels. A GPU on every rank, maybe
// shared (label gpu; exit 77 without); ctest runs it on both halo routes (peer and, as a
// variant, NCCL).
#include <limits>

#include "amg/cuda/dist_device_eigen_estimate.hpp"
#include "amg/cuda/dist_device_operator_check.hpp"
#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "support/random_matrix.hpp"
#include "dist_amg_test_util.hpp"
#include "graph_phase_cases.hpp"

namespace tessera::amg {
namespace {

constexpr double kRitzTolerance = 1e-12;  // relative; only summation orders differ

Vector inverse_diagonal(const dist::DistMatrix& a) {
  Vector d = owned_diagonal(a);
  for (double& x : d) x = 1.0 / x;
  return d;
}

/// `same_operator`: both estimated the same matrix, so the bound is bit for bit equal; otherwise
/// (a coarse level built from the other estimate's omega) to rounding.
void expect_same_estimate(const EigenEstimate& got, const EigenEstimate& want, bool same_operator = true) {
  if (same_operator)
    EXPECT_EQ(got.gershgorin, want.gershgorin);
  else
    EXPECT_NEAR(got.gershgorin, want.gershgorin, kRitzTolerance * want.gershgorin);
  EXPECT_EQ(got.steps, want.steps);
  EXPECT_NEAR(got.ritz, want.ritz, kRitzTolerance * std::abs(want.ritz));
  EXPECT_NEAR(got.safe, want.safe, kRitzTolerance * std::abs(want.safe));
}

/// Every rank holds the same estimate, bit for bit (they decide the same steps from it).
void expect_same_on_every_rank(const dist::Communicator& comm, const EigenEstimate& e) {
  EXPECT_EQ(comm.allreduce(e.ritz, dist::ReduceOp::min), comm.allreduce(e.ritz, dist::ReduceOp::max));
  EXPECT_EQ(comm.allreduce(std::int64_t(e.steps), dist::ReduceOp::min),
            comm.allreduce(std::int64_t(e.steps), dist::ReduceOp::max));
}

/// The operator of `build` (graph_phase_cases.hpp: node-aligned, built from the shared seed) on a
/// balanced and an uneven partition; `most_steps`: the steps an estimate may take at most
/// (fewer: it stopped early).
void check_estimates(const testing::GraphCaseBuilder& build, std::initializer_list<int> step_counts,
                     int most_steps = INT32_MAX) {
  const dist::Communicator comm;
  dist::gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  for (const bool uneven : {false, true}) {
    const testing::GraphCase c = build(comm, uneven, seed);
    SCOPED_TRACE(c.name + ", seed " + std::to_string(seed) +
                 (uneven ? ", uneven partition with an empty rank" : ", balanced partition"));
    const dist::DistMatrix& a = c.a;
    const Vector inv_diag = inverse_diagonal(a);
    DeviceOperatorSlot device_a;  // made by the first estimate, reused by the others
    const dist::gpu::DeviceDistMatrix* first_copy = nullptr;
    for (const int steps : step_counts) {
      SCOPED_TRACE("steps " + std::to_string(steps));
      const EigenEstimate want = dist_estimate_lambda_max(comm, a, inv_diag, steps, 1.1);
      const EigenEstimate got = gpu::dist_device_estimate_lambda_max(ctx, a, inv_diag, steps, 1.1, device_a);
      if (!first_copy) first_copy = device_a.matrix.get();
      EXPECT_TRUE(first_copy != nullptr && device_a.matrix.get() == first_copy) << "A's device copy was not kept";
      expect_same_estimate(got, want);
      expect_same_on_every_rank(comm, got);
      EXPECT_LE(got.steps, std::min(steps, most_steps));
      if (steps > 0) EXPECT_GT(want.ritz, 0.0) << "a positive definite operator";
    }
  }
}

TEST(DistDeviceEigenEstimate, Poisson7PointMatchesHost) {
  check_estimates(testing::generated("poisson3d:11"), {0, 1, 10, 20});
}

TEST(DistDeviceEigenEstimate, ElasticityMatchesHost) { check_estimates(testing::generated("elasticity3d:5"), {10}); }

// 4 rows, 10 steps: the recurrence meets an invariant subspace and stops early on every rank.
TEST(DistDeviceEigenEstimate, FewerRowsThanStepsStopsEarlyAlike) {
  check_estimates(testing::generated("poisson2d:2"), {10}, 4);
}

// 301 rows (not a multiple of 8), the matrix drawn from the shared seed as well as the partition:
// SPD on a random pattern (~6 entries a row, 10% of the rows empty), unlike a stencil's.
TEST(DistDeviceEigenEstimate, RandomSymmetricPositiveDefiniteMatchesHost) {
  check_estimates(
      [](const dist::Communicator& comm, bool uneven, std::uint64_t seed) {
        const Csr<double> pattern = tessera::testing::random_csr({301, 301, 6.0 / 301, 0.1}, seed);
        return testing::distributed_case(comm, "random SPD n=301", tessera::testing::diagonally_dominant_spd(pattern),
                                         1, uneven, seed);
      },
      {1, 10, 20});
}

// One row (diagonal 2), on one rank; the others own none. D^-1 A = [1]: one step, then an
// invariant subspace.
TEST(DistDeviceEigenEstimate, OneByOneMatchesHost) { check_estimates(testing::tiny(1), {0, 1, 10}, 1); }

// No rows on any rank: both estimates return before any step or copy, every field 0 (the
// Gershgorin bound of no rows is 0, dist_gershgorin_bound's contract).
TEST(DistDeviceEigenEstimate, EmptyOperatorEstimatesZero) {
  const dist::Communicator comm;
  dist::gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  for (const bool uneven : {false, true}) {
    const testing::GraphCase c = testing::tiny(0)(comm, uneven, seed);
    SCOPED_TRACE(c.name + ", seed " + std::to_string(seed) + (uneven ? ", uneven partition" : ", balanced partition"));
    const Vector inv_diag = inverse_diagonal(c.a);  // empty
    DeviceOperatorSlot device_a;
    for (const int steps : {0, 10}) {
      SCOPED_TRACE("steps " + std::to_string(steps));
      const EigenEstimate got = gpu::dist_device_estimate_lambda_max(ctx, c.a, inv_diag, steps, 1.1, device_a);
      expect_same_estimate(got, dist_estimate_lambda_max(comm, c.a, inv_diag, steps, 1.1));
      EXPECT_EQ(got.gershgorin, 0.0);
      EXPECT_EQ(got.ritz, 0.0);
      EXPECT_EQ(got.safe, 0.0);
      EXPECT_EQ(got.steps, 0);
    }
  }
}

// A stale copy (the host values changed and the slot was told) is refreshed before the estimate
// reads it: the estimate is the host one of the new values. Halving the off-diagonal entries
// moves lambda_max(D^-1 A) from about 2 to about 1.5, far beyond rounding.
TEST(DistDeviceEigenEstimate, StaleCopyIsRefreshedBeforeUse) {
  const dist::Communicator comm;
  dist::gpu::DeviceContext ctx(comm);
  const testing::Problem pb = testing::make_problem("poisson3d:11");
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const Vector inv_diag = inverse_diagonal(a);
  DeviceOperatorSlot device_a;
  const EigenEstimate before = gpu::dist_device_estimate_lambda_max(ctx, a, inv_diag, 10, 1.1, device_a);
  for (std::int64_t r = 0; r < a.owned_rows(); ++r)
    for (std::int64_t k = a.local.row_ptr[r]; k < a.local.row_ptr[r + 1]; ++k)
      if (a.local.col_idx[k] != r) a.local.values[k] *= 0.5;
  for (double& v : a.nonlocal.values) v *= 0.5;
  device_a.values_changed();
  const EigenEstimate want = dist_estimate_lambda_max(comm, a, inv_diag, 10, 1.1);
  const EigenEstimate got = gpu::dist_device_estimate_lambda_max(ctx, a, inv_diag, 10, 1.1, device_a);
  EXPECT_FALSE(device_a.stale);
  expect_same_estimate(got, want);
  EXPECT_LT(want.ritz, before.ritz - 0.2) << "the new values should move the estimate";
}

// With the level's 1 / a_ii divided on the device and kept in the slot, the estimate reads it
// there: NaN in the host vector's place changes nothing.
TEST(DistDeviceEigenEstimate, ReadsTheSlotsDeviceInverseDiagonal) {
  const dist::Communicator comm;
  dist::gpu::DeviceContext ctx(comm);
  const testing::Problem pb = testing::make_problem("poisson3d:11");
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const Vector inv_diag = inverse_diagonal(a);
  DeviceOperatorSlot device_a;
  // Not ASSERT: the estimates below are collective.
  EXPECT_EQ(gpu::dist_device_inverse_diagonal(comm, a, device_a, ctx.compute()), inv_diag);
  const Vector nan(inv_diag.size(), std::numeric_limits<double>::quiet_NaN());
  const EigenEstimate got = gpu::dist_device_estimate_lambda_max(ctx, a, nan, 10, 1.1, device_a);
  expect_same_estimate(got, dist_estimate_lambda_max(comm, a, inv_diag, 10, 1.1));
}

TEST(DistDeviceEigenEstimate, SetupWithDeviceEstimatesBuildsTheHostLevels) {
  const dist::Communicator comm;
  dist::gpu::DeviceContext ctx(comm);
  const testing::Problem pb = testing::make_problem("poisson3d:12");
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("uneven partition with an empty rank, seed " + std::to_string(seed));
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const NearNullSpace b = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
  AmgOptions o;
  o.coarse_size = 40;
  const DistAmg host(comm, a, b, o);
  DistAmg device(comm, a, b, o, {dist::host_local_spgemm, host_graph_phases, gpu::device_eigen_estimator(ctx)});
  device.resetup(a);  // a re-setup estimates again, on the same context
  const auto& want = host.hierarchy().levels;
  const auto& got = device.hierarchy().levels;
  ASSERT_GE(want.size(), 3u) << "the test wants a real hierarchy";
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t l = 0; l + 1 < want.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    expect_same_estimate(got[l].eigen, want[l].eigen, l == 0);
    EXPECT_EQ(dist::gather(comm, got[l].a).col_idx, dist::gather(comm, want[l].a).col_idx);
    const Csr<double> gp = dist::gather(comm, got[l].p), wp = dist::gather(comm, want[l].p);
    if (comm.rank() == 0) testing::expect_equal_to_rounding(gp, wp, "P");
  }
}

}  // namespace
}  // namespace tessera::amg
