// DistSpgemm and DistPtap with their rank-local products on the rank's GPU
// (dist::device_local_spgemm, tile SpGEMM and cuSPARSE) against the same distributed products
// with the host reference ref::spgemm: identical patterns (cancelled entries kept), values equal
// up to the summation order (bound: 2*gamma_{K+2}*sum|a_ik b_kj| per entry, K its term count),
// on uneven partitions with a rank owning no rows, Poisson operators, an aggregation
// prolongator, and numeric recomputes with new values. Label gpu: a GPU on every rank (exit 77
// without); ranks sharing one exchange through the host-staged transport.
#include "dist/cuda/device_local_spgemm.hpp"
#include "dist/ptap.hpp"
#include "dist/spgemm.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"

namespace tessera::dist {
namespace {

using cuda::OffloadSpgemm;
using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

const OffloadSpgemm kDeviceProducts[] = {OffloadSpgemm::tile, OffloadSpgemm::cusparse, OffloadSpgemm::hash};

Csr<double> new_values(Csr<double> a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (double& v : a.values) v = (rng() & 1 ? 1 : -1) * u(rng);
  return a;
}

/// The device result against the host one (both gathered on rank 0): same pattern, values
/// within the two-summation-orders bound. `terms` / `magnitude` as in expect_matches_reference.
void expect_device_matches_host(const Communicator& comm, const DistMatrix& device, const DistMatrix& host,
                                const Csr<double>& terms, const Csr<double>& magnitude) {
  const Csr<double> got = gather(comm, device), want = gather(comm, host);
  testing::expect_matches_reference(comm, got, want, terms, magnitude);
}

void check_spgemm(const Communicator& comm, const Csr<double>& a, const Csr<double>& b, const RowPartition& rows,
                  const RowPartition& inner, const RowPartition& outer, std::uint64_t seed) {
  const Csr<double> terms = ref::spgemm(testing::ones(a), testing::ones(b));
  const Csr<double> magnitude = ref::spgemm(testing::absolute(a), testing::absolute(b));
  const DistMatrix da = testing::distribute(comm, a, rows, inner), db = testing::distribute(comm, b, inner, outer);
  const Csr<double> a2 = new_values(a, seed), b2 = new_values(b, seed + 1);
  const DistMatrix da2 = testing::distribute(comm, a2, rows, inner), db2 = testing::distribute(comm, b2, inner, outer);
  const DistSpgemm host(comm, da, db), host2(comm, da2, db2);
  for (const OffloadSpgemm which : kDeviceProducts) {
    SCOPED_TRACE(cuda::to_string(which));
    const auto stats = std::make_shared<cuda::OffloadStats>();
    DistSpgemm device(comm, da, db, device_local_spgemm(which, stats));
    EXPECT_EQ(device.result().row_partition, rows);
    EXPECT_EQ(device.result().col_partition, outer);
    expect_device_matches_host(comm, device.result(), host.result(), terms, magnitude);
    // A rank whose A rows hold nothing multiplies nothing: the offload skips the device.
    if (da.nnz() == 0) EXPECT_EQ(stats->products, 0);
    const int calls = stats->products;
    device.recompute(comm, da2, db2);  // new values, same patterns
    EXPECT_EQ(stats->products, 2 * calls) << "one local product per phase";
    expect_device_matches_host(comm, device.result(), host2.result(), terms,
                               ref::spgemm(testing::absolute(a2), testing::absolute(b2)));
  }
}

void check_ptap(const Communicator& comm, const Csr<double>& a, const Csr<double>& p, const RowPartition& rows,
                const RowPartition& coarse, std::uint64_t seed) {
  const Csr<double> terms = ref::ptap(testing::ones(a), testing::ones(p));
  const DistMatrix da = testing::distribute(comm, a, rows, rows), dp = testing::distribute(comm, p, rows, coarse);
  const Csr<double> a2 = new_values(a, seed), p2 = new_values(p, seed + 1);
  const DistMatrix da2 = testing::distribute(comm, a2, rows, rows), dp2 = testing::distribute(comm, p2, rows, coarse);
  const DistPtap host(comm, da, dp), host2(comm, da2, dp2);
  for (const OffloadSpgemm which : kDeviceProducts) {
    SCOPED_TRACE(cuda::to_string(which));
    const auto stats = std::make_shared<cuda::OffloadStats>();
    DistPtap device(comm, da, dp, device_local_spgemm(which, stats));
    EXPECT_EQ(device.result().row_partition, coarse);
    EXPECT_EQ(device.result().col_partition, coarse);
    expect_device_matches_host(comm, device.result(), host.result(), terms,
                               ref::ptap(testing::absolute(a), testing::absolute(p)));
    if (da.owned_rows() == 0) EXPECT_EQ(stats->products, 0) << "a rank owning no rows has no local product";
    device.recompute(comm, da2, dp2);
    expect_device_matches_host(comm, device.result(), host2.result(), terms,
                               ref::ptap(testing::absolute(a2), testing::absolute(p2)));
  }
}

/// P(i, i / size) = 1 with one trailing partial aggregate: the shape of SA-AMG's P_tent.
Csr<double> aggregation_prolongator(std::int64_t n, std::int64_t size) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) r.push_back(i), c.push_back(i / size), v.push_back(1.0);
  return csr_from_triplets<double>(n, (n + size - 1) / size, r, c, v);
}

class DistDeviceSpgemm : public ::testing::Test {
 protected:
  void SetUp() override { use_rank_device(comm); }
  const Communicator comm;
};

TEST_F(DistDeviceSpgemm, RandomSquareOnEveryPartition) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int i = 0;
  for (std::int64_t n : {0, 1, 11, 70, 181}) {
    const Csr<double> a = random_csr(RandomSpec{n, n, 0.06, 0.1, 0.1, false}, seed + i++);
    const Csr<double> b = random_csr(RandomSpec{n, n, 0.06, 0.1, 0.1, true}, seed + i++);
    for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(part.name + ", n = " + std::to_string(n));
      check_spgemm(comm, a, b, part.partition, part.partition, part.partition, seed + i++);
    }
  }
}

TEST_F(DistDeviceSpgemm, RectangularWithThreePartitions) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_rectangular_product_case(comm, seed, [&](auto&&... args) { check_spgemm(comm, args...); });
}

TEST_F(DistDeviceSpgemm, CancellationKeepsTheStructuralPattern) {
  // Row 0 of A is (1, 1), B's rows are (1) and (-1): C(0,0) cancels to an exact 0 that stays.
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = csr_from_triplets<double>(3, 2, {0, 0, 2}, {0, 1, 1}, {1.0, 1.0, 2.0});
  const Csr<double> b = csr_from_triplets<double>(2, 1, {0, 1}, {0, 0}, {1.0, -1.0});
  const RowPartition rows = testing::uneven_partition(comm, 3, seed);
  const RowPartition inner = RowPartition::balanced_rows(2, comm.size());
  const RowPartition outer = RowPartition::balanced_rows(1, comm.size());
  check_spgemm(comm, a, b, rows, inner, outer, seed + 1);
  for (const OffloadSpgemm which : kDeviceProducts) {
    const DistSpgemm device(comm, testing::distribute(comm, a, rows, inner), testing::distribute(comm, b, inner, outer),
                            device_local_spgemm(which));
    const Csr<double> c = gather(comm, device.result());
    if (comm.rank() == 0) EXPECT_EQ(c.nnz(), 2) << cuda::to_string(which) << ": the cancelled C(0,0) must be stored";
  }
}

TEST_F(DistDeviceSpgemm, PoissonSquaredAndGalerkin) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const char* spec : {"poisson2d:13", "poisson3d:7"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = gen::generate(gen::parse_spec(spec));
    const Csr<double> p = aggregation_prolongator(a.rows, 4);
    for (const auto& part : testing::test_partitions(comm, a, seed)) {
      SCOPED_TRACE(part.name);
      check_spgemm(comm, a, a, part.partition, part.partition, part.partition, seed + 1);
      check_ptap(comm, a, p, part.partition, testing::uneven_partition(comm, p.cols, seed + 2), seed + 3);
    }
  }
}

TEST_F(DistDeviceSpgemm, RandomRectangularGalerkin) {
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_rectangular_galerkin_case(comm, seed, [&](auto&&... args) { check_ptap(comm, args...); });
}

TEST_F(DistDeviceSpgemm, NonConformalLocalProductIsAnInputError) {
  const Csr<double> a = Csr<double>::empty(3, 4), b = Csr<double>::empty(5, 2);
  for (const OffloadSpgemm which : kDeviceProducts) EXPECT_THROW(device_local_spgemm(which)(a, b), InputError);
  EXPECT_THROW(cuda::parse_offload_spgemm("cublas"), InputError);
}

}  // namespace
}  // namespace tessera::dist
