// Filtered prolongator smoothing on the GPU backend of the distributed setup (the strong node
// graph downloaded from the device graph phases, A_F made from it on the host, its lambda_max and
// A_F P_tent on the GPU from A_F's own device copy) against the host backend, 1-4 ranks (one GPU
// each, maybe shared), on an uneven partition where a rank owns no rows: frames with their kinds
// of dof separated, where the graph drops the weak couplings. After the setup and after two
// re-setups (other values, then back), every level's A_F (level 0's bit for bit: both are made
// from the same A), P and A equal the host's to rounding, and a solve takes the host's
// iterations. A GPU on every rank, maybe shared (label gpu; exit 77 without).
#include <cmath>
#include <string>

#include "amg/cuda/device_setup_backend.hpp"
#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/separate_kinds.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist_amg_test_util.hpp"

namespace tessera::amg {
namespace {

void expect_same_levels(const dist::Communicator& comm, const DistHierarchy& device, const DistHierarchy& host,
                        const std::string& when) {
  ASSERT_EQ(device.levels.size(), host.levels.size()) << when;
  for (std::size_t l = 0; l + 1 < host.levels.size(); ++l) {
    SCOPED_TRACE(when + ", level " + std::to_string(l));
    const DistLevel &d = device.levels[l], &h = host.levels[l];
    ASSERT_EQ(d.filtered.has_value(), h.filtered.has_value());  // the same on every rank
    // The eigenvalue estimate of a filtered level read A_F's own device copy.
    EXPECT_EQ(d.device_filtered.matrix != nullptr, d.filtered.has_value()) << "rank " << comm.rank();
    const Csr<double> df = d.filtered ? dist::gather(comm, d.filtered->a) : Csr<double>{};
    const Csr<double> hf = h.filtered ? dist::gather(comm, h.filtered->a) : Csr<double>{};
    const Csr<double> dp = dist::gather(comm, d.p), hp = dist::gather(comm, h.p);
    const Csr<double> da = dist::gather(comm, device.levels[l + 1].a), ha = dist::gather(comm, host.levels[l + 1].a);
    if (comm.rank() != 0) continue;
    if (l == 0)
      EXPECT_EQ(df, hf) << "level 0's A_F from the same A";
    else
      testing::expect_equal_to_rounding(df, hf, "A_F");
    testing::expect_equal_to_rounding(dp, hp, "P");
    testing::expect_equal_to_rounding(da, ha, "the next level's A");
  }
}

void check_frame(const std::string& text) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(text + " separated, uneven partition with an empty rank, seed " + std::to_string(seed));
  const gen::ProblemSpec spec = gen::parse_spec(text);
  const Csr<double> a = without_cross_kind_couplings(gen::generate(spec), gen::block_size(spec));
  const dist::RowPartition rows = testing::aligned_partition(comm, a.rows, 1, true, seed);
  const dist::DistMatrix first = dist::testing::distribute(comm, a, rows, rows);
  const dist::DistMatrix second = dist::testing::distribute(comm, testing::off_diagonal_scaled(a, 0.6), rows, rows);
  const NearNullSpace nns = constant_near_null_space(first.owned_rows(), 1);
  AmgOptions o;
  o.coarse_size = 40;
  o.filtered_smoothing = true;
  dist::gpu::DeviceContext ctx(comm);
  DistAmg device(comm, first, nns, o, gpu::device_setup_backend(ctx, tessera::cuda::OffloadSpgemm::automatic));
  DistAmg host(comm, first, nns, o);
  ASSERT_GE(host.hierarchy().levels.size(), 3u) << "the test wants a real hierarchy";
  ASSERT_TRUE(host.hierarchy().levels[0].filtered) << "the graph dropped nothing: no test of the filter";
  expect_same_levels(comm, device.hierarchy(), host.hierarchy(), "setup");
  const dist::DistMatrix* sequence[] = {&second, &first};
  for (int k = 0; k < 2; ++k) {
    device.resetup(*sequence[k]);
    host.resetup(*sequence[k]);
    expect_same_levels(comm, device.hierarchy(), host.hierarchy(), "re-setup " + std::to_string(k + 1));
  }
  const Vector b(static_cast<std::size_t>(first.owned_rows()), 1.0);
  Vector x_device(b.size(), 0.0), x_host(b.size(), 0.0);
  const SolveResult d = dist_pcg(comm, first, b, x_device, device, KrylovOptions{});
  const SolveResult h = dist_pcg(comm, first, b, x_host, host, KrylovOptions{});
  EXPECT_TRUE(d.converged()) << d.message;
  EXPECT_LE(std::abs(d.iterations - h.iterations), 1) << "device " << d.iterations << ", host " << h.iterations;
}

TEST(DistDeviceFilteredSmoothing, SeparatedPlaneFrameEqualsTheHostBackend) { check_frame("frame2d:16:30"); }

TEST(DistDeviceFilteredSmoothing, SeparatedSpaceFrameEqualsTheHostBackend) { check_frame("frame3d:5:30"); }

}  // namespace
}  // namespace tessera::amg
