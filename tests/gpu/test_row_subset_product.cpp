// The row-subset products (local/cuda/row_subset_product.hpp, the non-local block of the
// distributed SpMV/SpMM) against ref::spmm with beta = 1: listed rows within the forward error
// bound, every other row of y left bit for bit as it was (NaN sentinels there stay NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "local/core/error.hpp"
#include "local/cuda/row_subset_product.hpp"
#include "local/reference/kernels.hpp"
#include "test_spmv_common.hpp"

namespace tessera {
namespace {

using namespace tessera::testing;

/// Rows [0, n) of which only those in the first and last `planes` rows hold entries: a
/// non-local block of a rank owning a slab of a 3D grid (its ghosts are the next planes).
Csr<double> slab_boundary_block(std::int64_t n, std::int64_t plane, std::int64_t ghosts, std::uint64_t seed) {
  std::vector<std::int64_t> r, c;
  for (std::int64_t i = 0; i < plane; ++i) r.push_back(i), c.push_back(i % ghosts);
  for (std::int64_t i = n - plane; i < n; ++i) r.push_back(i), c.push_back(ghosts - 1 - i % ghosts);
  return csr_from_triplets<double>(n, ghosts, r, c, random_values<double>(std::int64_t(r.size()), seed));
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// The device listing (make_row_subset of a DeviceCsr) against the host's, the reference.
void expect_same_subset(const cuda::RowSubset& device, const cuda::RowSubset& host) {
  EXPECT_EQ(device.count, host.count);
  EXPECT_EQ(device.lanes, host.lanes);
  EXPECT_EQ(device.matrix_rows, host.matrix_rows);
  EXPECT_EQ(device.matrix_nnz, host.matrix_nnz);
  EXPECT_EQ(device.rows.download(), host.rows.download());
}

void check_subset_product(const NamedMatrix& m, std::int64_t k, double alpha, std::uint64_t seed) {
  SCOPED_TRACE(m.name + " k " + std::to_string(k) + " alpha " + std::to_string(alpha));
  const Csr<double>& a = m.a;
  DenseMatrix x(a.cols, k, Layout::row_major), y(a.rows, k, Layout::row_major);
  x.data = random_values<double>(a.cols * k, seed);
  y.data = random_values<double>(a.rows * k, seed + 7);
  for (std::int64_t i = 0; i < a.rows; ++i)  // untouched rows must stay exactly so
    if (a.row_length(i) == 0)
      for (std::int64_t j = 0; j < k; ++j) y.data[y.index(i, j)] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> y0 = y.data;
  ref::spmm(alpha, a, x, 1.0, y);

  const cuda::DeviceCsr<double> da = cuda::upload(a);
  const cuda::RowSubset subset = cuda::make_row_subset(a);
  std::int64_t nonempty = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) nonempty += a.row_length(i) > 0;
  EXPECT_EQ(subset.count, nonempty);
  expect_same_subset(cuda::make_row_subset(da), subset);
  cuda::DeviceBuffer<double> dx = to_device<double>(x.data), dy = to_device<double>(y0);
  if (k == 1) cuda::spmv_add_on_rows(subset, alpha, da, dx.data(), dy.data());
  else cuda::spmm_add_on_rows(subset, alpha, da, dx.data(), k, dy.data());
  const std::vector<double> got = to_host(dy);

  BoundCheck check;
  for (std::int64_t j = 0; j < k; ++j) {
    const RowMagnitudes mag = row_magnitudes(a, x.data, k, j, true);
    for (std::int64_t i = 0; i < a.rows; ++i) {
      const std::int64_t at = y.index(i, j);
      const std::string where = "(" + std::to_string(i) + ", " + std::to_string(j) + "): got " +
                                std::to_string(got[at]) + " want " + std::to_string(y.data[at]);
      if (a.row_length(i) == 0) {
        check.expect(same_bits(got[at], y0[at]), "untouched row " + where);
      } else {
        const double bound = (mag.length[i] + 3) * unit_roundoff<double>() *
                             (std::abs(alpha) * mag.abs_sum[i] + std::abs(y0[at]));
        check.expect(within(got[at], y.data[at], bound), where);
      }
    }
  }
  EXPECT_EQ(check.failures, 0) << check.first;
}

TEST(RowSubsetProduct, MatchesReferenceAndLeavesOtherRowsAlone) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<NamedMatrix> matrices = test_matrices(seed);
  matrices.push_back({"slab boundary 10000 rows, planes of 100", slab_boundary_block(10000, 100, 150, seed + 11)});
  matrices.push_back({"slab boundary 1001 rows, planes of 1", slab_boundary_block(1001, 1, 1, seed + 12)});
  for (const NamedMatrix& m : matrices)
    for (std::int64_t k : {1, 2, 7, 32, 45})
      for (double alpha : {1.0, -1.0, 0.75}) check_subset_product(m, k, alpha, seed + std::uint64_t(k));
}

// Lanes per row follow the listed rows' mean length, not the matrix's (mostly empty) rows.
TEST(RowSubsetProduct, ListsNonEmptyRowsAndSizesGroupsByTheirMeanLength) {
  const Csr<double> slab = slab_boundary_block(5000, 64, 64, 3);
  const cuda::RowSubset boundary = cuda::make_row_subset(slab);
  expect_same_subset(cuda::make_row_subset(cuda::upload(slab)), boundary);
  EXPECT_EQ(boundary.count, 128);
  EXPECT_EQ(boundary.lanes, 1);
  const std::vector<std::int64_t> rows = boundary.rows.download();
  ASSERT_EQ(rows.size(), 128u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows[63], 63);
  EXPECT_EQ(rows[64], 5000 - 64);
  EXPECT_EQ(rows.back(), 4999);
  const cuda::RowSubset elastic = cuda::make_row_subset(gen::generate(gen::parse_spec("elasticity3d:5")));
  EXPECT_GE(elastic.lanes, 16);  // up to 81 entries a row
  EXPECT_EQ(cuda::make_row_subset(Csr<double>::empty(7, 3)).count, 0);
  EXPECT_EQ(cuda::make_row_subset(cuda::upload(Csr<double>::empty(7, 3))).count, 0);
  EXPECT_EQ(cuda::make_row_subset(cuda::upload(Csr<double>::empty(0, 0))).count, 0);
}

TEST(RowSubsetProduct, RefusesASubsetOfAnotherMatrix) {
  const cuda::RowSubset subset = cuda::make_row_subset(gen::generate(gen::parse_spec("poisson3d:6")));
  const cuda::DeviceCsr<double> smaller = cuda::upload(gen::generate(gen::parse_spec("poisson3d:4")));
  cuda::DeviceBuffer<double> x(216), y(216);
  EXPECT_THROW(cuda::spmv_add_on_rows(subset, 1.0, smaller, x.data(), y.data()), InputError);
  EXPECT_THROW(cuda::spmm_add_on_rows(subset, 1.0, smaller, x.data(), 1, y.data()), InputError);
  const cuda::DeviceCsr<double> same_rows = cuda::upload(gen::generate(gen::parse_spec("poisson3d27:6")));
  EXPECT_THROW(cuda::spmv_add_on_rows(subset, 1.0, same_rows, x.data(), y.data()), InputError);  // other nnz
  const cuda::DeviceCsr<double> same = cuda::upload(gen::generate(gen::parse_spec("poisson3d:6")));
  EXPECT_THROW(cuda::spmm_add_on_rows(subset, 1.0, same, x.data(), 0, y.data()), InputError);
}

// Inf and NaN in x reach the listed rows that use them as in a full SpMV with beta = 1.
TEST(RowSubsetProduct, NonFiniteXPropagatesLikeAFullSpmv) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = slab_boundary_block(2000, 150, 90, seed);
  for (std::int64_t k : {1, 3}) {
    SCOPED_TRACE("k " + std::to_string(k));
    DenseMatrix x(a.cols, k, Layout::row_major), y(a.rows, k, Layout::row_major);
    x.data = random_values<double>(a.cols * k, seed + 1);
    y.data = random_values<double>(a.rows * k, seed + 2);
    x.data[x.index(3, 0)] = std::numeric_limits<double>::infinity();
    x.data[x.index(40, k - 1)] = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> y0 = y.data;
    ref::spmm(-1.0, a, x, 1.0, y);
    const cuda::DeviceCsr<double> da = cuda::upload(a);
    const cuda::RowSubset subset = cuda::make_row_subset(a);
    cuda::DeviceBuffer<double> dx = to_device<double>(x.data), dy = to_device<double>(y0);
    if (k == 1) cuda::spmv_add_on_rows(subset, -1.0, da, dx.data(), dy.data());
    else cuda::spmm_add_on_rows(subset, -1.0, da, dx.data(), k, dy.data());
    const NonFiniteComparison c = compare_with_non_finite(to_host(dy), y.data);
    EXPECT_GT(c.non_finite, 0);  // the case is real
    EXPECT_EQ(c.wrong, 0);
  }
}

}  // namespace
}  // namespace tessera
