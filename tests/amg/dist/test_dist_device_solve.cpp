// The distributed device AMG solve phase (DistDeviceAmgPreconditioner, dist_device_pcg)
// against the host distributed solve on the same DistHierarchy, 1-4 ranks (one GPU each), on a
// balanced partition and an uneven one where a rank owns no rows:
//   - one preconditioner application: z equal to DistAmg::apply's to 1e-10 (relative to max|z|);
//   - PCG from 0 on b = A x*: converged, iterations within +-1 of dist_pcg's, the same on every
//     rank, and the true residual recomputed on the host from the downloaded x;
//   - bad input (non-finite b, rtol <= 0, rectangular operator) throws on every rank;
//   - FGMRES on a non-symmetric operator (convdiff3d) against dist_fgmres, likewise;
//   - a breakdown (M = -I; a NaN from one rank's preconditioner) stops every rank at the same
//     iteration, with the last valid iterate;
//   - on a hierarchy set up with the GPU graph phases and eigenvalue estimates, the
//     preconditioner shares the levels' device copies of A, and a re-setup refreshes them;
//   - after re-setups with other values, refresh_values() makes the application the host
//     cycle's on those values again (eager and as a CUDA graph).
// Poisson 7-point (Chebyshev, V and W cycles), 27-point with l1-Jacobi, elasticity with rigid-
// body modes, and a hierarchy whose coarsest level is smoothed instead of factored.
// The coarsest level is solved on every GPU (cuSOLVER Cholesky of the gathered operator, rhs
// gathered through NCCL) while DistAmg solves it on the host (DenseCoarseSolver): the 1e-10 is
// not a bit-exact bound. Both factorisations are backward stable, so their solutions differ by
// O(n_c * eps * cond(A_c)) relative (test_amg_device_coarse_gpu bounds the device solve
// against the host at 1e-10 on a 343-row 27-point operator); on these coarsest levels (3 to
// 114 rows, cond(A_c) well below 1e3) that is < 1e-12, far inside the tolerance. The uneven partition
// leaves a rank with no rows on every level: it owns no coarse rows and still joins the gather.
// Each case runs twice: every level cycled across the ranks, each step launched from the host;
// and levels 1 and coarser replicated on every GPU (replicated_levels.hpp; W-cycles never
// replicate) with the cycle replayed as a CUDA graph from the PCG's second iteration on. Both
// are held to the same host application and convergence.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>

#include "amg/cuda/device_fgmres.hpp"
#include "amg/cuda/device_operator_slot.hpp"
#include "amg/cuda/device_setup_backend.hpp"
#include "amg/cuda/dist_device_amg.hpp"
#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/cuda/device_spmv.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/spmv.hpp"
#include "dist_amg_test_util.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/vector_ops.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::amg {
namespace {

using testing::Problem;
using tessera::cuda::DeviceBuffer;

/// The cycle's CUDA graph state `capturable_state` ("replayed", "not yet captured") on a
/// transport that can be captured; on the host-staged one (ranks sharing a GPU) the graph stays
/// off and every call runs the cycle eagerly, which the same value checks then test.
std::string graph_state(const dist::gpu::DeviceContext& ctx, const std::string& capturable_state) {
  return ctx.transport().capturable() ? capturable_state : std::string("off (") + ctx.transport().name() + " transport)";
}

AmgOptions small_coarse(SmootherKind smoother = SmootherKind::chebyshev, CycleKind cycle = CycleKind::v) {
  AmgOptions o;
  o.coarse_size = 40;  // several levels on these small problems
  o.smoother = smoother;
  o.cycle = cycle;
  return o;
}


Vector owned_slice(const Vector& global, const dist::DistMatrix& a) {
  const auto first = global.begin() + a.row_begin();
  return Vector(first, first + a.owned_rows());
}

double global_max_abs(const dist::Communicator& comm, const Vector& v) {
  double m = 0;
  for (const double x : v) m = std::max(m, std::fabs(x));
  return comm.allreduce(m, dist::ReduceOp::max);
}

/// dz = device(dr), dz poisoned first (every call must write all of it); the entries off
/// `z_host` by more than 1e-10 `scale`, over all ranks (NaN counts: !(NaN <= bound)).
std::int64_t application_entries_off(const dist::Communicator& comm, dist::gpu::DeviceContext& ctx,
                                     gpu::DistDeviceAmgPreconditioner& device, const DeviceBuffer<double>& dr,
                                     DeviceBuffer<double>& dz, const Vector& z_host, double scale) {
  dz.fill_bytes(0xff, ctx.compute());
  device.apply(dr.data(), dz.data());
  const Vector z = dz.download(ctx.compute());
  std::int64_t off = 0;
  for (std::size_t i = 0; i < z.size(); ++i) off += !(std::fabs(z[i] - z_host[i]) <= 1e-10 * scale);
  return comm.allreduce(off, dist::ReduceOp::sum);
}

/// ||b - A x|| / ||b|| with the host distributed product.
double host_relative_residual(const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& b,
                              const Vector& x) {
  dist::DistVector input{x, {}};
  Vector ax(b.size());
  dist::spmv(comm, a, input, ax);
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) rr += (b[i] - ax[i]) * (b[i] - ax[i]), bb += b[i] * b[i];
  rr = comm.allreduce(rr, dist::ReduceOp::sum), bb = comm.allreduce(bb, dist::ReduceOp::sum);
  return std::sqrt(rr / bb);
}

void expect_same_application(const dist::Communicator& comm, dist::gpu::DeviceContext& ctx, const DistAmg& host,
                             gpu::DistDeviceAmgPreconditioner& device, const dist::DistMatrix& a, std::uint64_t seed) {
  const Vector r = owned_slice(tessera::testing::random_values(a.global_rows(), seed), a);
  Vector z_host;
  host.apply(r, z_host);
  DeviceBuffer<double> dr(r.size(), ctx.compute()), dz(r.size(), ctx.compute());
  dr.upload(r, ctx.compute());
  device.apply(dr.data(), dz.data());
  const Vector z_device = dz.download(ctx.compute());
  EXPECT_EQ(z_device.size(), z_host.size());  // not ASSERT: the reductions below are collective
  const double scale = global_max_abs(comm, z_host);
  ASSERT_GT(scale, 0);
  double worst = 0;
  for (std::size_t i = 0; i < std::min(z_host.size(), z_device.size()); ++i)
    worst = std::max(worst, std::fabs(z_device[i] - z_host[i]));
  EXPECT_LE(comm.allreduce(worst, dist::ReduceOp::max), 1e-10 * scale) << "device z differs from DistAmg::apply";
}

void expect_same_convergence(const dist::Communicator& comm, dist::gpu::DeviceContext& ctx, const DistAmg& host,
                             gpu::DistDeviceAmgPreconditioner& device, const Problem& pb, const dist::DistMatrix& a,
                             std::uint64_t seed) {
  Vector b_global(std::size_t(pb.a.rows));
  ref::spmv(1.0, pb.a, tessera::testing::random_values(std::int64_t(b_global.size()), seed + 1), 0.0, b_global);
  const Vector b = owned_slice(b_global, a);
  Vector x_host(b.size(), 0.0);
  const SolveResult want = dist_pcg(comm, a, b, x_host, host, KrylovOptions{});
  ASSERT_TRUE(want.converged()) << want.message;

  // The PCG multiplies by the preconditioner's level 0, A itself (no second upload).
  dist::gpu::DeviceDistMatrix& da = device.fine_operator();
  EXPECT_EQ(da.owned_rows(), a.owned_rows());
  EXPECT_EQ(da.local.nnz + da.nonlocal.nnz, a.nnz());
  // The solve below is collective and reads A on the device: a wrong copy on one rank fails every rank at once.
  const bool same_a = da.owned_rows() == a.owned_rows() && da.local.nnz + da.nonlocal.nnz == a.nnz();
  ASSERT_EQ(comm.allreduce(std::int64_t(same_a), dist::ReduceOp::min), 1) << "a rank's device A is not its A";
  DeviceBuffer<double> db(b.size(), ctx.compute()), dx(b.size(), ctx.compute());
  db.upload(b, ctx.compute());
  tessera::cuda::zero(std::int64_t(b.size()), dx.data(), ctx.compute());
  const auto m = [&](const double* r, double* z) { device.apply(r, z); };
  const SolveResult got = gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), m, KrylovOptions{});
  EXPECT_TRUE(got.converged()) << got.message;
  EXPECT_LE(got.relative_residual, 1e-8);
  EXPECT_LE(std::abs(got.iterations - want.iterations), 1)
      << "host " << want.iterations << ", device " << got.iterations;
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, got.iterations));
  const Vector x = dx.download(ctx.compute());
  EXPECT_LE(host_relative_residual(comm, a, b, x), 2e-8) << "true residual of the downloaded solution";
}

/// Where the host factors the coarsest level by Cholesky (SPD: every problem here, unless an
/// aggregate too small for its near-null vectors made A_c singular) or solves it as a diagonal
/// (bcsstm05), every GPU factors it with cuSOLVER's Cholesky; a smoothed level says so. With the
/// uneven partition on 2+ ranks some rank owns no coarse rows (the case to exercise).
void expect_coarse_path(const dist::Communicator& comm, const DistHierarchy& h,
                        const gpu::DistDeviceAmgPreconditioner& device, bool uneven, bool inverse_expected) {
  if (!h.coarse_direct) {
    EXPECT_FALSE(device.coarse_on_device());
    EXPECT_EQ(device.coarse_method(), "smoothed");
    return;
  }
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, std::int64_t(device.coarse_on_device())));
  if (h.coarse.method() == "cholesky" || h.coarse.method() == "diagonal") {
    EXPECT_TRUE(device.coarse_on_device());
    // A small Poisson coarse operator is well conditioned: its explicit inverse passes the test.
    // Another may keep the factor (the real matrices), never anything but Cholesky.
    const std::string cholesky = "cholesky (cuSOLVER)";
    if (inverse_expected)
      EXPECT_EQ(device.coarse_method(), cholesky + gpu::DeviceCoarseSolver::kAppliedAsInverse);
    else
      EXPECT_EQ(device.coarse_method().rfind(cholesky, 0), 0u) << device.coarse_method();
  } else {
    ADD_FAILURE() << "the host coarse solve is " << h.coarse.method() << ", device " << device.coarse_method()
                  << ": the test wants an SPD coarse operator";
  }
  // Every rank holds the whole coarsest operator the device factored: the gathered matrix itself.
  const Csr<double> whole = dist::gather(comm, h.levels.back().a);
  if (comm.rank() == 0) {
    EXPECT_EQ(h.coarse_operator.rows, whole.rows);
    EXPECT_EQ(h.coarse_operator.row_ptr, whole.row_ptr);
    EXPECT_EQ(h.coarse_operator.col_idx, whole.col_idx);
    EXPECT_EQ(h.coarse_operator.values, whole.values);
  }
  EXPECT_EQ(h.coarse_operator.rows, h.levels.back().a.global_rows());
  const std::int64_t fewest = comm.allreduce(h.levels.back().a.owned_rows(), dist::ReduceOp::min);
  if (uneven && comm.size() >= 2) EXPECT_EQ(fewest, 0) << "no rank without coarse rows: the case is not exercised";
}

/// What a case expects of its hierarchy: the coarsest level factored (or smoothed), its explicit
/// inverse kept on the device (a well-conditioned coarse operator), and at least so many levels.
struct Expected {
  bool direct_coarse = true;
  bool coarse_inverse = true;
  std::size_t min_levels = 3;
};

void check_problem(const Problem& pb, const AmgOptions& options, const Expected& expected) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(pb.spec + ", seed " + std::to_string(seed));
  dist::gpu::DeviceContext ctx(comm);
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, pb.near_null.block_size, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const DistAmg host(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                       options);
    ASSERT_GE(host.hierarchy().levels.size(), expected.min_levels) << "the test wants a real hierarchy";
    ASSERT_EQ(host.hierarchy().coarse_direct, expected.direct_coarse);
    // Every level cycled across the ranks with each step launched from the host, then levels 1
    // and coarser replicated on every GPU with the cycle replayed as a CUDA graph.
    // Level 1 may hold more entries than A (1138_bus: a power network's sparse graph coarsens into
    // denser rows), and replication starts at the first level under the bound.
    const std::int64_t level1_nnz = host.statistics().levels[1].nnz;
    for (const bool replicate_and_graph : {false, true}) {
      // Replicated from level 1 on, or not at all.
      const std::int64_t replicate_nnz = replicate_and_graph ? std::max(pb.a.nnz(), level1_nnz) : 0;
      SCOPED_TRACE(replicate_and_graph ? "replicated levels, CUDA graph" : "all levels distributed, no graph");
      gpu::DistDeviceAmgPreconditioner device(ctx, host.hierarchy(), replicate_nnz);
      device.set_cuda_graph(replicate_and_graph);
      const bool w_cycle = options.cycle == CycleKind::w;
      EXPECT_EQ(device.first_replicated(), replicate_nnz == 0 || w_cycle ? host.hierarchy().levels.size() : 1u);
      EXPECT_EQ(device.rows(), a.owned_rows());
      expect_coarse_path(comm, host.hierarchy(), device, uneven, expected.coarse_inverse);
      EXPECT_GT(comm.allreduce(device.device_bytes(), dist::ReduceOp::sum), 0);
      expect_same_application(comm, ctx, host, device, a, seed);
      expect_same_convergence(comm, ctx, host, device, pb, a, seed);
      // Every case here solves its coarsest level on the GPUs (or smooths it): capturable.
      EXPECT_EQ(device.cuda_graph_state(), replicate_and_graph ? graph_state(ctx, "replayed") : "off");
    }
  }
}

void check_problem(const std::string& spec, const AmgOptions& options, bool expect_direct_coarse = true) {
  check_problem(testing::make_problem(spec), options, Expected{expect_direct_coarse});
}

TEST(DistDeviceAmgSolve, Poisson7PointChebyshevMatchesHost) { check_problem("poisson3d:13", small_coarse()); }

TEST(DistDeviceAmgSolve, Poisson7PointWCycleMatchesHost) {
  check_problem("poisson3d:11", small_coarse(SmootherKind::chebyshev, CycleKind::w));
}

TEST(DistDeviceAmgSolve, Poisson27PointL1JacobiMatchesHost) {
  check_problem("poisson3d27:11", small_coarse(SmootherKind::l1_jacobi));
}

TEST(DistDeviceAmgSolve, ElasticityRigidBodyModesMatchesHost) { check_problem("elasticity3d:6", small_coarse()); }

TEST(DistDeviceAmgSolve, PlaneElasticityRigidBodyModesMatchesHost) {
  check_problem("elasticity2d:13", small_coarse());
}

// Real SPD matrices (../shared/matrices): power networks, a finite-element graph, Laplacians
// read from files and a mass matrix, scalar nodes. The stiffness matrices of
// test_dist_hierarchy's list stay out: the 1e-10 of these comparisons holds for well-conditioned
// coarse operators (the header's bound), and their A's condition numbers reach ~1e7 (bcsstk08).
TEST(DistDeviceAmgSolve, SuiteSparseSpdMatricesMatchHost) {
  const std::vector<std::string> names{"1138_bus", "494_bus", "662_bus", "gr_30_30", "lap2D_5pt_n100",
                                       "lap3D_7pt_n20", "bcsstm07"};
  const std::vector<Problem> problems = testing::file_problems(names);
  ASSERT_EQ(problems.size(), names.size()) << "matrices missing from " << ::tessera::testing::matrix_dir();
  Expected expected;
  expected.coarse_inverse = false;  // kept or not, as the inverse's own test decides
  expected.min_levels = 2;
  for (const Problem& pb : problems) check_problem(pb, small_coarse(), expected);
}

TEST(DistDeviceAmgSolve, HundredRowCoarsestLevelMatchesHost) {
  AmgOptions o = small_coarse();
  o.max_levels = 3;  // stops above coarse_size: 114 coarse rows spread over the ranks, factored
  check_problem("poisson3d:32", o);
}

// A non-symmetric operator: the device FGMRES (dist_device_fgmres) against the host one
// (dist_fgmres) on the same hierarchy, every level distributed and launched from the host, then
// replicated levels with the cycle as a CUDA graph (FGMRES hands the preconditioner the same two
// vectors every iteration, so the graph replays). Bad input throws on every rank.
TEST(DistDeviceAmgSolve, ConvectionDiffusionFgmresMatchesHost) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("convdiff3d:13, seed " + std::to_string(seed));
  const Problem pb = testing::make_problem("convdiff3d:13");
  dist::gpu::DeviceContext ctx(comm);
  Vector b_global(std::size_t(pb.a.rows));
  ref::spmv(1.0, pb.a, tessera::testing::random_values(std::int64_t(b_global.size()), seed + 1), 0.0, b_global);
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const DistAmg host(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                       small_coarse());
    ASSERT_GE(host.hierarchy().levels.size(), 3u) << "the test wants a real hierarchy";
    const Vector b = owned_slice(b_global, a);
    Vector x_host(b.size(), 0.0);
    const SolveResult want = dist_fgmres(comm, a, b, x_host, host, KrylovOptions{});
    ASSERT_TRUE(want.converged()) << want.message;
    for (const bool replicate_and_graph : {false, true}) {
      SCOPED_TRACE(replicate_and_graph ? "replicated levels, CUDA graph" : "all levels distributed, no graph");
      gpu::DistDeviceAmgPreconditioner device(ctx, host.hierarchy(), replicate_and_graph ? pb.a.nnz() : 0);
      device.set_cuda_graph(replicate_and_graph);
      EXPECT_TRUE(dist::testing::same_on_every_rank(comm, std::int64_t(device.coarse_on_device())));
      expect_same_application(comm, ctx, host, device, a, seed);
      dist::gpu::DeviceDistMatrix& da = device.fine_operator();
      DeviceBuffer<double> db(b.size(), ctx.compute()), dx(b.size(), ctx.compute());
      db.upload(b, ctx.compute());
      tessera::cuda::zero(std::int64_t(b.size()), dx.data(), ctx.compute());
      const auto m = [&](const double* r, double* z) { device.apply(r, z); };
      KrylovOptions history;
      history.history = true;
      const SolveResult got = gpu::dist_device_fgmres(ctx, da, db.data(), dx.data(), m, history);
      EXPECT_TRUE(got.converged()) << got.message;
      EXPECT_LE(got.relative_residual, 1e-8);
      EXPECT_LE(std::abs(got.iterations - want.iterations), 1)
          << "host " << want.iterations << ", device " << got.iterations;
      EXPECT_EQ(got.history.size(), std::size_t(got.iterations));
      EXPECT_TRUE(dist::testing::same_on_every_rank(comm, got.iterations));
      EXPECT_LE(host_relative_residual(comm, a, b, dx.download(ctx.compute())), 2e-8)
          << "true residual of the downloaded solution";
      if (device.coarse_on_device())
        EXPECT_EQ(device.cuda_graph_state(), replicate_and_graph ? graph_state(ctx, "replayed") : "off");

      KrylovOptions no_restart;
      no_restart.restart = 0;
      EXPECT_THROW(gpu::dist_device_fgmres(ctx, da, db.data(), dx.data(), m, no_restart), InputError);
      Vector bad = b;
      if (!bad.empty() && comm.rank() == comm.size() - 1) bad.back() = std::nan("");
      if (a.owned_rows() > 0) db.upload(bad, ctx.compute());
      const std::int64_t poisoned = comm.allreduce(std::int64_t(bad != b), dist::ReduceOp::sum);
      if (poisoned > 0) EXPECT_THROW(gpu::dist_device_fgmres(ctx, da, db.data(), dx.data(), m, KrylovOptions{}), InputError);
    }
  }
}

/// poisson3d:14 on a balanced or uneven partition, its host hierarchy, a random r and the host's
/// z = M r; device buffers for r and z that stay the same call after call (a captured graph
/// replays only on the vectors it was captured on). The graph and timeline tests run device
/// preconditioners that replicate from level 2 on against it.
struct Level2Case {
  Level2Case(const dist::Communicator& comm, dist::gpu::DeviceContext& ctx, bool uneven, std::uint64_t seed)
      : comm(comm),
        ctx(ctx),
        pb(testing::make_problem("poisson3d:14")),
        rows(testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed)),
        a(dist::testing::distribute(comm, pb.a, rows, rows)),
        host(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
             small_coarse()),
        r(owned_slice(tessera::testing::random_values(a.global_rows(), seed), a)),
        dr(r.size(), ctx.compute()),
        dz(r.size(), ctx.compute()) {
    host.apply(r, z_host);
    scale = global_max_abs(comm, z_host);
    dr.upload(r, ctx.compute());
  }

  std::int64_t level_nnz(std::size_t l) const { return comm.allreduce(host.hierarchy().levels[l].a.nnz(), dist::ReduceOp::sum); }

  /// z = device(r) against the host's z (application_entries_off).
  std::int64_t entries_off(gpu::DistDeviceAmgPreconditioner& device) {
    return application_entries_off(comm, ctx, device, dr, dz, z_host, scale);
  }

  const dist::Communicator& comm;
  dist::gpu::DeviceContext& ctx;
  const Problem pb;
  const dist::RowPartition rows;
  const dist::DistMatrix a;
  const DistAmg host;
  const Vector r;
  Vector z_host;
  double scale = 0;
  DeviceBuffer<double> dr, dz;
};

// The graph replays what the eager cycle computes, call after call, from a deeper replicated
// level; and when a product with more columns reallocates the fine level's exchange buffers
// (held by the graph), the next call captures again instead of replaying on freed memory.
TEST(DistDeviceAmgSolve, GraphReplaysMatchTheHostAndFollowReallocatedBuffers) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("poisson3d:14, seed " + std::to_string(seed));
  dist::gpu::DeviceContext ctx(comm);
  // Balanced: every rank has neighbours, so the SpMM below moves exchange buffers on 2+ ranks.
  Level2Case c(comm, ctx, false, seed);
  ASSERT_GE(c.host.hierarchy().levels.size(), 3u);
  // Replicate from level 2 on: level 1 stays distributed between the graph's two halves.
  ASSERT_LT(c.level_nnz(2), c.level_nnz(1));
  gpu::DistDeviceAmgPreconditioner device(ctx, c.host.hierarchy(), c.level_nnz(2));
  EXPECT_EQ(device.first_replicated(), 2u);

  EXPECT_EQ(c.entries_off(device), 0) << "first call (eager): entries off the host application";
  EXPECT_EQ(device.cuda_graph_state(), graph_state(ctx, "not yet captured"));
  EXPECT_EQ(c.entries_off(device), 0) << "second call (captured, then replayed): entries off the host application";
  EXPECT_EQ(device.cuda_graph_state(), graph_state(ctx, "replayed"));
  EXPECT_EQ(c.entries_off(device), 0) << "third call (replayed): entries off the host application";

  // An SpMM on the fine operator grows its exchange buffers (k = 5 columns).
  dist::gpu::DeviceDistMatrix& fine = device.fine_operator();
  const std::uint64_t generation = fine.exchange_generation;
  const std::int64_t k = 5;
  DeviceBuffer<double> x(std::size_t(fine.owned_cols() * k), ctx.compute()), y(std::size_t(fine.owned_rows() * k), ctx.compute());
  x.fill_bytes(0, ctx.compute());
  dist::gpu::spmm(ctx, fine, x.data(), k, y.data());
  const bool moved = comm.allreduce(std::int64_t(fine.exchange_generation != generation), dist::ReduceOp::max) == 1;
  if (comm.size() > 1) EXPECT_TRUE(moved) << "the case is not exercised: no exchange buffer grew";
  EXPECT_EQ(c.entries_off(device), 0) << "after the buffers moved (captured again): entries off the host application";
  EXPECT_EQ(c.entries_off(device), 0) << "replayed again: entries off the host application";
  EXPECT_EQ(device.cuda_graph_state(), graph_state(ctx, "replayed"));
}

// The timeline wraps every product of the cycle without changing what it computes, and counts
// each one: per V-cycle a distributed level above the last smooths with steps - 1 residuals
// before (x starts at zero) and steps after, takes one residual, one restriction and one
// prolongation; the replicated levels are visited once; the graph stays off.
TEST(DistDeviceAmgSolve, TimelineCountsEveryProductAndChangesNoResult) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("poisson3d:14, seed " + std::to_string(seed));
  dist::gpu::DeviceContext ctx(comm);
  Level2Case c(comm, ctx, true, seed);
  const DistHierarchy& h = c.host.hierarchy();
  ASSERT_GE(h.levels.size(), 3u);
  gpu::DistDeviceAmgPreconditioner device(ctx, h, c.level_nnz(2));
  ASSERT_EQ(device.first_replicated(), 2u);
  device.enable_timeline();

  const int applies = 3;
  for (int call = 0; call < applies; ++call)
    EXPECT_EQ(c.entries_off(device), 0) << "call " << call << ": entries off the host application";
  EXPECT_EQ(device.cuda_graph_state(), "off");
  device.set_cuda_graph(true);  // the timeline keeps it off: its events would be captured
  EXPECT_EQ(device.cuda_graph_state(), "off");

  std::map<std::string, std::int64_t> expected;
  for (std::size_t l = 0; l < 2; ++l) {
    const std::int64_t steps = h.levels[l].smoother.steps;
    expected["level " + std::to_string(l) + " A"] = applies * 2 * steps;
    expected["level " + std::to_string(l) + " R"] = applies;
    expected["level " + std::to_string(l) + " P"] = applies;
  }
  expected["levels 2- replicated"] = applies;  // level 2's own operators run inside that visit
  ASSERT_TRUE(h.coarse_direct);
  expected["coarsest solve"] = applies;  // inside the replicated levels' visit
  std::map<std::string, std::int64_t> counted;
  for (const auto& e : device.timeline()) {
    counted[e.part] = e.calls;
    EXPECT_EQ(e.within_previous, e.part == "coarsest solve") << e.part;
    // A rank owning no rows launches nothing for a product: its sections may be below the
    // events' resolution. Some rank does the work of each.
    const double slowest = comm.allreduce(e.seconds, dist::ReduceOp::max);
    EXPECT_GT(slowest, 0.0) << e.part << ": timed calls took no time on any rank";
  }
  EXPECT_EQ(counted, expected);
}

TEST(DistDeviceAmgSolve, SmoothedCoarsestLevelMatchesHost) {
  AmgOptions o = small_coarse();
  o.max_dense_rows = 1;  // the coarsest level (a few rows) is smoothed, not factored
  check_problem("poisson3d:12", o, false);
}

/// poisson3d:13 on an uneven partition with an empty rank, as A and with its off-diagonal
/// entries times 0.6 (the same pattern, other values): the setting of the re-setup tests.
struct ReSetupCase {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d:13");
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const dist::DistMatrix a2 = dist::testing::distribute(comm, testing::off_diagonal_scaled(pb.a, 0.6), rows, rows);
  const NearNullSpace near_null = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
};

// The GPU backend's setup (graph phases, eigenvalue estimates and the products' reads of A on
// the context's compute stream) leaves every level's A it coarsened on the device; the products
// and the preconditioner share those copies instead of copying and uploading A again, and
// replicated levels are gathered whole on the GPUs from them. A re-setup with other values
// refreshes them: the application after it is the host cycle's on the new values.
TEST(DistDeviceAmgSolve, SharesTheSetupsCopiesOfAAndSeesReSetupValues) {
  const ReSetupCase c;
  const dist::Communicator& comm = c.comm;
  SCOPED_TRACE("uneven partition with an empty rank, seed " + std::to_string(c.seed));
  dist::gpu::DeviceContext ctx(comm);
  const auto stats = std::make_shared<tessera::cuda::OffloadStats>();
  const auto which = tessera::cuda::OffloadSpgemm::automatic;
  DistAmg m(comm, c.a, c.near_null, small_coarse(), gpu::device_setup_backend(ctx, which, stats));
  const DistHierarchy& h = m.hierarchy();
  ASSERT_GE(h.levels.size(), 3u) << "the test wants a real hierarchy";
  EXPECT_GT(comm.allreduce(std::int64_t(stats->products), dist::ReduceOp::sum), 0) << "no product on the GPUs";
  const auto expect_current_copies = [&](const char* when) {
    for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
      EXPECT_TRUE(gpu::current_copy(h.levels[l].device_a, h.levels[l].a)) << "level " << l << " " << when;
      const dist::ExtendedA read = h.levels[l].a_times_p_tent->shared_a_extended();
      EXPECT_TRUE(read.held && !read.host) << "level " << l << ": the products copied A on the host";
    }
  };
  expect_current_copies("after the setup");
  // The merge's P and R's owned block (the top of its P^T), kept for the solve: the host's blocks
  // bit for bit (the host's were downloaded from the merge's arrays).
  for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
    const DistLevel& level = h.levels[l];
    for (const auto& [slot, host, what] : {std::tuple{&level.device_p, &level.p, "P"}, {&level.device_r, &level.r, "R"}}) {
      SCOPED_TRACE(std::string(what) + " of level " + std::to_string(l));
      EXPECT_TRUE(gpu::current_copy(*slot, *host)) << "not kept on the device";  // not ASSERT: collectives follow
      if (!slot->matrix) continue;
      EXPECT_EQ(tessera::cuda::download(slot->matrix->local, ctx.compute()), host->local);
      EXPECT_EQ(tessera::cuda::download(slot->matrix->nonlocal, ctx.compute()), host->nonlocal);
    }
  }
  {
    gpu::DistDeviceAmgPreconditioner device(ctx, h, 0);
    EXPECT_EQ(&device.fine_operator(), h.levels[0].device_a.matrix.get()) << "A was uploaded again";
    for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
      EXPECT_EQ(device.prolongator(l), h.levels[l].device_p.matrix.get()) << "level " << l << ": P was uploaded";
      EXPECT_EQ(device.restriction(l), h.levels[l].device_r.matrix.get()) << "level " << l << ": R was uploaded";
    }
    expect_same_application(comm, ctx, m, device, c.a, c.seed);
  }
  // Levels 1- replicated: every replicated operator (A of each level, P and R of all but the
  // coarsest) is gathered on the GPUs from those copies, and the cycle is the host's.
  const std::size_t levels = h.levels.size();
  const std::int64_t level1_nnz = comm.allreduce(h.levels[1].a.nnz(), dist::ReduceOp::sum);
  const auto current_copies_from_level_1 = [&] {
    int held = 0;
    for (std::size_t l = 1; l < levels; ++l) {
      held += gpu::current_copy(h.levels[l].device_a, h.levels[l].a) ? 1 : 0;
      if (l + 1 < levels)
        held += (gpu::current_copy(h.levels[l].device_p, h.levels[l].p) ? 1 : 0) +
                (gpu::current_copy(h.levels[l].device_r, h.levels[l].r) ? 1 : 0);
    }
    return static_cast<int>(comm.allreduce(std::int64_t{held}, dist::ReduceOp::min));
  };
  gpu::DistDeviceAmgPreconditioner kept(ctx, h, level1_nnz);
  ASSERT_EQ(kept.first_replicated(), 1u);
  EXPECT_EQ(kept.replicated_gathered_on_device(), static_cast<int>((levels - 1) + 2 * (levels - 2)));
  expect_same_application(comm, ctx, m, kept, c.a, c.seed);
  m.resetup(c.a2);
  expect_current_copies("after the re-setup");
  // P and R have new host values: the kept copies are stale, and a new preconditioner uploads them.
  EXPECT_TRUE(h.levels[0].device_p.stale && h.levels[0].device_r.stale);
  gpu::DistDeviceAmgPreconditioner device(ctx, h, 0);
  EXPECT_NE(device.prolongator(0), h.levels[0].device_p.matrix.get());
  expect_same_application(comm, ctx, m, device, c.a2, c.seed);
  // Replicated again, and the one kept from before refreshed: the stale P and R go through the
  // host, the current A's (every level's but maybe the coarsest) on the GPUs.
  const int current = current_copies_from_level_1();
  EXPECT_GE(current, static_cast<int>(levels - 2));
  EXPECT_LT(current, static_cast<int>((levels - 1) + 2 * (levels - 2)));
  gpu::DistDeviceAmgPreconditioner replicated(ctx, h, level1_nnz);
  EXPECT_EQ(replicated.replicated_gathered_on_device(), current);
  expect_same_application(comm, ctx, m, replicated, c.a2, c.seed);
  kept.refresh_values();
  EXPECT_EQ(kept.replicated_gathered_on_device(), current);
  expect_same_application(comm, ctx, m, kept, c.a2, c.seed);
}

// After a re-setup with other values, refresh_values() sends them into the uploaded levels and
// rebuilds nothing: the application then equals the host cycle's on the new values, eager,
// captured and replayed as a CUDA graph; after a second re-setup back to the first values (the
// one that replays P's record), the first application again. With the setup on the host (the
// preconditioner's own copies of A) and on the GPUs (shared copies the re-setup refreshed),
// every level distributed or levels 1- replicated, Chebyshev or l1-Jacobi, the coarsest level
// factored or smoothed.
TEST(DistDeviceAmgSolve, RefreshedValuesMatchTheHostCycleAfterEachReSetup) {
  const ReSetupCase c;
  const dist::Communicator& comm = c.comm;
  SCOPED_TRACE("poisson3d:13, uneven partition with an empty rank, seed " + std::to_string(c.seed));
  dist::gpu::DeviceContext ctx(comm);
  const Vector r = owned_slice(tessera::testing::random_values(c.a.global_rows(), c.seed), c.a);
  DeviceBuffer<double> dr(r.size(), ctx.compute()), dz(r.size(), ctx.compute());
  dr.upload(r, ctx.compute());
  const auto entries_off = [&](gpu::DistDeviceAmgPreconditioner& device, const Vector& z_host) {
    return application_entries_off(comm, ctx, device, dr, dz, z_host, global_max_abs(comm, z_host));
  };
  AmgOptions smoothed_coarsest = small_coarse();
  smoothed_coarsest.max_dense_rows = 1;
  const std::pair<const char*, AmgOptions> cases[] = {
      {"Chebyshev", small_coarse()},
      {"l1-Jacobi", small_coarse(SmootherKind::l1_jacobi)},
      {"smoothed coarsest level", smoothed_coarsest}};
  for (const auto& [name, options] : cases)
    for (const bool setup_on_gpus : {false, true})
      for (const bool replicate : {false, true}) {
        SCOPED_TRACE(std::string(name) + (setup_on_gpus ? ", set up on the GPUs" : ", set up on the host") +
                     (replicate ? ", levels 1- replicated" : ", every level distributed"));
        DistAmg m(comm, c.a, c.near_null, options,
                  setup_on_gpus ? gpu::device_setup_backend(ctx, tessera::cuda::OffloadSpgemm::automatic)
                                : DistSetupBackend{});
        ASSERT_GE(m.hierarchy().levels.size(), 3u) << "the test wants a real hierarchy";
        gpu::DistDeviceAmgPreconditioner device(ctx, m.hierarchy(), replicate ? c.pb.a.nnz() : 0);
        ASSERT_EQ(device.first_replicated(), replicate ? 1u : m.hierarchy().levels.size());
        Vector z_first, z_second;
        m.apply(r, z_first);
        EXPECT_EQ(entries_off(device, z_first), 0) << "before the re-setup, eager";
        EXPECT_EQ(entries_off(device, z_first), 0) << "before the re-setup, captured";
        EXPECT_EQ(device.cuda_graph_state(), graph_state(ctx, "replayed"));

        m.resetup(c.a2);
        device.refresh_values();
        m.apply(r, z_second);
        const double scale = global_max_abs(comm, z_first);
        std::int64_t changed = 0;
        for (std::size_t i = 0; i < r.size(); ++i) changed += std::fabs(z_second[i] - z_first[i]) > 1e-6 * scale;
        EXPECT_GT(comm.allreduce(changed, dist::ReduceOp::sum), 0) << "the new values change nothing: not exercised";
        for (const char* call : {"eager", "captured", "replayed"})
          EXPECT_EQ(entries_off(device, z_second), 0) << "after the re-setup, " << call;
        EXPECT_EQ(device.cuda_graph_state(), graph_state(ctx, "replayed"));

        m.resetup(c.a);
        device.refresh_values();
        for (const char* call : {"eager", "captured"})
          EXPECT_EQ(entries_off(device, z_first), 0) << "back to the first values, " << call;
      }
}

/// A small Poisson problem on a balanced partition, its host hierarchy and the device
/// preconditioner on it: the setting of the solver-contract tests below.
struct SmallDeviceSolve {
  const dist::Communicator comm;
  const Problem pb = testing::make_problem("poisson3d:9");
  const dist::RowPartition rows = dist::RowPartition::balanced_rows(pb.a.rows, comm.size());
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const DistAmg host{comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                     small_coarse()};
  dist::gpu::DeviceContext ctx{comm};
  gpu::DistDeviceAmgPreconditioner m{ctx, host.hierarchy()};
  dist::gpu::DeviceDistMatrix& da = m.fine_operator();
};

TEST(DistDeviceAmgSolve, BadInputThrowsOnEveryRank) {
  SmallDeviceSolve t;
  const auto& comm = t.comm;
  const auto& a = t.a;
  const auto& host = t.host;
  auto& ctx = t.ctx;
  auto& m = t.m;
  auto& da = t.da;
  const auto apply = [&](const double* r, double* z) { m.apply(r, z); };
  const std::size_t n = std::size_t(a.owned_rows());
  DeviceBuffer<double> db(n, ctx.compute()), dx(n, ctx.compute());
  Vector b(n, 1.0);
  if (comm.rank() == comm.size() - 1 && n > 0) b[n / 2] = std::nan("");  // one rank's bad entry
  db.upload(b, ctx.compute());
  tessera::cuda::zero(std::int64_t(n), dx.data(), ctx.compute());
  EXPECT_THROW(gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), apply, {}), InputError);

  b.assign(n, 1.0);
  db.upload(b, ctx.compute());
  KrylovOptions negative;
  negative.rtol = -1;
  EXPECT_THROW(gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), apply, negative), InputError);

  // Zero right-hand side: converged at once with x = 0 (x started at 1).
  b.assign(n, 0.0);
  db.upload(b, ctx.compute());
  b.assign(n, 1.0);
  dx.upload(b, ctx.compute());
  const SolveResult zero = gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), apply, {});
  EXPECT_TRUE(zero.converged());
  EXPECT_EQ(zero.iterations, 0);
  EXPECT_EQ(global_max_abs(comm, dx.download(ctx.compute())), 0.0);

  // P is rectangular: its columns are not partitioned like its rows.
  dist::gpu::DeviceDistMatrix dp(host.hierarchy().levels[0].p, ctx.compute());
  EXPECT_THROW(gpu::dist_device_pcg(ctx, dp, db.data(), dx.data(), apply, {}), InputError);
}


// b out of b.b's range (amg/krylov.hpp) on the GPUs: dist_device_pcg and dist_device_fgmres scale
// it as the host solvers do. b.b of b times 1e200 overflowed as a non-finite b's does, and was
// refused as one; b times 1e-200 came back as x = 0. Times 2^700, x is the unscaled x times 2^700
// bit for bit (a power of two scales every step exactly; the device dots sum in a fixed order);
// times 1e200 or 1e-200 (each entry rounded, relative 1.1e-16) the unscaled iterations (+-1) and
// x / c within 1e-12 of x relative to max|x| (the host solvers' move is about 1e-15). A warm start
// of b's scale (c x, whose x.x overflows too) is taken, not refused: converged at once (+1).
TEST(DistDeviceAmgSolve, RightHandSidesNear1e200Or1em200SolveLikeTheUnscaled) {
  SmallDeviceSolve t;
  const auto& comm = t.comm;
  const auto& a = t.a;
  auto& ctx = t.ctx;
  const std::size_t n = std::size_t(a.owned_rows());
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("poisson3d:9, seed " + std::to_string(seed));
  Vector b_global(std::size_t(t.pb.a.rows));
  ref::spmv(1.0, t.pb.a, tessera::testing::random_values(t.pb.a.rows, seed), 0.0, b_global);
  const Vector b = owned_slice(b_global, a);
  DeviceBuffer<double> db(n, ctx.compute()), dx(n, ctx.compute());
  const auto m = [&](const double* r, double* z) { t.m.apply(r, z); };
  for (const bool gmres : {false, true}) {
    SCOPED_TRACE(gmres ? "dist_device_fgmres" : "dist_device_pcg");
    const auto solve = [&](const Vector& rhs, const Vector& x0, Vector& x) {
      db.upload(rhs, ctx.compute());
      dx.upload(x0, ctx.compute());
      const SolveResult r = gmres ? gpu::dist_device_fgmres(ctx, t.da, db.data(), dx.data(), m, KrylovOptions{})
                                  : gpu::dist_device_pcg(ctx, t.da, db.data(), dx.data(), m, KrylovOptions{});
      x = dx.download(ctx.compute());
      return r;
    };
    const Vector zero(n, 0.0);
    Vector x, xc;
    const SolveResult want = solve(b, zero, x);
    EXPECT_TRUE(want.converged()) << want.message;
    const double x_max = global_max_abs(comm, x);
    for (const auto& [c, name] : amg::testing::kOutOfRangeFactors) {
      SCOPED_TRACE(std::string("b times ") + name);
      Vector bc(n), unscaled(n);
      for (std::size_t i = 0; i < n; ++i) bc[i] = c * b[i];
      const SolveResult got = solve(bc, zero, xc);
      amg::testing::expect_solved_like_unscaled(comm, c, want, x, got, xc, x_max);
      for (std::size_t i = 0; i < n; ++i) unscaled[i] = xc[i] / c;
      EXPECT_LE(host_relative_residual(comm, a, b, unscaled), 2e-8) << "true residual of the downloaded x / c";
      Vector warm(n);
      for (std::size_t i = 0; i < n; ++i) warm[i] = c * x[i];
      const SolveResult again = solve(bc, warm, xc);
      EXPECT_TRUE(again.converged()) << again.message;
      EXPECT_LE(again.iterations, 1);
    }
  }
}

// rtol out of reach (Poisson's rounding floor is near 1e-16): the device PCG stops every rank
// at the same iteration with accuracy_limit (amg/krylov.hpp), as the host's dist_pcg does, and
// the x it returns is at the floor (its true residual recomputed on the host).
TEST(DistDeviceAmgSolve, UnreachableToleranceStopsEveryRankAtTheAccuracyLimit) {
  SmallDeviceSolve t;
  const auto& comm = t.comm;
  const auto& a = t.a;
  auto& ctx = t.ctx;
  const std::size_t n = std::size_t(a.owned_rows());
  const Vector b = owned_slice(tessera::testing::random_values(a.global_rows(), dist::testing::shared_seed(comm)), a);
  KrylovOptions ko;
  ko.rtol = 1e-17;
  Vector x_host(n, 0.0);
  const SolveResult host = dist_pcg(comm, a, b, x_host, t.host, ko);
  EXPECT_EQ(host.status, SolveStatus::accuracy_limit) << host.message;
  DeviceBuffer<double> db(n, ctx.compute()), dx(n, ctx.compute());
  db.upload(b, ctx.compute());
  tessera::cuda::zero(std::int64_t(n), dx.data(), ctx.compute());
  const SolveResult device =
      gpu::dist_device_pcg(ctx, t.da, db.data(), dx.data(), [&](const double* r, double* z) { t.m.apply(r, z); }, ko);
  EXPECT_EQ(device.status, SolveStatus::accuracy_limit) << device.message;
  EXPECT_LT(device.iterations, 40) << "it iterated on rounding noise";
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, device.iterations));
  EXPECT_LE(host_relative_residual(comm, a, b, dx.download(ctx.compute())), 1e-14);
}

// dist_device_pcg queues an iteration whole and tests its allreduced scalars after the step
// (device_pcg_steps.hpp): every rank must stop at the same iteration, with the same status and
// the iterate the host PCG would keep. M = -I stops at iteration 1 before any step; a NaN from
// the last rank's preconditioner at its third application stops every rank at iteration 3
// with the iterate of two steps, that of a run limited to two iterations.
TEST(DistDeviceAmgSolve, BreakdownStopsEveryRankWithTheLastIterate) {
  SmallDeviceSolve t;
  const auto& comm = t.comm;
  const auto& a = t.a;
  auto& ctx = t.ctx;
  auto& m = t.m;
  auto& da = t.da;
  const std::size_t n = std::size_t(a.owned_rows());
  EXPECT_GT(n, 0u) << "every rank owns rows of the balanced partition";  // not ASSERT: the solves are collective
  DeviceBuffer<double> db(n, ctx.compute()), dx(n, ctx.compute());
  db.upload(Vector(n, 1.0), ctx.compute());
  const auto restart = [&] { tessera::cuda::zero(std::int64_t(n), dx.data(), ctx.compute()); };

  const auto negated = [&](const double* r, double* z) {
    tessera::cuda::axpby(std::int64_t(n), -1.0, r, 0.0, z, ctx.compute());
  };
  restart();
  const SolveResult indefinite = gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), negated, {});
  EXPECT_EQ(indefinite.status, SolveStatus::indefinite_preconditioner) << indefinite.message;
  EXPECT_EQ(indefinite.iterations, 0);
  EXPECT_EQ(global_max_abs(comm, dx.download(ctx.compute())), 0.0);

  KrylovOptions two;
  two.max_iterations = 2;
  restart();
  const SolveResult limited =
      gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), [&](const double* r, double* z) { m.apply(r, z); }, two);
  // Not ASSERTs: the next solve is collective.
  EXPECT_EQ(limited.status, SolveStatus::max_iterations) << limited.message;
  EXPECT_EQ(limited.iterations, 2);
  const Vector x_two = dx.download(ctx.compute());

  int calls = 0;
  const auto poisoned = [&](const double* r, double* z) {
    m.apply(r, z);
    if (++calls == 3 && comm.rank() == comm.size() - 1)
      TESSERA_CUDA_CHECK(cudaMemsetAsync(z, 0xff, n * sizeof(double), ctx.compute()));  // NaN
  };
  restart();
  const SolveResult broken = gpu::dist_device_pcg(ctx, da, db.data(), dx.data(), poisoned, {});
  EXPECT_EQ(broken.status, SolveStatus::breakdown) << broken.message;
  EXPECT_EQ(broken.iterations, 2);
  const Vector x_broken = dx.download(ctx.compute());
  const double scale = global_max_abs(comm, x_two);
  ASSERT_GT(scale, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(x_broken[i])) << "x[" << i << "] on rank " << comm.rank();
    ASSERT_NEAR(x_broken[i], x_two[i], 1e-12 * scale) << "x[" << i << "] on rank " << comm.rank();
  }
}

}  // namespace
}  // namespace tessera::amg
