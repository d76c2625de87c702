// The distributed AMG with its setup products on each rank's GPU (dist::device_local_spgemm,
// tile SpGEMM and cuSPARSE) against the same DistAmg with the host products: the same levels
// (global rows, nnz, patterns), operators and prolongators equal to rounding, on a balanced and
// an uneven partition with a rank owning no rows; a re-setup with new values again matches.
// Also with the products reading A from the level's device copy (gpu::device_held_extended_a),
// and with the whole GPU backend on the automatic engine choice: one engine a level.
// A GPU on every rank, maybe shared (label gpu; exit 77 without).
#include "amg/cuda/device_held_extended_a.hpp"
#include "amg/cuda/device_setup_backend.hpp"
#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_local_spgemm.hpp"
#include "dist_amg_test_util.hpp"
#include "local/cuda/spgemm_engine_choice.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::amg {
namespace {

using cuda::OffloadSpgemm;

AmgOptions small_coarse() {
  AmgOptions o;
  o.coarse_size = 40;  // several levels on these small problems
  return o;
}

void expect_same_levels(const dist::Communicator& comm, const DistAmg& host, const DistAmg& device) {
  const HierarchyStats want = host.statistics(), got = device.statistics();
  ASSERT_EQ(got.levels.size(), want.levels.size());
  for (std::size_t l = 0; l < want.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    EXPECT_EQ(got.levels[l].rows, want.levels[l].rows);
    EXPECT_EQ(got.levels[l].nnz, want.levels[l].nnz);
    EXPECT_EQ(got.levels[l].p_nnz, want.levels[l].p_nnz);
    const DistLevel& h = host.hierarchy().levels[l];
    const DistLevel& d = device.hierarchy().levels[l];
    const Csr<double> ha = dist::gather(comm, h.a), da = dist::gather(comm, d.a);
    const bool last = l + 1 == want.levels.size();
    const Csr<double> hp = last ? Csr<double>{} : dist::gather(comm, h.p);
    const Csr<double> dp = last ? Csr<double>{} : dist::gather(comm, d.p);
    if (comm.rank() != 0) continue;
    testing::expect_equal_to_rounding(da, ha, "A");
    if (!last) testing::expect_equal_to_rounding(dp, hp, "P");
  }
  EXPECT_EQ(device.hierarchy().stop_reason, host.hierarchy().stop_reason);
}

Csr<double> scaled(Csr<double> a, double factor) {
  for (double& v : a.values) v *= factor;
  return a;
}

void check_problem(const std::string& spec) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(spec + ", seed " + std::to_string(seed));
  const testing::Problem pb = testing::make_problem(spec);
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, pb.near_null.block_size, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const NearNullSpace b = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
    const DistAmg host(comm, a, b, small_coarse());
    ASSERT_GE(host.hierarchy().levels.size(), 3u) << "the test wants a real hierarchy";
    // Same pattern, other values (a uniform scale keeps the aggregates): re-setup runs every
    // product's numeric phase again.
    const dist::DistMatrix a2 = dist::testing::distribute(comm, scaled(pb.a, 3.0), rows, rows);
    DistAmg host_resetup(comm, a, b, small_coarse());
    host_resetup.resetup(a2);
    for (const OffloadSpgemm which : {OffloadSpgemm::tile, OffloadSpgemm::cusparse}) {
      // With the products' A copied on the host and uploaded, then read from the level's device
      // copy, which only the products make here (host graph phases and estimates): a re-setup
      // must refresh it before the products read it.
      for (const bool read_device_copy : {false, true}) {
        SCOPED_TRACE(std::string(cuda::to_string(which)) + (read_device_copy ? ", A from the device copy" : ""));
        const auto stats = std::make_shared<cuda::OffloadStats>();
        DistSetupBackend backend;
        backend.products = dist::device_local_spgemm(which, stats);
        if (read_device_copy) backend.held_extended_a = gpu::device_held_extended_a(nullptr, which, stats);
        DistAmg device(comm, a, b, small_coarse(), backend);
        expect_same_levels(comm, host, device);
        const std::int64_t products = comm.allreduce(std::int64_t(stats->products), dist::ReduceOp::sum);
        EXPECT_GT(products, 0) << "the setup products did not run on the device";
        for (std::size_t l = 0; l + 1 < device.hierarchy().levels.size(); ++l) {
          const DistLevel& level = device.hierarchy().levels[l];
          EXPECT_EQ(level.a_times_p_tent->shared_a_extended().held != nullptr, read_device_copy) << "level " << l;
          EXPECT_EQ(level.device_a.matrix != nullptr, read_device_copy) << "level " << l;
        }
        device.resetup(a2);
        expect_same_levels(comm, host_resetup, device);
      }
    }
  }
}

/// Whether the per-product choice (choose_spgemm_engine, what OffloadSpgemm::automatic resolves
/// outside a level) sends some level's whole P^T (A P) to cuSPARSE, as one rank multiplies it.
/// Collective: rank 0's answer on every rank.
bool some_galerkin_product_alone_on_cusparse(const dist::Communicator& comm, const DistHierarchy& h) {
  std::int64_t found = 0;
  for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
    const Csr<double> a = dist::gather(comm, h.levels[l].a), p = dist::gather(comm, h.levels[l].p);
    if (comm.rank() != 0) continue;
    const cuda::SpgemmWorkEstimate e = cuda::estimate_spgemm_work_host(ref::transpose(p), ref::spgemm(a, p));
    if (cuda::choose_spgemm_engine(e) == OffloadSpgemm::cusparse) found = 1;
  }
  return comm.allreduce(found, dist::ReduceOp::max) != 0;
}

// The GPU backend on OffloadSpgemm::automatic runs all of a level's products on the engine its first
// product's work estimate picks (choose_level_spgemm_engine), as the one-GPU hierarchy does: the
// 7-point hierarchy all on the hash SpGEMM, although the per-product choice sends its level 1's whole
// P^T (A P), whose rows of R are long, to cuSPARSE; elasticity all on tiles. The levels equal the
// host's.
void check_one_engine_a_level(const std::string& spec, const AmgOptions& options, OffloadSpgemm engine) {
  const dist::Communicator comm;
  dist::gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(spec + ", seed " + std::to_string(seed));
  const testing::Problem pb = testing::make_problem(spec);
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, pb.near_null.block_size, false, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const NearNullSpace b = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
  const DistAmg host(comm, a, b, options);
  ASSERT_GE(host.hierarchy().levels.size(), 3u) << "the test wants a real hierarchy";
  const bool alone_on_cusparse = some_galerkin_product_alone_on_cusparse(comm, host.hierarchy());
  if (engine == OffloadSpgemm::hash)  // the same on every rank
    ASSERT_TRUE(alone_on_cusparse) << "no product the per-product choice sends to cuSPARSE: the level's rule untested";
  const auto stats = std::make_shared<cuda::OffloadStats>();
  const DistAmg device(comm, a, b, options, gpu::device_setup_backend(ctx, OffloadSpgemm::automatic, stats));
  expect_same_levels(comm, host, device);
  const auto sum = [&](int n) { return comm.allreduce(std::int64_t(n), dist::ReduceOp::sum); };
  const std::int64_t products = sum(stats->products), on_tiles = sum(stats->tile_products);
  EXPECT_GT(products, 0) << "the setup products did not run on the device";
  EXPECT_EQ(sum(stats->cusparse_products), 0);
  EXPECT_EQ(on_tiles, engine == OffloadSpgemm::tile ? products : 0) << products << " products";
}

TEST(DistDeviceAmg, Poisson7PointSameHierarchyAsHostProducts) { check_problem("poisson3d:12"); }

// Levels of 64000 and 5909 rows (P^T (A P) of the second: 2568 products a row of R, past
// kHashMaxProductsPerRow); the coarsest, 210 rows, has no products.
TEST(DistDeviceAmg, AutomaticRunsPoissonLevelsOnTheHashSpgemm) {
  AmgOptions o;
  o.coarse_size = 300;
  check_one_engine_a_level("poisson3d:40", o, OffloadSpgemm::hash);
}

TEST(DistDeviceAmg, AutomaticRunsElasticityLevelsOnTiles) {
  check_one_engine_a_level("elasticity3d:6", small_coarse(), OffloadSpgemm::tile);
}

TEST(DistDeviceAmg, ElasticitySameHierarchyAsHostProducts) { check_problem("elasticity3d:6"); }

TEST(DistDeviceAmg, FrameSameHierarchyAsHostProducts) { check_problem("frame3d:5"); }  // 6 dofs a node

}  // namespace
}  // namespace tessera::amg
