// The distributed tentative prolongator with its QR on each rank's GPU
// (amg/cuda/dist_device_tentative.hpp) against the host's dist_tentative_prolongator, bit for
// bit: P_tent's blocks, ghosts and halo, the coarse near-null rows and the coarse nodes, and the
// blocks it keeps on the device for the smoothing's product (DistTentative::held_p). On
// every case of graph_phase_cases.hpp (both partitions, one with an empty rank; every
// threshold, each giving other aggregates), with near-null spaces of the constant vector, of 3
// and of 6 random columns (aggregates with fewer dofs than k too). On several ranks the cases
// must have aggregates that straddle ranks (members routed to their owner, Q rows routed back).
// Bad near-null rows are the same InputError on every rank. A GPU on every rank, maybe shared
// (label gpu; exit 77 without).

#include "amg/cuda/dist_device_tentative.hpp"
#include "amg/dist/dist_tentative.hpp"
#include "dist/cuda/device_held_operand.hpp"
#include "dist/cuda/device_local_spgemm.hpp"
#include "graph_phase_cases.hpp"
#include "non_blocking_stream.hpp"

namespace tessera::amg {
namespace {

using testing::bits;
using testing::GraphCase;
using testing::near_null_rows;

void expect_same_block(const Csr<double>& got, const Csr<double>& want, const std::string& what) {
  EXPECT_EQ(got.rows, want.rows) << what;
  EXPECT_EQ(got.cols, want.cols) << what;
  EXPECT_EQ(got.row_ptr, want.row_ptr) << what << ": row pattern";
  EXPECT_EQ(got.col_idx, want.col_idx) << what << ": column pattern";
  EXPECT_EQ(bits(got.values), bits(want.values)) << what << ": values";
}

void expect_same_tentative(const DistTentative& got, const DistTentative& want) {
  EXPECT_TRUE(got.p.row_partition == want.p.row_partition) << "P_tent's row partition";
  EXPECT_TRUE(got.p.col_partition == want.p.col_partition) << "P_tent's column (coarse) partition";
  EXPECT_EQ(got.p.ghost_cols, want.p.ghost_cols);
  expect_same_block(got.p.local, want.p.local, "P_tent's local block");
  expect_same_block(got.p.nonlocal, want.p.nonlocal, "P_tent's non-local block");
  EXPECT_EQ(got.p.halo.send_local, want.p.halo.send_local) << "P_tent's halo";
  EXPECT_EQ(got.coarse_vectors.rows, want.coarse_vectors.rows);
  EXPECT_EQ(got.coarse_vectors.cols, want.coarse_vectors.cols);
  EXPECT_EQ(bits(got.coarse_vectors.data), bits(want.coarse_vectors.data)) << "coarse near-null rows";
  EXPECT_EQ(got.coarse_nodes.first, want.coarse_nodes.first);
  EXPECT_EQ(got.coarse_nodes.ptr, want.coarse_nodes.ptr);
  EXPECT_TRUE(got.coarse_nodes.partition == want.coarse_nodes.partition) << "coarse node partition";
  EXPECT_EQ(want.held_p, nullptr) << "the host kept blocks on a device";
  const auto* held = dynamic_cast<const dist::gpu::DeviceHeldOperand*>(got.held_p.get());
  if (!held) {
    ADD_FAILURE() << "the device tentative prolongator kept no blocks";
    return;
  }
  expect_same_block(cuda::download(held->local), want.p.local, "P_tent's local block kept on the device");
  expect_same_block(cuda::download(held->nonlocal), want.p.nonlocal, "P_tent's non-local block kept on the device");
  EXPECT_EQ(held->local.nnz, want.p.local.nnz());
  EXPECT_EQ(held->nonlocal.nnz, want.p.nonlocal.nnz());
  EXPECT_EQ(held->transposed.rows, 0) << "no P_tent^T is kept";
}

/// Every partition and threshold of `build`, k = 1, 3 and 6. Returns the P_tent entries in
/// non-local blocks over all ranks and cases (rows whose aggregate another rank owns).
std::int64_t check(const testing::GraphCaseBuilder& build) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const testing::NonBlockingStream stream;
  std::int64_t straddling = 0;
  testing::for_each_partition_and_theta(comm, build, [&](const GraphCase& c, double theta) {
    const DistAggregates agg = dist_aggregate(comm, dist_strength_graph(comm, c.a, c.nodes, theta));
    for (const int k : {1, 3, 6}) {
      SCOPED_TRACE("k = " + std::to_string(k));
      const DenseMatrix b = near_null_rows(c.a.owned_rows(), k, dist::testing::shared_seed(comm) + comm.rank());
      const DistTentative want = dist_tentative_prolongator(comm, agg, c.nodes, c.a, b);
      const DistTentative got = gpu::device_tentative(stream.s)(comm, agg, c.nodes, c.a, b);
      expect_same_tentative(got, want);
      straddling += want.p.nonlocal.nnz();
    }
  });
  return comm.allreduce(straddling, dist::ReduceOp::sum);
}

/// As check(); on several ranks the case must route members across ranks.
void check_straddling(const testing::GraphCaseBuilder& build) {
  const std::int64_t straddling = check(build);
  if (dist::Communicator().size() > 1) EXPECT_GT(straddling, 0) << "no aggregate straddled ranks: a weak test";
}

TEST(DistDeviceTentative, Poisson7Point) { check_straddling(testing::generated("poisson3d:7")); }

TEST(DistDeviceTentative, Poisson27Point) { check_straddling(testing::generated("poisson3d27:6")); }

TEST(DistDeviceTentative, ElasticityBlockSize3) { check_straddling(testing::generated("elasticity3d:4")); }

TEST(DistDeviceTentative, PlaneElasticityBlockSize2) { check_straddling(testing::generated("elasticity2d:9")); }

TEST(DistDeviceTentative, UnsymmetricPatternTwoDofNodes) { check_straddling(testing::unsymmetric(202, 2)); }

TEST(DistDeviceTentative, IsolatedNodesAndEmptyRows) { check(testing::isolated_nodes(157)); }

TEST(DistDeviceTentative, PowerLawGraph) { check_straddling(testing::power_law(10, 8)); }

TEST(DistDeviceTentative, MixedNodeSizes) { check_straddling(testing::mixed_node_sizes(211)); }

TEST(DistDeviceTentative, CoarseLevelOfElasticity) { check(testing::coarse_level("elasticity3d:6")); }

TEST(DistDeviceTentative, OneByOne) { check(testing::tiny(1)); }

TEST(DistDeviceTentative, Empty) { check(testing::tiny(0)); }

TEST(DistDeviceTentative, BadNearNullRowsAreTheSameErrorOnEveryRank) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const GraphCase c = testing::generated("poisson3d:7")(comm, false, dist::testing::shared_seed(comm));
  const DistAggregates agg = dist_aggregate(comm, dist_strength_graph(comm, c.a, c.nodes, 0.02));
  // Rank 0 holds one near-null row too few (every rank owns rows on this balanced partition).
  const DenseMatrix b = near_null_rows(c.a.owned_rows() - (comm.rank() == 0 ? 1 : 0), 1, 7);
  const std::string error = dist::testing::input_error_on_every_rank(
      comm, [&] { gpu::device_tentative()(comm, agg, c.nodes, c.a, b); });
  EXPECT_NE(error.find("near-null rows"), std::string::npos) << error;
}

}  // namespace
}  // namespace tessera::amg
