// Distributed SpMV/SpMM, assembly round trips and global reductions against the serial
// reference, over balanced, uneven (one rank empty) and nnz-balanced partitions.
#include <cmath>

#include "dist/spmv.hpp"
#include "dist_test_util.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "support/matrix_files.hpp"

namespace tessera::dist {
namespace {

using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

using tessera::testing::random_values;

// |y - y_ref| <= 2 gamma_{len+2} (|A||x|)_i: two summation orders of one row.
void expect_rows_close(const Csr<double>& a, const std::vector<double>& x, const std::vector<double>& got,
                       const std::vector<double>& want, std::int64_t k) {
  ASSERT_EQ(got.size(), want.size());
  const double eps = std::numeric_limits<double>::epsilon() / 2;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      double magnitude = 0;
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        magnitude += std::fabs(a.values[p] * x[a.col_idx[p] * k + j]);
      const double m = static_cast<double>(a.row_length(i) + 2), gamma = m * eps / (1 - m * eps);
      ASSERT_LE(std::fabs(got[i * k + j] - want[i * k + j]), 2 * gamma * magnitude) << "row " << i << " col " << j;
    }
}

std::vector<double> slice(const std::vector<double>& v, std::int64_t begin, std::int64_t end, std::int64_t k) {
  return std::vector<double>(v.begin() + begin * k, v.begin() + end * k);
}

// y = A x distributed (k = 1: spmv, else spmm) vs the reference on the global matrix.
void check_product(const Communicator& comm, const Csr<double>& a, const RowPartition& rows, const RowPartition& cols,
                   std::int64_t k, std::uint64_t seed) {
  const DistMatrix da = testing::distribute(comm, a, rows, cols);
  const int me = comm.rank();
  const std::vector<double> x = random_values(a.cols * k, seed);
  std::vector<double> y;
  DistStats stats;
  if (k == 1) {
    DistVector dx{slice(x, cols.begin(me), cols.end(me), 1), {}};
    spmv(comm, da, dx, y, &stats);
    // The overload that reads the owned entries in place (poisoned ghost buffer and y) agrees
    // bit for bit.
    std::vector<double> ghosts(3, std::nan("")), in_place(y.size() + 2, std::nan(""));
    spmv(comm, da, dx.owned, ghosts, in_place);
    EXPECT_EQ(in_place, y);
  } else {
    DistMultiVector dx{k, slice(x, cols.begin(me), cols.end(me), k), {}}, dy;
    spmm(comm, da, dx, dy, &stats);
    y = dy.owned;
  }
  EXPECT_EQ(stats.halo_bytes, da.halo.num_ghosts() * k * 8);
  EXPECT_EQ(stats.nnz, da.nnz());
  const std::vector<double> all = comm.gatherv(y, 0);
  if (me != 0) return;
  std::vector<double> want;
  if (k == 1) {
    want.assign(static_cast<std::size_t>(a.rows), 0.0);
    ref::spmv(1.0, a, x, 0.0, want);
  } else {
    DenseMatrix dx(a.cols, k, Layout::row_major), dy(a.rows, k, Layout::row_major);
    dx.data = x;
    ref::spmm(1.0, a, dx, 0.0, dy);
    want = dy.data;
  }
  expect_rows_close(a, x, all, want, k);
}

TEST(DistSpmv, MatchesReferenceOnEveryPartition) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t sizes[] = {0, 1, 9, 37, 203};
  int i = 0;
  for (std::int64_t n : sizes) {
    const Csr<double> a = random_csr(RandomSpec{n, n, 0.08, 0.15, 0.1, true}, seed + i++);
    for (const auto& part : testing::test_partitions(comm, a, seed + i)) {
      SCOPED_TRACE(part.name + ", n = " + std::to_string(n));
      for (std::int64_t k : {1, 3}) check_product(comm, a, part.partition, part.partition, k, seed + i++);
    }
  }
}

TEST(DistSpmv, RectangularWithItsOwnColumnPartition) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_csr(RandomSpec{150, 43, 0.1, 0.1, 0.1, false}, seed);
  const RowPartition cols = testing::uneven_partition(comm, a.cols, seed + 1);
  for (const auto& part : testing::test_partitions(comm, a, seed + 2)) {
    SCOPED_TRACE(part.name);
    check_product(comm, a, part.partition, cols, 1, seed + 3);
    check_product(comm, a, part.partition, cols, 2, seed + 4);
  }
}

TEST(DistSpmv, BlockDiagonalNeedsNoHalo) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * comm.size() * 3 + 5;
  const RowPartition p = testing::uneven_partition(comm, n, seed);
  // Entries only inside each rank's diagonal block: no rank has a ghost column.
  const Csr<double> full = random_csr(RandomSpec{n, n, 0.3, 0.1, 0, false}, seed + 1);
  const Csr<double> a = testing::block_diagonal_part(full, p);
  const DistMatrix da = testing::distribute(comm, a, p, p);
  EXPECT_EQ(da.ghost_cols.size(), 0u);
  EXPECT_EQ(da.halo.num_sent(), 0);
  check_product(comm, a, p, p, 1, seed + 2);
  check_product(comm, a, p, p, 4, seed + 3);
}

TEST(DistSpmv, RefusesYThatIsXsOwnedVector) {
  const Communicator comm;
  const std::int64_t n = 8 * comm.size() + 3;
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const DistMatrix da = testing::distribute(comm, random_csr(RandomSpec{n, n, 0.2, 0.1, 0, false}, 7), p, p);
  std::vector<double> x(static_cast<std::size_t>(p.size(comm.rank())), 1.0), ghosts;
  EXPECT_THROW(
      try { spmv(comm, da, x, ghosts, x); } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("y is x's owned vector"), std::string::npos) << e.what();
        throw;
      },
      InputError);
}

TEST(DistMatrix, AssemblyAndGatherRoundTripExactly) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_csr(RandomSpec{97, 61, 0.1, 0.2, 0.2, false}, seed);
  const RowPartition cols = RowPartition::balanced_rows(a.cols, comm.size());
  for (const auto& part : testing::test_partitions(comm, a, seed + 1)) {
    SCOPED_TRACE(part.name);
    DistMatrix da = testing::distribute(comm, a, part.partition, cols);
    EXPECT_TRUE(std::is_sorted(da.ghost_cols.begin(), da.ghost_cols.end()));
    for (std::int64_t g : da.ghost_cols) EXPECT_NE(cols.owner(g), comm.rank());
    validate(da.local, "local block");
    validate(da.nonlocal, "non-local block");
    const Csr<double> back = gather(comm, da);
    if (comm.rank() == 0) EXPECT_EQ(back, a);
    // A value refresh in row order lands where the values came from.
    HostArray<double> doubled = values_in_row_order(da);
    for (double& x : doubled) x *= 2;
    set_values_in_row_order(da, doubled);
    Csr<double> twice = a;
    for (double& x : twice.values) x *= 2;
    const Csr<double> back2 = gather(comm, da);
    if (comm.rank() == 0) EXPECT_EQ(back2, twice);
  }
}

TEST(DistMatrix, EachRankGeneratesOnlyItsRows) {
  const Communicator comm;
  for (const char* spec_text : {"poisson3d:7", "elasticity3d:3", "poisson2d:11"}) {
    SCOPED_TRACE(spec_text);
    const gen::ProblemSpec spec = gen::parse_spec(spec_text);
    const std::int64_t n = gen::num_rows(spec);
    const RowPartition p = RowPartition::balanced_rows(n, comm.size());
    const DistMatrix da = assemble(comm, gen::generate_rows(spec, p.begin(comm.rank()), p.end(comm.rank())), p);
    const Csr<double> back = gather(comm, da);
    if (comm.rank() == 0) EXPECT_EQ(back, gen::generate(spec));
  }
}

TEST(DistMatrix, EachRankReadsOnlyItsRowsOfARealMatrix) {
  const Communicator comm;
  int checked = 0;
  for (const auto& file : tessera::testing::manifest()) {
    if (file.name != "bp_1200" && file.name != "bcsstk02") continue;  // general and symmetric storage
    SCOPED_TRACE(file.name);
    const std::uint64_t seed = testing::shared_seed(comm);
    const Csr<double> a = io::read_matrix_market(file.path);
    for (const auto& part : testing::test_partitions(comm, a, seed)) {
      SCOPED_TRACE(part.name);
      const RowPartition& p = part.partition;
      const DistMatrix da =
          assemble(comm, io::read_matrix_market_rows(file.path, p.begin(comm.rank()), p.end(comm.rank())), p);
      const Csr<double> back = gather(comm, da);
      if (comm.rank() == 0) EXPECT_EQ(back, a);
      check_product(comm, a, p, p, 1, seed + 1);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 2) << "matrices bp_1200/bcsstk02 missing from " << tessera::testing::matrix_dir();
}

TEST(DistReductions, DotAndNormMatchSerial) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 301;
  const std::vector<double> x = random_values(n, seed), y = random_values(n, seed + 1);
  const RowPartition p = testing::uneven_partition(comm, n, seed + 2);
  const int me = comm.rank();
  const double d = dot(comm, slice(x, p.begin(me), p.end(me), 1), slice(y, p.begin(me), p.end(me), 1));
  double want = 0, magnitude = 0, sq = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    want += x[i] * y[i];
    magnitude += std::fabs(x[i] * y[i]);
    sq += x[i] * x[i];
  }
  const double tol = 2 * (n + 2) * std::numeric_limits<double>::epsilon() * magnitude;
  EXPECT_NEAR(d, want, tol);
  EXPECT_NEAR(norm2(comm, slice(x, p.begin(me), p.end(me), 1)), std::sqrt(sq), 4 * n * std::numeric_limits<double>::epsilon());
}

}  // namespace
}  // namespace tessera::dist
