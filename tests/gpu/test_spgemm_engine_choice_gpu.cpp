// The automatic choice of device SpGEMM engine (local/cuda/spgemm_engine_choice.hpp): the
// host work estimate on a hand-counted case, the device estimate (B in CSR and in tiles)
// against the host one on random matrices (fresh seeds, odd sizes, empty rows), Poisson 7/27,
// elasticity (3x3 blocks), R-MAT, real SPD matrices and empty/1x1 shapes; the threshold rule;
// and OffloadSpgemm::automatic end to end (DeviceProduct, offload_spgemm, offload_galerkin,
// the AMG Galerkin product with a re-run on new values) against ref::spgemm; offload_chain on
// every engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "amg/cuda/device_prolongator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/device_product.hpp"
#include "local/cuda/spgemm_engine_choice.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "local/reference/kernels.hpp"
#include "support/matrix_files.hpp"
#include "support/random_matrix.hpp"

namespace tessera::cuda {
namespace {

Csr<double> random_matrix(std::int64_t rows, std::int64_t cols, double density, std::uint64_t seed) {
  testing::RandomSpec spec;
  spec.rows = rows, spec.cols = cols, spec.density = density, spec.empty_row_fraction = 0.1;
  spec.empty_col_fraction = 0.1;
  return testing::random_csr(spec, seed);
}

Csr<double> generated(const std::string& spec) { return gen::generate(gen::parse_spec(spec)); }

/// Device estimates (B in CSR, B in tiles) equal the host reference exactly.
void expect_device_matches_host(const Csr<double>& a, const Csr<double>& b, const std::string& what) {
  SCOPED_TRACE(what);
  const SpgemmWorkEstimate want = estimate_spgemm_work_host(a, b);
  const DeviceCsr<double> da = upload(a), db = upload(b);
  const SpgemmWorkEstimate got = estimate_spgemm_work(da, db);
  EXPECT_EQ(got.scalar_products, want.scalar_products);
  EXPECT_EQ(got.tile_pairs, want.tile_pairs);
  EXPECT_EQ(got.rows, a.rows);
  EXPECT_EQ(want.rows, a.rows);
  EXPECT_EQ(want.scalar_products, ref::spgemm_flops(a, b));  // the same count cuSPARSE's work scales with
  const SpgemmWorkEstimate from_tiles = estimate_spgemm_work(da, to_tiles(db));
  EXPECT_EQ(from_tiles.scalar_products, want.scalar_products);
  EXPECT_EQ(from_tiles.tile_pairs, want.tile_pairs);
}

TEST(SpgemmWorkEstimate, HostReferenceOnAHandCountedCase) {
  // 16x16, entries (0,0) (0,9) (1,1) (9,0): A*A has rowlen(0)=2, rowlen(9)=1, rowlen(1)=1 ->
  // 2 + 1 + 1 + 2 = 6 products; tile-row 0 of A holds tile columns {0,1}, tile-row 1 holds {0};
  // B's tile-rows hold 2 and 1 tiles -> pairs (2 + 1) + 2 = 5.
  Csr<double> a;
  a.rows = a.cols = 16;
  a.row_ptr.assign(17, 0);
  for (int r = 0; r < 16; ++r) a.row_ptr[r + 1] = a.row_ptr[r] + (r == 0 ? 2 : (r == 1 || r == 9) ? 1 : 0);
  a.col_idx = {0, 9, 1, 0};
  a.values = {1, 2, 3, 4};
  const SpgemmWorkEstimate e = estimate_spgemm_work_host(a, a);
  EXPECT_EQ(e.scalar_products, 6);
  EXPECT_EQ(e.tile_pairs, 5);
  EXPECT_DOUBLE_EQ(e.products_per_pair(), 1.2);
  EXPECT_DOUBLE_EQ(e.products_per_row(), 6.0 / 16.0);
  expect_device_matches_host(a, a, "hand-counted");
}

TEST(SpgemmWorkEstimate, RandomMatricesFreshSeeds) {
  const std::int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {37, 29, 41}, {64, 64, 64}, {101, 250, 67}, {333, 17, 200}};
  for (const auto& s : shapes)
    for (const double density : {0.02, 0.2, 0.7}) {
      const std::uint64_t seed = testing::fresh_seed();
      const Csr<double> a = random_matrix(s[0], s[1], density, seed), b = random_matrix(s[1], s[2], density, seed + 1);
      expect_device_matches_host(a, b, "random " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" +
                                           std::to_string(s[2]) + " density " + std::to_string(density) +
                                           " seed " + std::to_string(seed));
    }
}

TEST(SpgemmWorkEstimate, StructuredAndGraphProblems) {
  for (const char* spec : {"poisson3d:9", "poisson3d27:7", "elasticity3d:5", "rmat:10:8", "random:999:7"}) {
    const Csr<double> a = generated(spec);
    expect_device_matches_host(a, a, spec);
  }
}

TEST(SpgemmWorkEstimate, RealSpdMatrices) {
  int seen = 0;
  for (const testing::MatrixFile& f : testing::manifest())
    if (f.name == "bcsstk21" || f.name == "bcsstk06" || f.name == "1138_bus") {
      const Csr<double> a = io::read_matrix_market(f.path);
      expect_device_matches_host(a, a, f.name);
      ++seen;
    }
  EXPECT_GT(seen, 0) << "no real matrices found in " << testing::matrix_dir();
}

TEST(SpgemmWorkEstimate, EmptyAndDegenerateShapes) {
  expect_device_matches_host(Csr<double>::empty(0, 0), Csr<double>::empty(0, 0), "0x0 * 0x0");
  expect_device_matches_host(Csr<double>::empty(5, 0), Csr<double>::empty(0, 7), "5x0 * 0x7");
  expect_device_matches_host(Csr<double>::empty(9, 11), generated("random:11:3"), "no entries in A");
  expect_device_matches_host(generated("random:11:3"), Csr<double>::empty(11, 4), "no entries in B");
  const SpgemmWorkEstimate none = estimate_spgemm_work_host(Csr<double>::empty(3, 3), Csr<double>::empty(3, 3));
  EXPECT_EQ(none.products_per_pair(), 0.0);
  EXPECT_EQ(choose_spgemm_engine(none), OffloadSpgemm::tile);
}

TEST(SpgemmWorkEstimate, MismatchedShapesAreInputErrors) {
  const Csr<double> a = Csr<double>::empty(4, 5), b = Csr<double>::empty(6, 4);
  EXPECT_THROW(estimate_spgemm_work_host(a, b), InputError);
  const DeviceCsr<double> da = upload(a), db = upload(b);
  EXPECT_THROW(estimate_spgemm_work(da, db), InputError);
}

TEST(SpgemmEngineChoice, ThresholdRule) {
  const auto pick = [](std::int64_t products, std::int64_t pairs, std::int64_t rows) {
    return choose_spgemm_engine(SpgemmWorkEstimate{products, pairs, rows});
  };
  const std::int64_t at = std::int64_t(kTileProductsPerPairThreshold * 1000);
  const std::int64_t few_rows = 1;  // every row does plenty of work (past the hash engine's range)
  EXPECT_EQ(pick(at, 1000, few_rows), OffloadSpgemm::tile);
  EXPECT_EQ(pick(at - 1, 1000, few_rows), OffloadSpgemm::cusparse);
  EXPECT_EQ(pick(512, 1, few_rows), OffloadSpgemm::tile);
  EXPECT_EQ(pick(1, 1, few_rows), OffloadSpgemm::hash);  // one product a row
  // Sparse tiles: hash up to kHashMaxProductsPerRow products a row of A, cuSPARSE beyond.
  const std::int64_t hash_limit = std::int64_t(kHashMaxProductsPerRow);
  EXPECT_EQ(pick(hash_limit * 10, 10 * hash_limit, 10), OffloadSpgemm::hash);
  EXPECT_EQ(pick(hash_limit * 10 + 1, 10 * hash_limit, 10), OffloadSpgemm::cusparse);
  // Well-filled tiles but little work per row (a 7-point-like A*A): hash.
  const std::int64_t rows = std::int64_t(100 * 512 / kTileMinProductsPerRow);
  EXPECT_EQ(pick(100 * 512, 100, rows), OffloadSpgemm::tile);
  EXPECT_EQ(pick(100 * 512, 100, rows + 1), OffloadSpgemm::hash);
}

TEST(SpgemmEngineChoice, LevelRuleReadsProductsPerPairOnly) {
  const auto pick = [](std::int64_t products, std::int64_t pairs, std::int64_t rows) {
    return choose_level_spgemm_engine(SpgemmWorkEstimate{products, pairs, rows});
  };
  const std::int64_t at = std::int64_t(kLevelTileProductsPerPairThreshold * 1000);
  const std::int64_t many_rows = 1000000;  // few products per row: the level rule ignores it
  EXPECT_EQ(pick(at, 1000, many_rows), OffloadSpgemm::tile);
  EXPECT_EQ(pick(at - 1, 1000, many_rows), OffloadSpgemm::hash);
  EXPECT_EQ(pick(0, 0, many_rows), OffloadSpgemm::tile);  // empty: no SpGEMM either way
}

/// Same pattern, values to 1e-13 of the largest entry.
void expect_same(const Csr<double>& got, const Csr<double>& want, const std::string& what) {
  ASSERT_EQ(got.rows, want.rows) << what;
  ASSERT_EQ(got.cols, want.cols) << what;
  ASSERT_EQ(got.row_ptr, want.row_ptr) << what;
  ASSERT_EQ(got.col_idx, want.col_idx) << what;
  double scale = 1;
  for (const double v : want.values) scale = std::max(scale, std::abs(v));
  for (std::size_t k = 0; k < want.values.size(); ++k)
    ASSERT_LE(std::abs(got.values[k] - want.values[k]), 1e-13 * scale) << what << ": entry " << k;
}

TEST(AutomaticEngine, DeviceProductResolvesThenMultiplies) {
  for (const char* spec : {"poisson3d:10", "poisson3d27:9", "rmat:9:6"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = generated(spec);
    const DeviceCsr<double> da = upload(a);
    DeviceProduct product(OffloadSpgemm::automatic);
    ProductOperand a_op;
    EXPECT_THROW(a_op.bind(da, OffloadSpgemm::automatic, nullptr), InputError);
    const OffloadSpgemm engine = product.resolve_engine(da, da);
    EXPECT_EQ(engine, choose_spgemm_engine(estimate_spgemm_work_host(a, a)));
    EXPECT_TRUE(product.chosen_automatically());
    EXPECT_EQ(product.estimate().tile_pairs, estimate_spgemm_work_host(a, a).tile_pairs);
    ProductOperand b_op;
    product.multiply(a_op.bind(da, engine, nullptr), b_op.bind(da, engine, nullptr));
    DeviceCsr<double> dc;
    product.result_csr(dc);
    expect_same(download(dc), ref::spgemm(a, a), "automatic A*A");
  }
  DeviceProduct unresolved(OffloadSpgemm::automatic);
  EXPECT_THROW(unresolved.multiply(OperandView{}, OperandView{}), InputError);
}

/// cuSPARSE usually returns sorted rows, so the sort-and-gather fallback would go untested:
/// the hook forces it, and both paths must give the host product (one-shot and kept plan).
TEST(CusparseRows, SortedAndForcedSortGiveTheHostProduct) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_matrix(301, 277, 0.03, seed), b = random_matrix(277, 189, 0.05, seed + 1);
  const DeviceCsr<double> da = upload(a), db = upload(b);
  for (const bool force_sort : {false, true})
    for (const bool keep_plan : {false, true}) {
      SCOPED_TRACE(std::string(force_sort ? "forced sort" : "as cuSPARSE returns") +
                   (keep_plan ? ", kept plan" : ", one-shot"));
      testing_hooks::force_cusparse_row_sort(force_sort);
      DeviceProduct product(OffloadSpgemm::cusparse, nullptr, keep_plan);
      ProductOperand a_op, b_op;
      const OffloadSpgemm engine = OffloadSpgemm::cusparse;
      product.multiply(a_op.bind(da, engine, nullptr), b_op.bind(db, engine, nullptr));
      DeviceCsr<double> dc;
      product.result_csr(dc);
      expect_same(download(dc), ref::spgemm(a, b), "cuSPARSE A*B");
      if (keep_plan) {  // a re-run reads the kept order (or identity) again
        product.multiply(a_op.bind(da, engine, nullptr, false), b_op.bind(db, engine, nullptr, false));
        product.result_csr(dc);
        expect_same(download(dc), ref::spgemm(a, b), "cuSPARSE A*B, re-run");
      }
    }
  testing_hooks::force_cusparse_row_sort(false);
}

TEST(AutomaticEngine, OffloadSpgemmAndGalerkin) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> p = random_matrix(343, 51, 0.05, seed);
  for (const char* spec : {"poisson3d:7", "poisson3d27:7"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = generated(spec);
    OffloadStats stats;
    expect_same(offload_spgemm(a, a, OffloadSpgemm::automatic, stats), ref::spgemm(a, a), "offload A*A");
    expect_same(offload_galerkin(a, p, OffloadSpgemm::automatic, stats),
                ref::spgemm(ref::transpose(p), ref::spgemm(a, p)), "offload R*(A*P)");
    EXPECT_EQ(stats.products, 3);
    // Each product ran on the engine its own estimate picks (offload_* choose per product).
    const Csr<double> ap = ref::spgemm(a, p);
    const auto on_tiles = [](const SpgemmWorkEstimate& e) { return choose_spgemm_engine(e) == OffloadSpgemm::tile; };
    const int expected_tiles = on_tiles(estimate_spgemm_work_host(a, a)) + on_tiles(estimate_spgemm_work_host(a, p)) +
                               on_tiles(estimate_spgemm_work_host(ref::transpose(p), ap));
    EXPECT_EQ(stats.tile_products, expected_tiles);
  }
  OffloadStats stats;
  EXPECT_THROW(offload_spgemm(Csr<double>::empty(3, 4), Csr<double>::empty(5, 2), OffloadSpgemm::automatic, stats),
               InputError);
  EXPECT_EQ(parse_offload_spgemm("auto"), OffloadSpgemm::automatic);
  EXPECT_STREQ(to_string(OffloadSpgemm::automatic), "auto");
  EXPECT_EQ(parse_offload_spgemm("hash"), OffloadSpgemm::hash);
  EXPECT_STREQ(to_string(OffloadSpgemm::hash), "hash");
  EXPECT_THROW(parse_offload_spgemm("cuSPARSE"), InputError);
}

// L*(A*B) with A*B kept on the device (DistPtap's pair of products), on every engine and on
// mixed ones (automatic): the product and nnz(A*B) equal the reference's; an L without entries
// still counts A*B; an empty A*B and mismatched shapes.
TEST(OffloadChain, EveryEngineGivesTheReferenceAndTheInnerCount) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ref::SpgemmOptions keep_zeros{true};
  for (const char* spec : {"poisson3d:7", "poisson3d27:7"}) {
    const Csr<double> a = generated(spec);
    const Csr<double> b = random_matrix(a.cols, 51, 0.05, seed);
    const Csr<double> l = random_matrix(37, a.rows, 0.04, seed + 1);
    const Csr<double> ab = ref::spgemm(a, b, keep_zeros);
    for (const OffloadSpgemm which :
         {OffloadSpgemm::tile, OffloadSpgemm::hash, OffloadSpgemm::cusparse, OffloadSpgemm::automatic}) {
      SCOPED_TRACE(std::string(spec) + ", " + to_string(which));
      OffloadStats stats;
      std::int64_t inner = -1;
      expect_same(offload_chain(l, a, b, which, stats, &inner), ref::spgemm(l, ab, keep_zeros), "L*(A*B)");
      EXPECT_EQ(inner, ab.nnz());
      EXPECT_EQ(stats.products, 2);
      inner = -1;
      const Csr<double> no_entries = Csr<double>::empty(5, a.rows);
      const Csr<double> zero = offload_chain(no_entries, a, b, which, stats, &inner);
      EXPECT_EQ(inner, ab.nnz()) << "A*B is formed for its count when L has no entries";
      EXPECT_EQ(zero.rows, 5);
      EXPECT_EQ(zero.cols, b.cols);
      EXPECT_EQ(zero.nnz(), 0);
      inner = -1;
      const Csr<double> none = offload_chain(l, a, Csr<double>::empty(a.cols, 51), which, stats, &inner);
      EXPECT_EQ(inner, 0);
      EXPECT_EQ(none.rows, l.rows);
      EXPECT_EQ(none.nnz(), 0);
    }
    OffloadStats stats;
    EXPECT_THROW(offload_chain(Csr<double>::empty(3, a.rows + 1), a, b, OffloadSpgemm::hash, stats), InputError);
    EXPECT_THROW(offload_chain(l, a, Csr<double>::empty(a.cols + 1, 4), OffloadSpgemm::hash, stats), InputError);
  }
}

/// The AMG Galerkin product with automatic engines, then a re-run on new values of A (the plan
/// keeps the engines it chose): both against the host R*(A*P).
TEST(AutomaticEngine, AmgGalerkinKeepsItsEnginesOnRerun) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const char* spec : {"poisson3d:9", "elasticity3d:4"}) {
    SCOPED_TRACE(spec);
    Csr<double> a = generated(spec);
    const Csr<double> p = random_matrix(a.rows, a.rows / 7 + 1, 0.04, seed), r = ref::transpose(p);
    DeviceCsr<double> da = upload(a), dc;
    const DeviceCsr<double> dp = upload(p), dr = upload(r);
    amg::gpu::DeviceTransferPlan plan(OffloadSpgemm::automatic);
    amg::gpu::device_galerkin(da, dp, dr, plan, dc);
    expect_same(download(dc), ref::spgemm(r, ref::spgemm(a, p)), "first Galerkin product");
    const amg::gpu::ProductEngines chosen = plan.engines();
    SCOPED_TRACE(amg::gpu::to_string(chosen));
    // No smoothing ran, so A*P decides the level's engine, and R*(A*P) runs on the same one.
    const OffloadSpgemm level = choose_level_spgemm_engine(estimate_spgemm_work_host(a, p));
    EXPECT_EQ(chosen.a_p, level);
    EXPECT_EQ(chosen.r_a_p, level);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (double& v : a.values) v = value(rng);
    da.values.upload(a.values);
    amg::gpu::device_galerkin(da, dp, dr, plan, dc);
    expect_same(download(dc), ref::spgemm(r, ref::spgemm(a, p)), "re-run on new values");
    EXPECT_EQ(plan.engines().a_p, chosen.a_p);
    EXPECT_EQ(plan.engines().r_a_p, chosen.r_a_p);
  }
}

}  // namespace
}  // namespace tessera::cuda
