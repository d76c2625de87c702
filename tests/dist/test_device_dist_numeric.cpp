// DeviceDistSpgemm / DeviceDistPtap: the device-resident numeric phase on the host symbolic
// result, against the host DistSpgemm / DistPtap recompute on the same new values: identical
// patterns, values within the two-summation-orders bound of test_device_spgemm.cpp
// (2*gamma_{K+2}*sum|a_ik b_kj|), and a second recompute bitwise equal to the first. Uneven
// partitions with an empty rank, Poisson, elasticity and an R-MAT power-law graph with an
// aggregation prolongator, rectangular P, cancellation; DeviceDistPtap planned from the host
// matrices and from device copies of them.
// Also the device extended block (A's rows over [owned | ghost] columns, and its tagged form)
// against the host's. A GPU on every rank, maybe shared (label gpu; exit 77 without).
#include <algorithm>
#include <memory>

#include "dist/cuda/device_dist_ptap.hpp"
#include "dist/cuda/device_dist_spgemm.hpp"
#include "dist/cuda/device_extended_block.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"

namespace tessera::dist {
namespace {

using gpu::DeviceDistMatrix;
using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

Csr<double> new_values(Csr<double> a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (double& v : a.values) v = (rng() & 1 ? 1 : -1) * u(rng);
  return a;
}

/// `pattern` with the device values of `c` (waits for the stream).
DistMatrix downloaded(const DistMatrix& pattern, const DeviceDistMatrix& c, cudaStream_t s) {
  DistMatrix m = pattern;
  m.local.values = c.local.values.download<HostArray<double>>(s);
  m.nonlocal.values = c.nonlocal.values.download<HostArray<double>>(s);
  return m;
}

/// Runs `recompute(dc)` twice on a poisoned C: the first result against `want`, the second
/// bitwise equal to the first (no atomics anywhere, skewed rows included).
template <class Recompute>
void expect_recompute_matches(const Communicator& comm, gpu::DeviceContext& ctx, const DistMatrix& pattern,
                              const DistMatrix& want, const Csr<double>& terms, const Csr<double>& magnitude,
                              Recompute&& recompute) {
  DeviceDistMatrix dc(pattern, ctx.compute());
  dc.local.values.fill_bytes(0xff, ctx.compute());  // NaN: every value must be written
  dc.nonlocal.values.fill_bytes(0xff, ctx.compute());
  recompute(dc);
  const DistMatrix first = downloaded(pattern, dc, ctx.compute());
  testing::expect_matches_reference(comm, gather(comm, first), gather(comm, want), terms, magnitude);
  recompute(dc);
  const DistMatrix second = downloaded(pattern, dc, ctx.compute());
  EXPECT_EQ(first.local.values, second.local.values) << "rank " << comm.rank() << ": recompute is not reproducible";
  EXPECT_EQ(first.nonlocal.values, second.nonlocal.values) << "rank " << comm.rank();
}

/// Returns the listed (skewed-row) warp tasks of the local products, summed over the ranks.
std::int64_t check_spgemm(const Communicator& comm, gpu::DeviceContext& ctx, const Csr<double>& a, const Csr<double>& b,
                  const RowPartition& rows, const RowPartition& inner, const RowPartition& outer, std::uint64_t seed) {
  const Csr<double> a2 = new_values(a, seed), b2 = new_values(b, seed + 1);
  const DistMatrix da = testing::distribute(comm, a, rows, inner), db = testing::distribute(comm, b, inner, outer);
  const DistMatrix da2 = testing::distribute(comm, a2, rows, inner), db2 = testing::distribute(comm, b2, inner, outer);
  DistSpgemm host(comm, da, db);
  const DistMatrix pattern = host.result();
  gpu::DeviceDistSpgemm device(ctx, host, da, db);
  host.recompute(comm, da2, db2);  // the reference: the host numeric phase on the new values
  DeviceDistMatrix a_dev(da2, ctx.compute()), b_dev(db2, ctx.compute());
  expect_recompute_matches(comm, ctx, pattern, host.result(), ref::spgemm(testing::ones(a), testing::ones(b)),
                           ref::spgemm(testing::absolute(a2), testing::absolute(b2)),
                           [&](DeviceDistMatrix& c) { device.recompute(a_dev, b_dev, c); });
  return comm.allreduce(device.info().listed_tasks, ReduceOp::sum);
}

std::int64_t check_ptap(const Communicator& comm, gpu::DeviceContext& ctx, const Csr<double>& a, const Csr<double>& p,
                const RowPartition& rows, const RowPartition& coarse, std::uint64_t seed) {
  const Csr<double> a2 = new_values(a, seed), p2 = new_values(p, seed + 1);
  const DistMatrix da = testing::distribute(comm, a, rows, rows), dp = testing::distribute(comm, p, rows, coarse);
  const DistMatrix da2 = testing::distribute(comm, a2, rows, rows), dp2 = testing::distribute(comm, p2, rows, coarse);
  DistPtap host(comm, da, dp);
  const DistMatrix pattern = host.result();
  gpu::DeviceDistPtap device(ctx, host, da, dp);
  // The same plan made from device copies of A and P (an AMG level's), its maps tagged there.
  const DeviceDistMatrix a_copy(da, ctx.compute()), p_held(dp, ctx.compute());
  gpu::HeldOperand a_held{&a_copy, {}};
  gpu::DeviceDistPtap from_held(ctx, host, da, dp, &a_held, &p_held);
  host.recompute(comm, da2, dp2);
  DeviceDistMatrix a_dev(da2, ctx.compute()), p_dev(dp2, ctx.compute());
  for (gpu::DeviceDistPtap* plan : {&device, &from_held})
    expect_recompute_matches(comm, ctx, pattern, host.result(), ref::ptap(testing::ones(a), testing::ones(p)),
                             ref::ptap(testing::absolute(a2), testing::absolute(p2)),
                             [&](DeviceDistMatrix& c) { plan->recompute(a_dev, p_dev, c); });
  return comm.allreduce(device.listed_tasks(), ReduceOp::sum);
}

/// P(i, i / size) = 1 with one trailing partial aggregate: the shape of SA-AMG's P_tent.
Csr<double> aggregation_prolongator(std::int64_t n, std::int64_t size) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) r.push_back(i), c.push_back(i / size), v.push_back(1.0);
  return csr_from_triplets<double>(n, (n + size - 1) / size, r, c, v);
}

/// The 1-D Laplacian [-1 2 -1] of n rows.
Csr<double> tridiagonal(std::int64_t n) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = std::max<std::int64_t>(0, i - 1); j <= std::min(n - 1, i + 1); ++j)
      r.push_back(i), c.push_back(j), v.push_back(i == j ? 2.0 : -1.0);
  return csr_from_triplets<double>(n, n, r, c, v);
}

class DeviceDistNumeric : public ::testing::Test {
 protected:
  void SetUp() override { ctx = std::make_unique<gpu::DeviceContext>(comm); }
  const Communicator comm;
  std::unique_ptr<gpu::DeviceContext> ctx;
};

TEST_F(DeviceDistNumeric, RandomSquareSpgemmOnEveryPartition) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int i = 0;
  for (std::int64_t n : {0, 1, 11, 70, 181}) {
    const Csr<double> a = random_csr(RandomSpec{n, n, 0.06, 0.1, 0.1, false}, seed + i++);
    const Csr<double> b = random_csr(RandomSpec{n, n, 0.06, 0.1, 0.1, true}, seed + i++);
    for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(part.name + ", n = " + std::to_string(n));
      check_spgemm(comm, *ctx, a, b, part.partition, part.partition, part.partition, seed + i++);
    }
  }
}

TEST_F(DeviceDistNumeric, RectangularSpgemmWithThreePartitions) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_rectangular_product_case(comm, seed,
                                             [&](auto&&... args) { check_spgemm(comm, *ctx, args...); });
}

TEST_F(DeviceDistNumeric, CancellationKeepsTheStructuralPattern) {
  // Row 0 of A is (1, 1), B's rows are (1) and (-1): C(0,0) is an exact 0 that stays stored.
  const std::uint64_t seed = testing::shared_seed(comm);
  const Csr<double> a = csr_from_triplets<double>(3, 2, {0, 0, 2}, {0, 1, 1}, {1.0, 1.0, 2.0});
  const Csr<double> b = csr_from_triplets<double>(2, 1, {0, 1}, {0, 0}, {1.0, -1.0});
  const RowPartition rows = testing::uneven_partition(comm, 3, seed);
  const RowPartition inner = RowPartition::balanced_rows(2, comm.size());
  const RowPartition outer = RowPartition::balanced_rows(1, comm.size());
  const DistMatrix da = testing::distribute(comm, a, rows, inner), db = testing::distribute(comm, b, inner, outer);
  const DistSpgemm host(comm, da, db);
  gpu::DeviceDistSpgemm device(*ctx, host, da, db);
  DeviceDistMatrix a_dev(da, ctx->compute()), b_dev(db, ctx->compute()), c_dev(host.result(), ctx->compute());
  c_dev.local.values.fill_bytes(0xff, ctx->compute());  // NaN: the recompute must write both values
  c_dev.nonlocal.values.fill_bytes(0xff, ctx->compute());
  device.recompute(a_dev, b_dev, c_dev);
  const Csr<double> c = gather(comm, downloaded(host.result(), c_dev, ctx->compute()));
  if (comm.rank() == 0) {
    ASSERT_EQ(c.nnz(), 2) << "the cancelled C(0,0) must stay stored";
    EXPECT_EQ(c.values[0], 0.0);
    EXPECT_EQ(c.values[1], -2.0);  // C(2,0) = A(2,1) B(1,0) = 2 * -1
  }
}

TEST_F(DeviceDistNumeric, GeneratedSquaredAndAggregationGalerkin) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Elasticity: block size 3, aggregates of two nodes (6 dofs), so aggregates straddle tiles.
  // rmat:9:8: unsymmetric, hub rows of ~150 entries next to empty ones.
  const std::pair<const char*, std::int64_t> cases[] = {
      {"poisson2d:13", 4}, {"poisson3d:7", 4}, {"poisson3d27:5", 8}, {"elasticity3d:3", 6}, {"rmat:9:8", 4}};
  for (const auto& [spec, aggregate] : cases) {
    SCOPED_TRACE(spec);
    const Csr<double> a = gen::generate(gen::parse_spec(spec));
    const Csr<double> p = aggregation_prolongator(a.rows, aggregate);
    for (const auto& part : testing::test_partitions(comm, a, seed)) {
      SCOPED_TRACE(part.name);
      check_spgemm(comm, *ctx, a, a, part.partition, part.partition, part.partition, seed + 1);
      check_ptap(comm, *ctx, a, p, part.partition, testing::uneven_partition(comm, p.cols, seed + 2), seed + 3);
    }
  }
}

TEST_F(DeviceDistNumeric, RandomRectangularGalerkin) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_rectangular_galerkin_case(comm, seed, [&](auto&&... args) { check_ptap(comm, *ctx, args...); });
}

TEST_F(DeviceDistNumeric, SkewedRowsAreListedAndRecomputeBitForBit) {
  // A dense row over random rows times a scattering permutation: the rank owning the dense row
  // lists its pairs (tile_spgemm_plan.cu), and its recompute must still repeat bit for bit.
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_csr(RandomSpec{1201, 1201, 0.005, 0.05, 0, true}, seed);
  const Csr<double> p = tessera::testing::scattering_permutation(a.rows);
  for (const auto& part : testing::test_partitions(comm, a, seed)) {
    SCOPED_TRACE(part.name);
    EXPECT_GT(check_spgemm(comm, *ctx, a, p, part.partition, part.partition, part.partition, seed + 1), 0)
        << "no rank listed the dense row";
  }
}

TEST_F(DeviceDistNumeric, TridiagonalProducts) {
  // Three entries per row, an odd size: the sparsest products, every one searched.
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = tridiagonal(8 * 5 * comm.size() + 3);
  const Csr<double> p = aggregation_prolongator(a.rows, 3);
  for (const auto& part : testing::test_partitions(comm, a, seed)) {
    SCOPED_TRACE(part.name);
    EXPECT_EQ(check_spgemm(comm, *ctx, a, a, part.partition, part.partition, part.partition, seed + 1), 0);
    EXPECT_EQ(check_ptap(comm, *ctx, a, p, part.partition, testing::uneven_partition(comm, p.cols, seed + 2), seed + 3),
              0);
  }
}

TEST_F(DeviceDistNumeric, RecomputeOnWrongOperandsOfOneRankThrowsOnEveryRank) {
  // Only the last rank passes a C of another pattern: every rank must throw before the NCCL
  // exchange instead of leaving the others in ncclRecv.
  const Csr<double> a = gen::generate(gen::parse_spec("poisson2d:9"));
  const RowPartition rows = RowPartition::balanced_rows(a.rows, comm.size());
  const DistMatrix da = testing::distribute(comm, a, rows, rows);
  const Csr<double> p = aggregation_prolongator(a.rows, 4);
  const DistMatrix dp = testing::distribute(comm, p, rows, RowPartition::balanced_rows(p.cols, comm.size()));
  const bool wrong = comm.rank() == comm.size() - 1;
  DeviceDistMatrix a_dev(da, ctx->compute()), p_dev(dp, ctx->compute());

  const DistSpgemm spgemm_host(comm, da, da);
  gpu::DeviceDistSpgemm spgemm(*ctx, spgemm_host, da, da);
  DeviceDistMatrix c_dev(wrong ? da : spgemm_host.result(), ctx->compute());
  EXPECT_THROW(spgemm.recompute(a_dev, a_dev, c_dev), InputError);

  const DistPtap ptap_host(comm, da, dp);
  gpu::DeviceDistPtap ptap(*ctx, ptap_host, da, dp);
  DeviceDistMatrix wrong_a(wrong ? dp : da, ctx->compute()), coarse(ptap_host.result(), ctx->compute());
  EXPECT_THROW(ptap.recompute(wrong_a, p_dev, coarse), InputError);

  // Every rank is still in step: a correct recompute after the failures works.
  DeviceDistMatrix c_right(spgemm_host.result(), ctx->compute());
  spgemm.recompute(a_dev, a_dev, c_right);
  EXPECT_EQ(comm.allreduce(std::int64_t(1), ReduceOp::sum), comm.size());
}

/// gpu::extended_block against the host extended_block, bit for bit, into a poisoned CSR of
/// the right sizes (every offset, column and value must be written) and into a new one.
void expect_extended_block_matches(gpu::DeviceContext& ctx, const DistMatrix& a) {
  const Csr<double> want = extended_block(a);
  const DeviceDistMatrix device(a, ctx.compute());
  tessera::cuda::DeviceCsr<double> poisoned = tessera::cuda::upload(want, ctx.compute());
  poisoned.row_ptr.fill_bytes(0xff, ctx.compute());
  poisoned.col_idx.fill_bytes(0xff, ctx.compute());
  poisoned.values.fill_bytes(0xff, ctx.compute());  // NaN
  gpu::fill_extended_block(device, poisoned, ctx.compute());
  for (const Csr<double>& got : {tessera::cuda::download(poisoned, ctx.compute()),
                                 tessera::cuda::download(gpu::extended_block(device, ctx.compute()), ctx.compute())}) {
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_EQ(got.cols, want.cols);
    EXPECT_EQ(got.row_ptr, want.row_ptr) << "rank " << a.rank;
    EXPECT_EQ(got.col_idx, want.col_idx) << "rank " << a.rank;
    EXPECT_EQ(got.values, want.values) << "rank " << a.rank;
  }
  // The value maps' version: each value the index of its source in A's [local | non-local].
  EXPECT_EQ(tessera::cuda::download(gpu::tagged_extended_block(device, ctx.compute()), ctx.compute()),
            extended_block(gpu::tagged(a)))
      << "rank " << a.rank;
}

// The products' A read from a device copy: A's rows over [owned | ghost] columns, assembled on
// the GPU, equal the host's. Random rows (empty ones included), a power-law graph, Poisson,
// elasticity, sizes that are not multiples of 8, 1x1 and empty, on every test partition.
TEST_F(DeviceDistNumeric, ExtendedBlockOnTheDeviceIsTheHosts) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<std::pair<std::string, Csr<double>>> cases;
  cases.emplace_back("random 203x203 with empty rows", random_csr(RandomSpec{203, 203, 0.05, 0.2, 0.1, false}, seed));
  cases.emplace_back("1x1", random_csr(RandomSpec{1, 1, 1.0, 0.0, 0.0, false}, seed + 1));
  cases.emplace_back("empty 0x0", Csr<double>::empty(0, 0));
  for (const char* spec : {"rmat:9:8", "poisson3d:7", "elasticity3d:3"})
    cases.emplace_back(spec, gen::generate(gen::parse_spec(spec)));
  std::uint64_t i = 2;
  for (const auto& [name, a] : cases) {
    for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(name + ", " + part.name);
      expect_extended_block_matches(*ctx, testing::distribute(comm, a, part.partition, part.partition));
    }
  }
}

// The fixed summation order of the device PtAP (value_maps.hpp) against the obvious host
// grouping: per output, its contributions' sources in ascending contribution index; outputs
// without contributions, none at all, and a single output.
TEST_F(DeviceDistNumeric, SummationPlanGroupsContributionsInIndexOrder) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const cudaStream_t s = ctx->compute();
  for (const auto& [contributions, outputs] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 0}, {0, 5}, {1, 1}, {7, 1}, {1000, 37}, {50000, 70001}}) {
    SCOPED_TRACE(std::to_string(contributions) + " contributions into " + std::to_string(outputs) + " outputs");
    std::vector<std::int64_t> target(contributions), source(contributions);
    for (std::int64_t i = 0; i < contributions; ++i) {
      target[i] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(outputs));
      source[i] = static_cast<std::int64_t>(rng() % 1000003);
    }
    std::vector<std::vector<std::int64_t>> by_output(static_cast<std::size_t>(outputs));
    for (std::int64_t i = 0; i < contributions; ++i) by_output[target[i]].push_back(source[i]);
    std::vector<std::int64_t> want_ptr(1, 0), want_order;
    for (const auto& sources : by_output) {
      want_order.insert(want_order.end(), sources.begin(), sources.end());
      want_ptr.push_back(static_cast<std::int64_t>(want_order.size()));
    }
    tessera::cuda::DeviceBuffer<std::int64_t> d_target, d_source, seg_ptr, order;
    d_target.upload(target, s);
    d_source.upload(source, s);
    seg_ptr.allocate(3, s);
    seg_ptr.fill_bytes(0xff, s);  // poisoned, and of another size: the plan sizes its outputs
    gpu::plan_sum_in_index_order(d_target, d_source, outputs, seg_ptr, order, s);
    EXPECT_EQ(seg_ptr.download(s), want_ptr);
    EXPECT_EQ(order.download(s), want_order);
  }
}

TEST_F(DeviceDistNumeric, OperandsOfAnotherPatternAreAnInputError) {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson2d:5"));
  const RowPartition rows = RowPartition::balanced_rows(a.rows, comm.size());
  const DistMatrix da = testing::distribute(comm, a, rows, rows);
  const DistSpgemm host(comm, da, da);
  const DistMatrix empty = testing::distribute(comm, Csr<double>::empty(a.rows, a.cols), rows, rows);
  // Not collective: the ranks whose rows differ from the symbolic phase's throw.
  if (da.nnz() > 0) EXPECT_THROW(gpu::DeviceDistSpgemm(*ctx, host, empty, da), InputError);
}

}  // namespace
}  // namespace tessera::dist
