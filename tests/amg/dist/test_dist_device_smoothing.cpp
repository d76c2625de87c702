// The first merge of the distributed smoothed prolongator on each rank's GPU
// (amg/cuda/dist_device_smoothing.hpp) against the host merge (smoothed_blocks):
//   - of the same device product A P_tent, bit for bit (P's blocks, ghosts), with A_ext held on
//     the device (the GPU backend's way) on each engine, and with A_ext copied on the host (every
//     engine sums in a fixed order, power-law hubs included);
//   - of the host product (host_local_spgemm), the same pattern and values to rounding (the
//     tile products sum in another order);
//   - the product's entries are recorded as multiply() records them;
//   - P^T, made on the device from P's blocks, is the host transpose of P's extended block, bit
//     for bit;
//   - P and P^T kept on the device (SmoothedProlongator::held): B_ext of A*P assembled from them
//     there (dist/cuda/device_compact_extended_rows.hpp) is the host's (compact_extended_rows and
//     CompactSpgemm's own) bit for bit, and the Galerkin product whose first products read them
//     equals the one that uploads the host's P and P^T, bit for bit, after a recompute too
//     (which makes the host B_ext the first products skipped);
//   - that product keeps its outer product T on the device as well (DistPtap::take_device_result;
//     not after a recompute, nor for the product that uploaded its operands): where C is T (one
//     rank) T is C's local block bit for bit, elsewhere the blocks made from it on the device
//     (dist/cuda/device_summed_blocks.hpp, with the host's rows that receive) are C's bit for bit;
//   - with P_tent's blocks where the device tentative prolongator left them, the product
//     assembles its B_ext from them there (CompactSpgemm's held_b) and P is the same; the host
//     B_ext that a refresh then makes is the host reference's;
//   - with the level's 1 / a_ii divided on the device and kept in its slot, the merge reads that
//     one (the host vector it is given is NaN there) and P is still the host merge's.
// On every case of graph_phase_cases.hpp (both partitions, one with an empty rank; every
// threshold), P_tent from near-null spaces of 1 and 6 columns (rows of P_tent with 1 and up to 6
// entries). On several ranks P must have entries in ghost columns, or the test fails. The merge
// runs on a non-blocking stream. A GPU on every rank, maybe shared (label gpu; exit 77 without).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "amg/cuda/device_held_extended_a.hpp"
#include "amg/cuda/dist_device_operator_check.hpp"
#include "amg/cuda/dist_device_smoothing.hpp"
#include "amg/cuda/dist_device_tentative.hpp"
#include "amg/dist/device_operator_slot.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "amg/dist/dist_smoothing.hpp"
#include "amg/dist/dist_tentative.hpp"
#include "dist/compact_spgemm.hpp"
#include "dist/cuda/device_compact_extended_rows.hpp"
#include "dist/cuda/device_held_operand.hpp"
#include "dist/cuda/device_local_spgemm.hpp"
#include "dist/cuda/device_summed_blocks.hpp"
#include "dist/halo_plan.hpp"
#include "dist/ptap.hpp"
#include "graph_phase_cases.hpp"
#include "local/reference/kernels.hpp"
#include "non_blocking_stream.hpp"

namespace tessera::amg {
namespace {

using cuda::OffloadSpgemm;
using testing::bits;
using testing::GraphCase;
using testing::near_null_rows;

/// 1 / a_ii, and 1 where a row has no diagonal (the isolated-node cases): finite, so that
/// "bit for bit" compares numbers, not NaN payloads.
Vector inverse_diagonal_or_one(const dist::DistMatrix& a) {
  Vector d = owned_diagonal(a);
  for (double& v : d) v = v != 0.0 ? 1.0 / v : 1.0;
  return d;
}

void expect_same_block(const Csr<double>& got, const Csr<double>& want, const std::string& what, bool exact) {
  EXPECT_EQ(got.rows, want.rows) << what;
  EXPECT_EQ(got.cols, want.cols) << what;
  EXPECT_EQ(got.row_ptr, want.row_ptr) << what << ": row pattern";
  EXPECT_EQ(got.col_idx, want.col_idx) << what << ": column pattern";
  if (exact) {
    EXPECT_EQ(bits(got.values), bits(want.values)) << what << ": values";
    return;
  }
  ASSERT_EQ(got.values.size(), want.values.size()) << what;
  for (std::size_t k = 0; k < want.values.size(); ++k)
    ASSERT_NEAR(got.values[k], want.values[k], 1e-13 * std::max(1.0, std::abs(want.values[k]))) << what << ", entry " << k;
}

void expect_same_p(const dist::DistMatrix& got, const dist::DistMatrix& want, bool exact) {
  EXPECT_TRUE(got.row_partition == want.row_partition) << "P's row partition";
  EXPECT_TRUE(got.col_partition == want.col_partition) << "P's column partition";
  EXPECT_EQ(got.rank, want.rank);
  EXPECT_EQ(got.ghost_cols, want.ghost_cols);
  expect_same_block(got.local, want.local, "P's local block", exact);
  expect_same_block(got.nonlocal, want.nonlocal, "P's non-local block", exact);
}

struct Operands {
  const dist::DistMatrix& a;
  const dist::DistMatrix& p_tent;
  Vector inv_diag;
  double omega;
};

/// The operands the merge kept on the device (see the file comment); `smoothed.p` gets its halo
/// plan, as the hierarchy gives it.
void check_kept_operands(const dist::Communicator& comm, const Operands& o, OffloadSpgemm which,
                         SmoothedProlongator& smoothed, cudaStream_t stream) {
  auto* kept = dynamic_cast<dist::gpu::DeviceHeldOperand*>(smoothed.held.get());
  ASSERT_NE(kept, nullptr) << "the device merge kept no operands";
  ASSERT_TRUE(smoothed.p_transposed.has_value());
  dist::DistMatrix& p = smoothed.p;
  p.halo = dist::HaloPlan::build(comm, p.col_partition, p.ghost_cols);
  const dist::CompactSpgemm ap(comm, o.a, p, dist::host_local_spgemm);
  const dist::ExtendedBSource source{p, ap.remote_rows(), ap.compact_to_global()};
  expect_same_block(dist::compact_extended_rows(source), ap.b_extended(), "B_ext's host reference", true);
  expect_same_block(cuda::download(dist::gpu::compact_extended_rows(kept->local, kept->nonlocal, source, stream)),
                    ap.b_extended(), "B_ext assembled on the device", true);
  DeviceOperatorSlot slot_kept, slot_uploaded;
  const auto held_a = [&](DeviceOperatorSlot& slot) {
    return dist::ExtendedA{nullptr, gpu::device_held_extended_a(stream, which)(o.a, slot)};
  };
  dist::DistPtap from_kept(comm, o.a, p, dist::device_local_spgemm(which), held_a(slot_kept), *smoothed.p_transposed,
                           smoothed.held);
  dist::DistPtap uploaded(comm, o.a, p, dist::device_local_spgemm(which), held_a(slot_uploaded),
                          *smoothed.p_transposed);
  smoothed.held.reset();
  SCOPED_TRACE("P^T A P (named as P below)");
  expect_same_p(from_kept.result(), uploaded.result(), true);
  // The product that read the kept operands keeps its outer product T on the device too (unless
  // T is empty: no device product ran); the one that uploaded its operands keeps none. Where C is
  // T (one rank), T's owned rows are C's local block bit for bit, once cut to C's shape; elsewhere
  // the blocks made from T and the host's rows that receive are C's, bit for bit.
  if (comm.size() == 1) EXPECT_TRUE(from_kept.result_is_own_partial()) << "one rank: C is T";
  const std::shared_ptr<dist::KeptOuterProduct> kept_t = from_kept.take_device_result();
  const dist::DistMatrix& c = from_kept.result();
  auto* on_device = kept_t ? dynamic_cast<dist::gpu::DeviceHeldProduct*>(kept_t->t.get()) : nullptr;
  // (No ASSERT before the collective recompute below: a rank returning alone would hang the others.)
  if (!on_device) {
    if (kept_t || c.nnz() > 0)
      ADD_FAILURE() << "the device kept no T (" << (kept_t ? "another kind of copy" : "none") << ")";
  } else if (on_device->product.rows < c.owned_rows()) {
    ADD_FAILURE() << "the kept T has " << on_device->product.rows << " rows, C " << c.owned_rows();
  } else if (kept_t->t_is_c) {
    EXPECT_TRUE(from_kept.result_is_own_partial());
    Csr<double> got = cuda::download(on_device->product, stream);
    EXPECT_EQ(got.row_ptr[static_cast<std::size_t>(c.local.rows)], got.nnz()) << "entries beyond C's rows";
    got.row_ptr.resize(static_cast<std::size_t>(c.local.rows + 1));
    got.rows = c.local.rows;
    got.cols = c.local.cols;
    expect_same_block(got, c.local, "T kept on the device, as C's local block", true);
    EXPECT_EQ(c.nonlocal.nnz(), 0);
  } else {
    EXPECT_FALSE(from_kept.result_is_own_partial());
    const auto [local, nonlocal] = dist::gpu::summed_blocks(on_device->product, *kept_t, c, stream);
    expect_same_block(cuda::download(local, stream), c.local, "C's local block made from T", true);
    expect_same_block(cuda::download(nonlocal, stream), c.nonlocal, "C's non-local block made from T", true);
  }
  // On several ranks, where P has ghost entries, some rank's C has rows that receive: the blocks
  // made from T took those rows from the host.
  const std::int64_t merged = kept_t ? static_cast<std::int64_t>(kept_t->merged_rows.size()) : 0;
  if (comm.size() > 1 && comm.allreduce(p.nonlocal.nnz(), dist::ReduceOp::sum) > 0)
    EXPECT_GT(comm.allreduce(merged, dist::ReduceOp::sum), 0) << "no rank's C had a row that receives";
  EXPECT_EQ(from_kept.take_device_result(), nullptr) << "T handed over twice";
  EXPECT_EQ(uploaded.take_device_result(), nullptr) << "a product of uploaded operands kept T";
  from_kept.recompute(comm, o.a, p);
  uploaded.recompute(comm, o.a, p);
  SCOPED_TRACE("recomputed");
  expect_same_p(from_kept.result(), uploaded.result(), true);
  EXPECT_EQ(from_kept.take_device_result(), nullptr) << "a recompute keeps no T";
  expect_same_block(from_kept.ap_product().b_extended(), ap.b_extended(), "B_ext made at the recompute", true);
}

/// P merged on the device, A_ext held on it (`held`) or copied on the host; checks that the
/// product recorded `want_entries` entries. With `held_p_tent` (the device tentative
/// prolongator's blocks of o.p_tent), the product assembles B_ext from them on the device; they
/// are freed then, and the host B_ext that a refresh makes is the host reference's.
dist::DistMatrix device_p(const dist::Communicator& comm, const Operands& o, OffloadSpgemm which, bool held,
                          std::int64_t want_entries, cudaStream_t stream,
                          std::shared_ptr<dist::HeldOperand> held_p_tent = nullptr) {
  DeviceOperatorSlot slot;
  dist::ExtendedA a_ext;
  if (held) a_ext.held = gpu::device_held_extended_a(stream, which)(o.a, slot);
  // The product drops its reference once it has read the blocks: this one keeps them to look at.
  const std::shared_ptr<const dist::gpu::DeviceHeldOperand> p_tent_blocks =
      std::dynamic_pointer_cast<const dist::gpu::DeviceHeldOperand>(held_p_tent);
  if (held_p_tent && !p_tent_blocks) ADD_FAILURE() << "P_tent's blocks are not held on the device";
  dist::CompactSpgemm product(comm, o.a, o.p_tent, dist::device_local_spgemm(which), a_ext,
                              dist::HostBExtended::at_symbolic, std::move(held_p_tent));
  const auto stats = std::make_shared<cuda::OffloadStats>();
  SmoothedProlongator smoothed = gpu::device_smoothing(stream, which, stats)(comm, product, o.p_tent, o.inv_diag, o.omega);
  EXPECT_EQ(product.product_entries(), want_entries) << "the product's entries, as multiply() records them";
  if (want_entries > 0) EXPECT_EQ(stats->products, 1) << "the product did not run on the device";
  if (p_tent_blocks) {
    EXPECT_EQ(p_tent_blocks->local.row_ptr.size() + p_tent_blocks->nonlocal.row_ptr.size(), 0u)
        << "P_tent's blocks were not freed once B_ext was made from them";
    product.refresh(comm, o.a, o.p_tent);
    expect_same_block(product.b_extended(),
                      dist::compact_extended_rows({o.p_tent, product.remote_rows(), product.compact_to_global()}),
                      "B_ext made on the host at the refresh", true);
  }
  // P^T from the device: the host's transpose of P's extended block, bit for bit.
  if (!smoothed.p_transposed) {
    ADD_FAILURE() << "the device merge returned no P^T";
  } else {
    expect_same_block(*smoothed.p_transposed, ref::transpose(dist::extended_block(smoothed.p)), "P^T", true);
  }
  if (held) check_kept_operands(comm, o, which, smoothed, stream);
  return std::move(smoothed.p);
}

/// The host merge of `local`'s product.
dist::DistMatrix host_merge(const dist::Communicator& comm, const Operands& o, const dist::LocalSpgemm& local,
                            std::int64_t* entries = nullptr) {
  dist::CompactSpgemm product(comm, o.a, o.p_tent, local);
  const Csr<double> ap = product.multiply(comm);
  if (entries) *entries = ap.nnz();
  return smoothed_blocks(comm, o.p_tent, ap, product.compact_to_global(), o.inv_diag, o.omega);
}

/// Every partition and threshold of `build`, k = 1 and 6. Returns P's entries in non-local
/// blocks over all ranks and cases.
std::int64_t check(const testing::GraphCaseBuilder& build) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const testing::NonBlockingStream stream;
  std::int64_t ghost_entries = 0;
  testing::for_each_partition_and_theta(comm, build, [&](const GraphCase& c, double theta) {
    const DistAggregates agg = dist_aggregate(comm, dist_strength_graph(comm, c.a, c.nodes, theta));
    for (const int k : {1, 6}) {
      SCOPED_TRACE("k = " + std::to_string(k));
      const DenseMatrix b = near_null_rows(c.a.owned_rows(), k, dist::testing::shared_seed(comm) + comm.rank());
      const DistTentative t = dist_tentative_prolongator(comm, agg, c.nodes, c.a, b);
      const Operands o{c.a, t.p, inverse_diagonal_or_one(c.a), 0.6};
      for (const OffloadSpgemm which : {OffloadSpgemm::tile, OffloadSpgemm::cusparse, OffloadSpgemm::hash}) {
        SCOPED_TRACE(cuda::to_string(which));
        std::int64_t entries = 0;
        const dist::DistMatrix want = host_merge(comm, o, dist::device_local_spgemm(which), &entries);
        expect_same_p(device_p(comm, o, which, true, entries, stream.s), want, true);
        {
          SCOPED_TRACE("P_tent's blocks kept on the device by its tentative prolongator");
          DistTentative on_device = gpu::device_tentative(stream.s)(comm, agg, c.nodes, c.a, b);
          expect_same_p(device_p(comm, o, which, true, entries, stream.s, std::move(on_device.held_p)), want, true);
        }
        if (which == OffloadSpgemm::tile) {
          SCOPED_TRACE("A_ext copied on the host");
          expect_same_p(device_p(comm, o, which, false, entries, stream.s), want, true);
          SCOPED_TRACE("against the host product");
          expect_same_p(want, host_merge(comm, o, dist::host_local_spgemm), false);
        }
        ghost_entries += want.nonlocal.nnz();
      }
    }
  });
  return comm.allreduce(ghost_entries, dist::ReduceOp::sum);
}

/// As check(); on several ranks P must have entries in ghost columns.
void check_across_ranks(const testing::GraphCaseBuilder& build) {
  const std::int64_t ghost_entries = check(build);
  if (dist::Communicator().size() > 1) EXPECT_GT(ghost_entries, 0) << "P had no ghost entries: a weak test";
}

/// With the level's 1 / a_ii divided on the device (the inverse diagonal step's, in the slot the
/// product's A_ext is held from), the merge reads it there: NaN in the host vector's place changes
/// nothing, and P is the host merge's bit for bit.
void check_slot_diagonal(const testing::GraphCaseBuilder& build) {
  const dist::Communicator comm;
  dist::use_rank_device(comm);
  const testing::NonBlockingStream stream;
  const OffloadSpgemm which = OffloadSpgemm::tile;
  testing::for_each_partition_and_theta(comm, build, [&](const GraphCase& c, double theta) {
    const DistAggregates agg = dist_aggregate(comm, dist_strength_graph(comm, c.a, c.nodes, theta));
    const DenseMatrix b = near_null_rows(c.a.owned_rows(), 1, dist::testing::shared_seed(comm) + comm.rank());
    const DistTentative t = dist_tentative_prolongator(comm, agg, c.nodes, c.a, b);
    const Operands o{c.a, t.p, inverse_diagonal_or_one(c.a), 0.6};
    const dist::DistMatrix want = host_merge(comm, o, dist::device_local_spgemm(which));
    DeviceOperatorSlot slot;
    ASSERT_EQ(gpu::dist_device_inverse_diagonal(comm, c.a, slot, stream.s), o.inv_diag);
    dist::ExtendedA a_ext;
    a_ext.held = gpu::device_held_extended_a(stream.s, which)(o.a, slot);
    dist::CompactSpgemm product(comm, o.a, o.p_tent, dist::device_local_spgemm(which), a_ext);
    const Vector nan(o.inv_diag.size(), std::numeric_limits<double>::quiet_NaN());
    expect_same_p(gpu::device_smoothing(stream.s, which)(comm, product, o.p_tent, nan, o.omega).p, want, true);
  });
}

TEST(DistDeviceSmoothing, ReadsTheLevelsDeviceInverseDiagonal) {
  check_slot_diagonal(testing::generated("poisson3d:7"));
  check_slot_diagonal(testing::generated("elasticity3d:4"));
}

TEST(DistDeviceSmoothing, Poisson7Point) { check_across_ranks(testing::generated("poisson3d:7")); }

TEST(DistDeviceSmoothing, Poisson27Point) { check_across_ranks(testing::generated("poisson3d27:6")); }

TEST(DistDeviceSmoothing, ElasticityBlockSize3) { check_across_ranks(testing::generated("elasticity3d:4")); }

TEST(DistDeviceSmoothing, UnsymmetricPatternTwoDofNodes) { check_across_ranks(testing::unsymmetric(202, 2)); }

TEST(DistDeviceSmoothing, IsolatedNodesAndEmptyRows) { check(testing::isolated_nodes(157)); }

TEST(DistDeviceSmoothing, PowerLawGraph) { check_across_ranks(testing::power_law(10, 8)); }

TEST(DistDeviceSmoothing, MixedNodeSizes) { check_across_ranks(testing::mixed_node_sizes(211)); }

TEST(DistDeviceSmoothing, CoarseLevelOfElasticity) { check(testing::coarse_level("elasticity3d:6")); }

TEST(DistDeviceSmoothing, OneByOne) { check(testing::tiny(1)); }

TEST(DistDeviceSmoothing, Empty) { check(testing::tiny(0)); }

}  // namespace
}  // namespace tessera::amg
