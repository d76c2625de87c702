// A distributed re-setup's level transfer on the GPUs (DistSetupBackend::transfer_on_device,
// amg/cuda/dist_device_transfer.hpp) against the same re-setups with the transfer on the host,
// 1-4 ranks (one GPU each), on an uneven partition where a rank owns no rows. Two hierarchies
// are set up alike on the GPU backend, one with the device transfer added and one without; both are
// re-set up to other values, back, and to the other values again (the first re-setup plans the
// device transfer, the second and third run it). After each, every level's P, R and A and the
// eigenvalue estimates must equal the host transfer's to 1e-11 relative to the largest entry:
// the tile products sum in another order than the host-driven ones, and the differences pass
// from level to level (A_c -> lambda_max -> omega -> P of the next level).
// Poisson 7-point with Chebyshev, 27-point with l1-Jacobi, elasticity with rigid-body modes (6
// near-null vectors), an unsmoothed P (P = P_tent: no A P_tent and no record), and filtered
// smoothing on a frame with its kinds of dof separated (A_F P_tent from A_F's device copy, which
// the hierarchy refreshed; A_F compared too), and a random SPD matrix (an irregular pattern, an
// odd row count).
#include <cmath>
#include <memory>
#include <string>

#include "amg/cuda/device_setup_backend.hpp"
#include "amg/cuda/dist_device_transfer.hpp"
#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/separate_kinds.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist_amg_test_util.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg {
namespace {

double global_max_abs(const dist::Communicator& comm, const dist::DistMatrix& m) {
  double x = 0;
  for (const HostArray<double>* block : {&m.local.values, &m.nonlocal.values})
    for (double v : *block) x = std::max(x, std::fabs(v));
  return comm.allreduce(x, dist::ReduceOp::max);
}

/// Entries of `got` off `want` by more than 1e-11 of want's largest entry, over all ranks (a
/// block of another size counts all its entries; NaN counts). Collective, so no rank returns early.
std::int64_t entries_off(const dist::Communicator& comm, const dist::DistMatrix& got, const dist::DistMatrix& want) {
  const double tol = 1e-11 * global_max_abs(comm, want);
  std::int64_t off = 0;
  const std::pair<const Csr<double>*, const Csr<double>*> blocks[] = {{&got.local, &want.local},
                                                                      {&got.nonlocal, &want.nonlocal}};
  for (const auto& [g, w] : blocks) {
    if (g->row_ptr != w->row_ptr || g->col_idx != w->col_idx) {
      off += std::max<std::int64_t>(1, w->nnz());
      continue;
    }
    for (std::size_t k = 0; k < w->values.size(); ++k) off += !(std::fabs(g->values[k] - w->values[k]) <= tol);
  }
  return comm.allreduce(off, dist::ReduceOp::sum);
}

void expect_same_levels(const dist::Communicator& comm, const DistHierarchy& got, const DistHierarchy& want,
                        const std::string& when) {
  ASSERT_EQ(got.levels.size(), want.levels.size()) << when;
  for (std::size_t l = 0; l < want.levels.size(); ++l) {
    const DistLevel& g = got.levels[l];
    const DistLevel& w = want.levels[l];
    SCOPED_TRACE(when + ", level " + std::to_string(l));
    EXPECT_EQ(entries_off(comm, g.a, w.a), 0) << "A";
    if (l + 1 == want.levels.size()) break;
    ASSERT_EQ(g.filtered.has_value(), w.filtered.has_value());  // the same on every rank
    if (w.filtered) EXPECT_EQ(entries_off(comm, g.filtered->a, w.filtered->a), 0) << "A_F";
    EXPECT_EQ(entries_off(comm, g.p, w.p), 0) << "P";
    EXPECT_EQ(entries_off(comm, g.r, w.r), 0) << "R";
    EXPECT_NEAR(g.eigen.safe, w.eigen.safe, 1e-11 * w.eigen.safe) << "lambda_max";
    EXPECT_NEAR(g.omega, w.omega, 1e-11 * std::fabs(w.omega)) << "omega";
  }
}

void check_problem(const testing::Problem& pb, const AmgOptions& options) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(pb.spec + ", uneven partition with an empty rank, seed " + std::to_string(seed));
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, pb.near_null.block_size, true, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const dist::DistMatrix a2 = dist::testing::distribute(comm, testing::off_diagonal_scaled(pb.a, 0.6), rows, rows);
  const NearNullSpace near_null = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
  dist::gpu::DeviceContext ctx(comm);
  const auto which = tessera::cuda::OffloadSpgemm::automatic;
  const DistSetupBackend host_transfer = gpu::device_setup_backend(ctx, which);
  DistSetupBackend device_transfer = host_transfer;
  device_transfer.transfer_on_device = gpu::dist_device_transfer(ctx);
  DistAmg on_device(comm, a, near_null, options, device_transfer);
  DistAmg on_host(comm, a, near_null, options, host_transfer);
  const DistHierarchy& h = on_device.hierarchy();
  ASSERT_GE(h.levels.size(), 3u) << "the test wants a real hierarchy";
  if (options.filtered_smoothing) ASSERT_TRUE(h.levels[0].filtered) << "the graph dropped nothing: no test of A_F";

  const auto planned_levels = [&] {
    std::int64_t n = 0;
    for (const DistLevel& level : h.levels) n += level.transfer_plan != nullptr;
    return n;
  };
  EXPECT_EQ(planned_levels(), 0) << "a setup plans nothing";
  const dist::DistMatrix* sequence[] = {&a2, &a, &a2};
  for (int k = 0; k < 3; ++k) {
    on_device.resetup(*sequence[k]);
    on_host.resetup(*sequence[k]);
    EXPECT_EQ(planned_levels(), static_cast<std::int64_t>(h.levels.size()) - 1) << "re-setup " << k + 1;
    expect_same_levels(comm, h, on_host.hierarchy(), "re-setup " + std::to_string(k + 1));
  }
  // The values moved with A's (so the comparison above compared something).
  const DistHierarchy first(comm, a, near_null, options, host_transfer);
  EXPECT_GT(entries_off(comm, h.levels[1].a, first.levels[1].a), 0) << "A_1 did not change with A";
}

AmgOptions small_coarse(SmootherKind smoother = SmootherKind::chebyshev) {
  AmgOptions o;
  o.coarse_size = 40;  // several levels on these small problems
  o.smoother = smoother;
  return o;
}

TEST(DistDeviceReSetup, Poisson7PointTransferOnTheGpusEqualsTheHosts) {
  check_problem(testing::make_problem("poisson3d:13"), small_coarse());
}

TEST(DistDeviceReSetup, Poisson27PointL1JacobiTransferOnTheGpusEqualsTheHosts) {
  check_problem(testing::make_problem("poisson3d27:11"), small_coarse(SmootherKind::l1_jacobi));
}

TEST(DistDeviceReSetup, ElasticityTransferOnTheGpusEqualsTheHosts) {
  check_problem(testing::make_problem("elasticity3d:6"), small_coarse());
}

TEST(DistDeviceReSetup, UnsmoothedProlongatorTransferOnTheGpusEqualsTheHosts) {
  AmgOptions o = small_coarse();
  o.smooth_prolongator = false;
  check_problem(testing::make_problem("poisson3d:13"), o);
}

TEST(DistDeviceReSetup, FilteredSmoothingTransferOnTheGpusEqualsTheHosts) {
  const gen::ProblemSpec spec = gen::parse_spec("frame3d:5:30");
  const Csr<double> a = without_cross_kind_couplings(gen::generate(spec), gen::block_size(spec));
  AmgOptions o = small_coarse();
  o.filtered_smoothing = true;
  check_problem(testing::Problem{"frame3d:5:30 separated", a, constant_near_null_space(a.rows, 1)}, o);
}

/// A random SPD matrix on n rows, ~`per_row` entries a row off the diagonal, drawn from the shared
/// seed (in the name, which check_problem traces), with the constant near-null vector.
testing::Problem random_spd_problem(std::int64_t n, double per_row) {
  const std::uint64_t seed = dist::testing::shared_seed(dist::Communicator());
  const Csr<double> pattern = tessera::testing::random_csr({n, n, per_row / 2 / n}, seed);
  return testing::Problem{"random SPD n=" + std::to_string(n) + " seed=" + std::to_string(seed),
                          tessera::testing::diagonally_dominant_spd(pattern), constant_near_null_space(n, 1)};
}

// ~6 entries a row (A + A^T of a pattern of ~3): level 1 has 58-81 rows (host setup, 100 seeds),
// so coarse size 40 gives the three levels check_problem asks for.
TEST(DistDeviceReSetup, RandomSpdTransferOnTheGpusEqualsTheHosts) {
  check_problem(random_spd_problem(601, 6), small_coarse());
}

}  // namespace
}  // namespace tessera::amg
