// The reusable device products (local/cuda/device_product.hpp: the one driver of the AMG
// setup and offload_spgemm) and the value-refresh conversions they use
// (local/cuda/tile_convert.hpp) against the host ref::spgemm and the full conversions: first
// run and re-runs on new values in the same patterns, for the tile, the cuSPARSE (reuse API)
// and the hash paths; one-shot products (no kept plan); chained products (A*B feeding C*(A*B)); odd, empty and 1x1 shapes;
// patterns that change between runs are an InputError; multiply_into (C written into the caller's
// CSR, held once) against the reference and the bytes it holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_product.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/gen/generators.hpp"
#include "local/reference/kernels.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceCsr;
using tessera::cuda::DeviceProduct;
using tessera::cuda::OffloadSpgemm;
using tessera::cuda::OperandView;
using tessera::cuda::ProductOperand;

template <class Allocator>
double max_abs(const std::vector<double, Allocator>& v) {
  double m = 0;
  for (const double x : v) m = std::max(m, std::abs(x));
  return m;
}

/// Same pattern exactly, values to `rtol` of the largest entry.
void expect_same(const DeviceCsr<double>& device, const Csr<double>& host, double rtol, const std::string& what) {
  const Csr<double> d = tessera::cuda::download(device);
  ASSERT_EQ(d.rows, host.rows) << what;
  ASSERT_EQ(d.cols, host.cols) << what;
  ASSERT_EQ(d.row_ptr, host.row_ptr) << what;
  ASSERT_EQ(d.col_idx, host.col_idx) << what;
  const double bound = rtol * std::max(1.0, max_abs(host.values));
  for (std::size_t k = 0; k < host.values.size(); ++k)
    ASSERT_LE(std::abs(d.values[k] - host.values[k]), bound) << what << ": entry " << k;
}

/// Same pattern, new values (reproducible from `seed`).
Csr<double> with_new_values(Csr<double> a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (double& v : a.values) v = value(rng);
  return a;
}

Csr<double> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  testing::RandomSpec spec;
  spec.rows = rows, spec.cols = cols, spec.density = 0.15, spec.empty_row_fraction = 0.1;
  spec.empty_col_fraction = 0.1;
  return testing::random_csr(spec, seed);
}

/// C = A*B through DeviceProduct, then again on new values: both against ref::spgemm.
void check_product_and_rerun(const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which, std::uint64_t seed,
                             const std::string& what) {
  SCOPED_TRACE(what + " (" + tessera::cuda::to_string(which) + ", seed " + std::to_string(seed) + ")");
  DeviceCsr<double> da = tessera::cuda::upload(a), db = tessera::cuda::upload(b), dc;
  ProductOperand a_op, b_op;
  DeviceProduct product(which);
  product.multiply(a_op.bind(da, which, nullptr), b_op.bind(db, which, nullptr));
  product.result_csr(dc);
  expect_same(dc, ref::spgemm(a, b), 1e-13, "first run");
  const Csr<double> a2 = with_new_values(a, seed), b2 = with_new_values(b, seed + 1);
  da.values.upload(a2.values), db.values.upload(b2.values);
  product.multiply(a_op.bind(da, which, nullptr), b_op.bind(db, which, nullptr));
  product.result_csr(dc);
  expect_same(dc, ref::spgemm(a2, b2), 1e-13, "re-run on new values");
}

class DeviceProductTest : public ::testing::TestWithParam<OffloadSpgemm> {};

TEST_P(DeviceProductTest, RandomOddShapesAndRerun) {
  for (int trial = 0; trial < 3; ++trial) {
    const std::uint64_t seed = testing::fresh_seed();
    const Csr<double> a = random_matrix(37, 53, seed), b = random_matrix(53, 29, seed + 7);
    check_product_and_rerun(a, b, GetParam(), seed, "random 37x53 * 53x29");
  }
}

TEST_P(DeviceProductTest, StructuredOperators) {
  const Csr<double> poisson = gen::generate(gen::parse_spec("poisson3d:7"));
  check_product_and_rerun(poisson, poisson, GetParam(), testing::fresh_seed(), "poisson3d:7 squared");
  const Csr<double> elasticity = gen::generate(gen::parse_spec("elasticity3d:3"));
  check_product_and_rerun(elasticity, elasticity, GetParam(), testing::fresh_seed(), "elasticity3d:3 squared");
  const Csr<double> power_law = gen::generate(gen::parse_spec("rmat:9:8"));  // dense rows beside near-empty ones
  check_product_and_rerun(power_law, power_law, GetParam(), testing::fresh_seed(), "rmat:9:8 squared");
}

TEST_P(DeviceProductTest, TinyAndEmpty) {
  const Csr<double> one = csr_from_triplets<double>(1, 1, {0}, {0}, {3.0});
  check_product_and_rerun(one, one, GetParam(), testing::fresh_seed(), "1x1");
  check_product_and_rerun(Csr<double>::empty(0, 0), Csr<double>::empty(0, 0), GetParam(), 1, "0x0");
  const Csr<double> a = random_matrix(9, 11, testing::fresh_seed());
  check_product_and_rerun(a, Csr<double>::empty(11, 5), GetParam(), 2, "B without entries");
}

/// R (A P) as the Galerkin product chains it: A*P kept in the product's form for the second.
TEST_P(DeviceProductTest, ChainedProductsAndRerun) {
  const OffloadSpgemm which = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:9"));  // 729 rows: not a multiple of 8
  const Csr<double> p = random_matrix(a.rows, 61, seed), r = ref::transpose(p);
  DeviceCsr<double> da = tessera::cuda::upload(a), dp = tessera::cuda::upload(p), dr = tessera::cuda::upload(r);
  ProductOperand a_op, p_op, r_op, ap_op;
  DeviceProduct a_p(which), r_a_p(which);
  DeviceCsr<double> ap, coarse;
  auto run = [&] {
    a_p.multiply(a_op.bind(da, which, nullptr), p_op.bind(dp, which, nullptr));
    OperandView ap_view;
    if (which == OffloadSpgemm::tile) {
      ap_view = a_p.tile_result();
    } else {
      a_p.result_csr(ap);
      ap_view = ap_op.bind(ap, which, nullptr);
    }
    r_a_p.multiply(r_op.bind(dr, which, nullptr), ap_view);
    r_a_p.result_csr(coarse);
  };
  run();
  expect_same(coarse, ref::spgemm(r, ref::spgemm(a, p)), 1e-12, "R (A P)");
  const Csr<double> a2 = with_new_values(a, seed), p2 = with_new_values(p, seed + 1), r2 = ref::transpose(p2);
  da.values.upload(a2.values), dp.values.upload(p2.values), dr.values.upload(r2.values);
  run();
  expect_same(coarse, ref::spgemm(r2, ref::spgemm(a2, p2)), 1e-12, "R (A P) on new values");
}

TEST_P(DeviceProductTest, ChangedPatternIsInputError) {
  const OffloadSpgemm which = GetParam();
  const Csr<double> a = random_matrix(20, 20, testing::fresh_seed());
  const Csr<double> other = gen::generate(gen::parse_spec("poisson3d:3"));  // 27 rows
  DeviceCsr<double> da = tessera::cuda::upload(a), dother = tessera::cuda::upload(other);
  ProductOperand op;
  DeviceProduct product(which);
  const OperandView v = op.bind(da, which, nullptr);
  product.multiply(v, v);
  EXPECT_THROW(op.bind(dother, which, nullptr), InputError);
  ProductOperand fresh;
  const OperandView w = fresh.bind(dother, which, nullptr);
  EXPECT_THROW(product.multiply(w, w), InputError);  // same product, another pattern
  EXPECT_THROW(product.multiply(v, w), InputError);  // inner dimensions differ
  if (which != OffloadSpgemm::tile) EXPECT_THROW(product.tile_result(), InputError);
}

/// keep_plan false (offload_spgemm, AMG setups without kept plans): every multiply is a fresh
/// product, and result_csr hands C over (cuSPARSE, hash) or converts it (tile).
TEST_P(DeviceProductTest, OneShotProducts) {
  const OffloadSpgemm which = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(std::string(tessera::cuda::to_string(which)) + ", seed " + std::to_string(seed));
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d27:7")), b = random_matrix(a.rows, 45, seed);
  DeviceCsr<double> da = tessera::cuda::upload(a), db = tessera::cuda::upload(b), dc;
  ProductOperand a_op, b_op;
  DeviceProduct product(which, nullptr, /*keep_plan=*/false);
  product.multiply(a_op.bind(da, which, nullptr), b_op.bind(db, which, nullptr));
  product.result_csr(dc);
  expect_same(dc, ref::spgemm(a, b), 1e-13, "one-shot");
  if (which != OffloadSpgemm::tile) EXPECT_THROW(product.result_csr(dc), InputError);  // C was handed over
  const Csr<double> b2 = with_new_values(b, seed);
  db.values.upload(b2.values);
  product.multiply(a_op.bind(da, which, nullptr), b_op.bind(db, which, nullptr));
  product.result_csr(dc);  // the same C: the tile path rewrites its values, the others hand C over again
  expect_same(dc, ref::spgemm(a, b2), 1e-13, "second one-shot on new values");
}

std::int64_t csr_bytes(const DeviceCsr<double>& m) {
  return std::int64_t(m.row_ptr.bytes() + m.col_idx.bytes() + m.values.bytes());
}

/// multiply_into (the AMG setup's kept products): C written into the caller's CSR equals
/// ref::spgemm on the first run and on a re-run with new values, odd and structured shapes.
TEST_P(DeviceProductTest, MultiplyIntoMatchesReferenceAndRerun) {
  const OffloadSpgemm which = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(std::string(tessera::cuda::to_string(which)) + ", seed " + std::to_string(seed));
  const Csr<double> poisson = gen::generate(gen::parse_spec("poisson3d27:7"));  // 343 rows
  const std::pair<Csr<double>, Csr<double>> cases[] = {
      {random_matrix(37, 53, seed), random_matrix(53, 29, seed + 7)},
      {poisson, random_matrix(poisson.rows, 45, seed + 3)},
      {csr_from_triplets<double>(1, 1, {0}, {0}, {3.0}), csr_from_triplets<double>(1, 1, {0}, {0}, {-2.0})},
      {Csr<double>::empty(0, 0), Csr<double>::empty(0, 0)},
      {random_matrix(9, 11, seed + 5), Csr<double>::empty(11, 5)}};
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(std::to_string(a.rows) + "x" + std::to_string(a.cols) + " * " + std::to_string(b.rows) + "x" +
                 std::to_string(b.cols));
    DeviceCsr<double> da = tessera::cuda::upload(a), db = tessera::cuda::upload(b), dc;
    ProductOperand a_op, b_op;
    DeviceProduct product(which);
    product.multiply_into(a_op.bind(da, which, nullptr), b_op.bind(db, which, nullptr), dc);
    expect_same(dc, ref::spgemm(a, b), 1e-13, "first run");
    const Csr<double> a2 = with_new_values(a, seed + 11), b2 = with_new_values(b, seed + 12);
    da.values.upload(a2.values), db.values.upload(b2.values);
    product.multiply_into(a_op.bind(da, which, nullptr), b_op.bind(db, which, nullptr), dc);
    expect_same(dc, ref::spgemm(a2, b2), 1e-13, "re-run on new values");
  }
}

/// The same through cuSPARSE's row-sorting fallback (C then stays twice: cuSPARSE's and the sorted).
TEST(DeviceProductInto, CusparseSortedFallbackMatchesReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = gen::generate(gen::parse_spec("elasticity3d:3")), b = random_matrix(a.rows, 31, seed);
  DeviceCsr<double> da = tessera::cuda::upload(a), db = tessera::cuda::upload(b), dc;
  ProductOperand a_op, b_op;
  DeviceProduct product(OffloadSpgemm::cusparse);
  tessera::cuda::testing_hooks::force_cusparse_row_sort(true);
  product.multiply_into(a_op.bind(da, OffloadSpgemm::cusparse, nullptr), b_op.bind(db, OffloadSpgemm::cusparse, nullptr),
                        dc);
  tessera::cuda::testing_hooks::force_cusparse_row_sort(false);
  expect_same(dc, ref::spgemm(a, b), 1e-13, "first run");
  const Csr<double> b2 = with_new_values(b, seed);
  db.values.upload(b2.values);
  product.multiply_into(a_op.bind(da, OffloadSpgemm::cusparse, nullptr), b_op.bind(db, OffloadSpgemm::cusparse, nullptr),
                        dc);
  expect_same(dc, ref::spgemm(a, b2), 1e-13, "re-run on new values");
}

/// A kept hash plan with multiply_into holds C once: its bytes() are those of a product that
/// copies C (multiply + result_csr) less C's CSR, and the device memory it leaves held is its
/// bytes() plus the caller's C, nothing else (no hidden buffer).
TEST(DeviceProductInto, KeptHashPlanHoldsCOnce) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:9")), b = random_matrix(a.rows, 61, seed);
  DeviceCsr<double> da = tessera::cuda::upload(a), db = tessera::cuda::upload(b), copied, written;
  ProductOperand a_op, b_op;
  const OperandView av = a_op.bind(da, OffloadSpgemm::hash, nullptr), bv = b_op.bind(db, OffloadSpgemm::hash, nullptr);
  DeviceProduct copying(OffloadSpgemm::hash);
  copying.multiply(av, bv);
  copying.result_csr(copied);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::int64_t held_before = tessera::cuda::DeviceMemory::current();
  DeviceProduct into(OffloadSpgemm::hash);
  into.multiply_into(av, bv, written);
  into.multiply_into(av, bv, written);  // a re-run allocates nothing either
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::int64_t held = tessera::cuda::DeviceMemory::current() - held_before;
  ASSERT_GT(written.nnz, 0);
  EXPECT_EQ(copying.bytes() - into.bytes(), csr_bytes(written));
  EXPECT_EQ(held, into.bytes() + csr_bytes(written));
  expect_same(written, tessera::cuda::download(copied), 1e-13, "written equals copied");
}

/// cuSPARSE with a kept plan: when its rows come out sorted C moves to the caller (bytes() drop
/// by C's columns and values; its int32 row offsets stay with the descriptor), else nothing moves.
TEST(DeviceProductInto, KeptCusparsePlanHoldsCOnceWhenSorted) {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:9"));
  DeviceCsr<double> da = tessera::cuda::upload(a), copied, written;
  ProductOperand op;
  const OperandView av = op.bind(da, OffloadSpgemm::cusparse, nullptr);
  DeviceProduct copying(OffloadSpgemm::cusparse), into(OffloadSpgemm::cusparse);
  copying.multiply(av, av);
  copying.result_csr(copied);
  into.multiply_into(av, av, written);
  const std::int64_t saved = copying.bytes() - into.bytes();
  // cuSPARSE returns this Poisson A*A with sorted rows, so C is handed over (were a version to
  // stop sorting them, this says so instead of passing on nothing).
  EXPECT_EQ(saved, std::int64_t(written.col_idx.bytes() + written.values.bytes()));
  expect_same(written, tessera::cuda::download(copied), 1e-13, "written equals copied");
}

TEST_P(DeviceProductTest, MultiplyIntoMisuseIsInputError) {
  const OffloadSpgemm which = GetParam();
  const Csr<double> a = random_matrix(20, 20, testing::fresh_seed());
  DeviceCsr<double> da = tessera::cuda::upload(a), c, other_c;
  ProductOperand op;
  const OperandView v = op.bind(da, which, nullptr);
  DeviceProduct into(which), plain(which);
  into.multiply_into(v, v, c);
  EXPECT_THROW(into.result_csr(c), InputError);  // C is the caller's
  EXPECT_THROW(into.multiply(v, v), InputError);
  EXPECT_THROW(into.multiply_into(v, v, other_c), InputError);  // not the CSR the first run filled
  DeviceCsr<double> same_pattern = tessera::cuda::upload(tessera::cuda::download(c));
  EXPECT_THROW(into.multiply_into(v, v, same_pattern), InputError);  // a copy: other buffers
  DeviceCsr<double> moved = std::move(c);
  EXPECT_NO_THROW(into.multiply_into(v, v, moved));  // a move keeps the buffers
  EXPECT_THROW(into.multiply_into(v, v, c), InputError);  // the moved-from shell
  plain.multiply(v, v);
  EXPECT_THROW(plain.multiply_into(v, v, moved), InputError);
  if (v.csr) {  // the engines that read A's CSR: C = A*A written into A
    DeviceProduct over_operand(which);
    EXPECT_THROW(over_operand.multiply_into(v, v, da), InputError);
  }
}

INSTANTIATE_TEST_SUITE_P(Spgemm, DeviceProductTest,
                         ::testing::Values(OffloadSpgemm::tile, OffloadSpgemm::cusparse, OffloadSpgemm::hash),
                         [](const auto& info) { return std::string(tessera::cuda::to_string(info.param)); });

/// `a`'s tiles and their CSR refreshed with new values (from `seed`) equal the full conversions
/// bit for bit (a gather moves values unchanged). The targets' values are poisoned (0xff bytes:
/// NaN) before each refresh, so an entry a refresh skips fails the comparison.
void expect_refresh_matches(const Csr<double>& a, std::uint64_t seed, const std::string& what) {
  SCOPED_TRACE(what);
  DeviceCsr<double> da = tessera::cuda::upload(a);
  tessera::cuda::DeviceBuffer<std::int64_t> source;
  auto tiles = tessera::cuda::to_tiles(da, source);
  DeviceCsr<double> back = tessera::cuda::to_csr(tiles);
  const Csr<double> a2 = with_new_values(a, seed);
  da.values.upload(a2.values);
  tiles.values.fill_bytes(0xff);
  tessera::cuda::refresh_tile_values(da, source, tiles);
  EXPECT_EQ(tessera::cuda::download(tiles).values, tessera::cuda::download(tessera::cuda::to_tiles(da)).values);
  back.values.fill_bytes(0xff);
  tessera::cuda::refresh_csr_values(tiles, back);
  const Csr<double> host_back = tessera::cuda::download(back);
  EXPECT_EQ(host_back.col_idx, a2.col_idx);
  EXPECT_EQ(host_back.values, a2.values);
}

/// Random and odd shapes, and structured patterns: 27-point stencil, elasticity's 3x3 blocks,
/// power-law rows.
TEST(TileValueRefresh, MatchesFullConversion) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  expect_refresh_matches(random_matrix(37, 53, seed), seed + 3, "random 37x53");
  expect_refresh_matches(csr_from_triplets<double>(1, 1, {0}, {0}, {2.0}), seed + 3, "1x1");
  expect_refresh_matches(random_matrix(0, 0, seed), seed + 3, "0x0");
  expect_refresh_matches(random_matrix(64, 64, seed), seed + 3, "random 64x64");
  for (const char* spec : {"poisson3d27:5", "elasticity3d:3", "rmat:9:8"})
    expect_refresh_matches(gen::generate(gen::parse_spec(spec)), seed + 3, spec);
}

TEST(TileValueRefresh, WrongSizesAreInputError) {
  const Csr<double> a = random_matrix(16, 16, testing::fresh_seed());
  const Csr<double> b = gen::generate(gen::parse_spec("poisson3d:3"));
  DeviceCsr<double> da = tessera::cuda::upload(a), db = tessera::cuda::upload(b);
  tessera::cuda::DeviceBuffer<std::int64_t> source;
  auto tiles = tessera::cuda::to_tiles(da, source);
  EXPECT_THROW(tessera::cuda::refresh_tile_values(db, source, tiles), InputError);
  EXPECT_THROW(tessera::cuda::refresh_csr_values(tiles, db), InputError);
}

}  // namespace
}  // namespace tessera::amg::gpu
