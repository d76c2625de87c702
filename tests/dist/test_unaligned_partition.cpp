// Partitions that cut inside a tile-row (Alignment::any): what PETSc's ownership ranges and
// coarse AMG levels impose. from_offsets refuses them by default and accepts them only when
// asked, without waiving its other checks; SpMV, SpGEMM and PtAP on such partitions (rows,
// inner and outer dimensions all cut mid-tile, one rank empty) equal the serial reference.
#include <functional>

#include "dist/ptap.hpp"
#include "dist/spgemm.hpp"
#include "dist/spmv.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"

namespace tessera::dist {
namespace {

using tessera::testing::RandomSpec;
using tessera::testing::random_csr;
using tessera::testing::random_values;

/// Random cuts strictly inside (0, n) and off the tile grid (for n >= 2); with 3+
/// ranks two cuts coincide (a rank owning no rows).
std::vector<std::int64_t> unaligned_offsets(int ranks, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> offsets{0};
  for (int r = 1; r < ranks; ++r) {
    std::int64_t cut = n >= 2 ? 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n - 1)) : n;
    if (n >= 2 && cut % 8 == 0) cut -= 1;  // in (0, n), off the tile grid
    offsets.push_back(cut);
  }
  offsets.push_back(n);
  std::sort(offsets.begin(), offsets.end());
  if (ranks >= 3) offsets[2] = offsets[1];
  return offsets;
}

RowPartition unaligned_partition(const Communicator& comm, std::int64_t n, std::uint64_t seed) {
  return RowPartition::from_offsets(comm, n, unaligned_offsets(comm.size(), n, seed), Alignment::any);
}

/// The InputError text `make` threw on this rank ("" if none), checked equal on every rank.
std::string collective_error(const Communicator& comm, const std::function<void()>& make) {
  std::string message;
  try {
    make();
  } catch (const InputError& e) {
    message = e.what();
  }
  const auto hash = static_cast<std::int64_t>(std::hash<std::string>{}(message) >> 1);
  EXPECT_TRUE(testing::same_on_every_rank(comm, hash)) << "ranks disagree; this rank says: " << message;
  return message;
}

TEST(UnalignedPartition, RefusedByDefaultAcceptedWithAlignmentAny) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int ranks = comm.size();
  int off_grid_cases = 0;
  for (std::int64_t n : {0, 1, 7, 9, 37, 203}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<std::int64_t> offsets = unaligned_offsets(ranks, n, seed + n);
    bool off_grid = false;
    for (int r = 1; r < ranks; ++r) off_grid |= offsets[r] % 8 != 0 && offsets[r] != n;  // n itself may end mid-tile
    off_grid_cases += off_grid;
    const std::string by_default = collective_error(comm, [&] { RowPartition::from_offsets(comm, n, offsets); });
    if (off_grid) EXPECT_NE(by_default.find("not a multiple of the tile height"), std::string::npos) << "\"" << by_default << "\"";
    else EXPECT_EQ(by_default, "");
    EXPECT_EQ(collective_error(comm, [&] { RowPartition::from_offsets(comm, n, offsets, Alignment::any); }), "");
    EXPECT_EQ(partition_error(n, ranks, offsets, Alignment::any), "");
    const RowPartition p = RowPartition::from_offsets(comm, n, offsets, Alignment::any);
    EXPECT_EQ(p.offsets(), offsets);
    for (int r = 0; r < ranks; ++r)
      for (std::int64_t row = p.begin(r); row < p.end(r); ++row) ASSERT_EQ(p.owner(row), r) << "row " << row;
  }
  EXPECT_EQ(off_grid_cases, ranks >= 2 ? 4 : 0);  // every n >= 2; one rank has no interior cut
}

TEST(UnalignedPartition, AlignmentAnyKeepsEveryOtherCheck) {
  const Communicator comm;
  const int ranks = comm.size();
  const std::int64_t n = 8 * ranks + 5;
  std::vector<std::int64_t> good = unaligned_offsets(ranks, n, 11);
  auto error_of = [&](std::vector<std::int64_t> offsets) {
    return collective_error(comm, [&] { RowPartition::from_offsets(comm, n, offsets, Alignment::any); });
  };
  std::vector<std::int64_t> not_zero = good;
  not_zero[0] = 3;
  EXPECT_NE(error_of(not_zero).find("offsets[0] is 3"), std::string::npos);
  std::vector<std::int64_t> short_cover = good;
  short_cover[ranks] = n - 1;
  EXPECT_NE(error_of(short_cover).find("must cover every row"), std::string::npos);
  if (ranks >= 3) {
    std::vector<std::int64_t> decreasing(static_cast<std::size_t>(ranks) + 1, 5);
    decreasing[0] = 0;
    decreasing[1] = 13;
    decreasing[ranks] = n;
    EXPECT_NE(error_of(decreasing).find("decrease"), std::string::npos) << error_of(decreasing);
  }
  std::vector<std::int64_t> per_rank = good;
  if (comm.rank() == ranks - 1) per_rank[ranks] = n + 1;
  EXPECT_NE(error_of(per_rank), "");
}

TEST(UnalignedPartition, SpmvMatchesReference) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int i = 0;
  for (auto shape : {std::pair<std::int64_t, std::int64_t>{1, 1}, {37, 37}, {203, 203}, {150, 43}}) {
    SCOPED_TRACE("shape " + std::to_string(shape.first) + " x " + std::to_string(shape.second));
    const Csr<double> a = random_csr(RandomSpec{shape.first, shape.second, 0.08, 0.1, 0.1, true}, seed + i++);
    const RowPartition rows = unaligned_partition(comm, a.rows, seed + i++);
    const RowPartition cols = a.rows == a.cols ? rows : unaligned_partition(comm, a.cols, seed + i++);
    const DistMatrix da = testing::distribute(comm, a, rows, cols);
    const std::vector<double> x = random_values(a.cols, seed + i++);
    const int me = comm.rank();
    DistVector dx{std::vector<double>(x.begin() + cols.begin(me), x.begin() + cols.end(me)), {}};
    std::vector<double> y;
    spmv(comm, da, dx, y);
    EXPECT_EQ(static_cast<std::int64_t>(y.size()), rows.size(me));  // not ASSERT: the gather is collective
    const std::vector<double> got = comm.gatherv(y, 0);
    if (me != 0 || static_cast<std::int64_t>(got.size()) != a.rows) continue;  // a wrong size failed above
    std::vector<double> want(static_cast<std::size_t>(a.rows), 0.0);
    ref::spmv(1.0, a, x, 0.0, want);
    // |y - y_ref| <= 2 gamma_{len+2} (|A||x|)_i: two summation orders of one row.
    const double eps = std::numeric_limits<double>::epsilon() / 2;
    for (std::int64_t r = 0; r < a.rows; ++r) {
      double magnitude = 0;
      for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) magnitude += std::fabs(a.values[k] * x[a.col_idx[k]]);
      const double m = static_cast<double>(a.row_length(r) + 2), gamma = m * eps / (1 - m * eps);
      if (!(std::fabs(got[r] - want[r]) <= 2 * gamma * magnitude)) {  // not ASSERT: the next shape is collective
        EXPECT_LE(std::fabs(got[r] - want[r]), 2 * gamma * magnitude) << "row " << r;
        break;
      }
    }
  }
}

TEST(UnalignedPartition, SpgemmAndPtapMatchReference) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // C = A B with A 133 x 58, B 58 x 91: rows, inner and outer dimensions each cut mid-tile.
  const Csr<double> a = random_csr(RandomSpec{133, 58, 0.08, 0.1, 0.1, false}, seed);
  const Csr<double> b = random_csr(RandomSpec{58, 91, 0.08, 0.1, 0.1, true}, seed + 1);
  const RowPartition rows = unaligned_partition(comm, 133, seed + 2), inner = unaligned_partition(comm, 58, seed + 3),
                     outer = unaligned_partition(comm, 91, seed + 4);
  const DistSpgemm product(comm, testing::distribute(comm, a, rows, inner), testing::distribute(comm, b, inner, outer));
  EXPECT_EQ(product.result().row_partition, rows);
  EXPECT_EQ(product.result().col_partition, outer);
  const Csr<double> c = gather(comm, product.result());
  testing::expect_matches_reference(comm, c, ref::spgemm(a, b), ref::spgemm(testing::ones(a), testing::ones(b)),
                                    ref::spgemm(testing::absolute(a), testing::absolute(b)));

  // Galerkin product of a coarse AMG level: square A (101) on one cut, P 101 x 29 on another.
  const Csr<double> fine = random_csr(RandomSpec{101, 101, 0.06, 0.05, 0, false}, seed + 5);
  const Csr<double> p = random_csr(RandomSpec{101, 29, 0.1, 0.05, 0.1, false}, seed + 6);
  const RowPartition fine_rows = unaligned_partition(comm, 101, seed + 7), coarse = unaligned_partition(comm, 29, seed + 8);
  const DistPtap galerkin(comm, testing::distribute(comm, fine, fine_rows, fine_rows),
                          testing::distribute(comm, p, fine_rows, coarse));
  EXPECT_EQ(galerkin.result().row_partition, coarse);
  const Csr<double> rap = gather(comm, galerkin.result());
  testing::expect_matches_reference(comm, rap, ref::ptap(fine, p), ref::ptap(testing::ones(fine), testing::ones(p)),
                                    ref::ptap(testing::absolute(fine), testing::absolute(p)));
}

}  // namespace
}  // namespace tessera::dist
