// Tile SpGEMM on the GPU against the host reference (tessera::ref::spgemm): every precision
// and tile-product path, random (fresh seeds), structured and odd-sized inputs, culled and
// empty products, cancellation and zero dropping, symbolic reuse, bad input. Every numeric
// phase writes into poisoned (NaN) outputs, so an unwritten value fails the comparison.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "spgemm_test_support.hpp"
#include "support/matrix_files.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using cuda::TileProduct;
using cuda::TileSpgemmOptions;
using testing::RandomSpec;
using testing::expect_matches_reference;
using testing::gpu_product;
using testing::random_csr;

struct Shape {
  std::int64_t m, k, n;
};
const Shape kOddShapes[] = {{0, 0, 0}, {1, 1, 1},   {0, 5, 3},   {5, 0, 3},   {5, 3, 0},    {7, 9, 13},
                            {8, 8, 8}, {9, 17, 33}, {63, 65, 17}, {100, 3, 100}, {3, 100, 3}, {130, 121, 140}};

/// `a` with every third stored value an explicit zero. The entries of a product that only such
/// values reach are exact zeros in any precision and summation order (adding a zero never
/// rounds), so the product with zero dropping must remove exactly those the reference drops.
template <class T>
Csr<T> with_explicit_zeros(Csr<T> a) {
  for (std::size_t e = 0; e < a.values.size(); e += 3) a.values[e] = T(0);
  return a;
}

/// A*B on `product` with drop_zeros, against the reference without its exact zeros.
template <class T>
void expect_drops_zeros(const Csr<T>& a, const Csr<T>& b, TileProduct product) {
  SCOPED_TRACE("zeros dropped");
  expect_matches_reference(a, b, gpu_product(a, b, TileSpgemmOptions{product, true}).c, false);
}

/// Every odd shape and density, A*B in value type T on `product`, checked against the reference;
/// in fp64 and fp32 also with explicit zeros in A, zeros dropped. Not in fp16: its products have
/// at most 22 significant bits, so now and then an fp32 sum of random values ends at exactly 0
/// where the double reference keeps a rounding residue, and the dropped patterns differ.
template <class T>
void check_random_products(TileProduct product) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int i = 0;
  for (const Shape& s : kOddShapes) {
    for (double density : {0.0, 0.03, 0.2, 0.7}) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.k) + " * " + std::to_string(s.k) + "x" +
                   std::to_string(s.n) + " density " + std::to_string(density));
      const auto a = convert_values<T>(random_csr(RandomSpec{s.m, s.k, density, 0.1, 0.1, i % 3 == 0}, seed + i));
      const auto b = convert_values<T>(random_csr(RandomSpec{s.k, s.n, density, 0.1, 0.1, i % 3 == 1}, seed + i + 1));
      ++i;
      const auto c = gpu_product(a, b, TileSpgemmOptions{product});
      expect_matches_reference(a, b, c.c);
      if constexpr (!std::is_same_v<T, Half>) expect_drops_zeros(with_explicit_zeros(a), b, product);
    }
  }
}

TEST(TileSpgemmGpu, SmallFp64TensorCore) { check_random_products<double>(TileProduct::tensor_core); }
TEST(TileSpgemmGpu, SmallFp64Fma) { check_random_products<double>(TileProduct::fma); }
TEST(TileSpgemmGpu, SmallFp32) { check_random_products<float>(TileProduct::tensor_core); }
TEST(TileSpgemmGpu, SmallFp16TensorCore) { check_random_products<Half>(TileProduct::tensor_core); }
TEST(TileSpgemmGpu, SmallFp16Fma) { check_random_products<Half>(TileProduct::fma); }

/// One tile of A against two tiles of B (one MMA pair), every fragment position: integer
/// values make the product exact, so any misplaced register is an exact mismatch.
TEST(TileSpgemmGpu, SmallSingleTilePairsAreExact) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int trial = 0; trial < 20; ++trial) {
    const auto a = random_csr(RandomSpec{8, 8, 0.6, 0, 0, false, true}, seed + 2 * trial);
    const auto b = random_csr(RandomSpec{8, 16, 0.6, 0, 0, false, true}, seed + 2 * trial + 1);
    for (TileProduct p : {TileProduct::tensor_core, TileProduct::fma}) {
      const auto c = gpu_product(a, b, TileSpgemmOptions{p});
      EXPECT_EQ(c.c, ref::spgemm(a, b)) << "trial " << trial;
    }
  }
}

/// Every matrix of ../shared/matrices but the complex ones (the reader refuses them): A*A, or
/// A*A^T where A is rectangular, in fp64 on both tile-product paths, into poisoned outputs. Their
/// rows are those of real applications (dense rows beside empty ones, one-entry tiles, rows
/// longer than a tile's columns), which the generators do not make.
TEST(TileSpgemmGpu, EveryRealMatrixOfTheManifest) {
  int seen = 0;
  for (const testing::MatrixFile& f : testing::manifest()) {
    if (f.field == "complex") continue;
    SCOPED_TRACE(f.name);
    const Csr<double> a = io::read_matrix_market(f.path);
    const Csr<double> b = a.rows == a.cols ? a : ref::transpose(a);
    for (TileProduct p : {TileProduct::tensor_core, TileProduct::fma})
      expect_matches_reference(a, b, gpu_product(a, b, TileSpgemmOptions{p}).c);
    ++seen;
  }
  EXPECT_GE(seen, 140) << "matrices missing from " << testing::matrix_dir();
}

/// Generated problems: grids (regular rows) and R-MAT (power-law rows: every bin and the
/// scatter path), A*A in fp64 on both paths and in fp16; then with explicit zeros in A, zeros
/// dropped, the same way. Not elasticity there: its products hold entries that cancel to
/// roundoff, exactly 0 or not by summation order, so the reference cannot say which to drop.
TEST(TileSpgemmGpu, StructuredProblems) {
  for (const char* spec : {"poisson3d:10", "poisson3d27:7", "elasticity3d:4", "rmat:11:8", "random:300:9"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = gen::generate(gen::parse_spec(spec));
    for (TileProduct p : {TileProduct::tensor_core, TileProduct::fma}) expect_matches_reference(a, a, gpu_product(a, a, TileSpgemmOptions{p}).c);
    const auto ah = convert_values<Half>(a);
    expect_matches_reference(ah, ah, gpu_product(ah, ah).c);
    if (std::string(spec).rfind("elasticity", 0) == 0) continue;
    const Csr<double> az = with_explicit_zeros(a);
    EXPECT_LT(ref::spgemm(az, az, ref::SpgemmOptions{false}).nnz(), ref::spgemm(az, az).nnz())
        << "no exact zeros to drop";
    for (TileProduct p : {TileProduct::tensor_core, TileProduct::fma}) expect_drops_zeros(az, az, p);
    const auto azh = convert_values<Half>(az);
    expect_drops_zeros(azh, azh, TileProduct::tensor_core);
  }
}

TEST(TileSpgemmGpu, SkewedRowsUseEveryBinAndAList) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // A: a dense row (thousands of pairs: the global-table bin) over random rows.
  const auto a = random_csr(RandomSpec{600, 600, 0.005, 0.05, 0, true}, seed);
  const auto p = testing::scattering_permutation(600);
  const auto ap = gpu_product(a, p);
  expect_matches_reference(a, p, ap.c);
  EXPECT_GT(ap.info.listed_tasks, 0);
  EXPECT_GT(ap.info.listed_pairs, 0);
  const auto aa = gpu_product(a, a);
  expect_matches_reference(a, a, aa.c);
  EXPECT_GT(aa.info.rows_large, 0);
  EXPECT_GT(aa.info.rows_small + aa.info.rows_medium, 0);
  const auto medium = random_csr(RandomSpec{256, 256, 0.25, 0, 0}, seed + 1);
  const auto mm = gpu_product(medium, medium);
  expect_matches_reference(medium, medium, mm.c);
  EXPECT_GT(mm.info.rows_medium, 0);
}

/// C's values after a numeric phase into poisoned (NaN) values.
template <class T>
HostArray<cuda::spgemm_output_t<T>> numeric_values(cuda::TileSpgemm<T>& plan, const cuda::DeviceTileMatrix<T>& a,
                                                   const cuda::DeviceTileMatrix<T>& b,
                                                   cuda::DeviceTileMatrix<cuda::spgemm_output_t<T>>& c) {
  c.values.fill_bytes(0xff);
  plan.numeric(a, b, c);
  return c.values.template download<HostArray<cuda::spgemm_output_t<T>>>();
}

/// A*B with skewed rows on `options`: right (the reference's bound), and the same bits from a
/// second numeric phase of the plan and from a second plan whose lists are made one row per
/// batch: skewed rows are summed in A's order, listed (in any batches) or (past
/// options.list_bytes_limit) searched, never with atomics, so a GPU AMG setup on power-law
/// matrices repeats bit for bit. Returns the second plan's list batches.
template <class T>
std::int64_t expect_skewed_rows_repeat(const Csr<T>& a, const Csr<T>& b, const TileSpgemmOptions& options) {
  using Out = cuda::spgemm_output_t<T>;
  const auto da = cuda::to_tiles(cuda::upload(a)), db = cuda::to_tiles(cuda::upload(b));
  TileSpgemmOptions row_batches = options;
  row_batches.list_batch_bytes = 0;
  cuda::TileSpgemm<T> plan(options), again(row_batches);
  cuda::DeviceTileMatrix<Out> dc, dc_again;
  plan.symbolic(da, db, dc);
  again.symbolic(da, db, dc_again);
  if (options.list_bytes_limit == 0) {
    EXPECT_EQ(plan.info().listed_tasks, 0) << "lists made past their budget";
  } else {
    EXPECT_GT(plan.info().listed_tasks, 0) << "no listed row: the case misses its point";
    EXPECT_EQ(plan.info().list_batches, 1) << "a small product's lists fit one batch of 1 GiB";
  }
  EXPECT_EQ(again.info().listed_pairs, plan.info().listed_pairs);
  const auto first = numeric_values(plan, da, db, dc);
  expect_matches_reference(a, b, convert_values<double>(cuda::download(cuda::to_csr(dc))));
  for (auto* run : {&plan, &again}) {
    const auto repeated = numeric_values(*run, da, db, run == &plan ? dc : dc_again);
    EXPECT_EQ(repeated.size(), first.size());
    if (repeated.size() != first.size()) continue;
    EXPECT_EQ(std::memcmp(repeated.data(), first.data(), first.size() * sizeof(Out)), 0)
        << (run == &plan ? "the plan's second numeric phase" : "a second plan, lists made row by row")
        << " changed some bits";
  }
  return again.info().list_batches;
}

TEST(TileSpgemmGpu, SkewedRowsRepeatBitForBit) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // A dense row over random rows against a scattering permutation (1201: not a multiple of 8),
  // and R-MAT power-law graphs squared (hub rows), in every precision and product path; the
  // dense row also with a list budget of 0 bytes (searched).
  const auto dense_row = random_csr(RandomSpec{1201, 1201, 0.005, 0.05, 0, true}, seed);
  const auto p = testing::scattering_permutation(1201);
  const Csr<double> rmat = gen::generate(gen::parse_spec("rmat:14:4:seed=" + std::to_string(seed % 1000)));
  for (TileProduct product : {TileProduct::tensor_core, TileProduct::fma}) {
    SCOPED_TRACE(product == TileProduct::tensor_core ? "tensor cores" : "fma");
    const TileSpgemmOptions listed{product}, searched{product, false, 0};
    expect_skewed_rows_repeat(dense_row, p, listed);
    expect_skewed_rows_repeat(dense_row, p, searched);
    EXPECT_GT(expect_skewed_rows_repeat(rmat, rmat, listed), 1) << "R-MAT's hub rows listed in one batch";
    expect_skewed_rows_repeat(convert_values<Half>(rmat), convert_values<Half>(rmat), listed);
  }
  expect_skewed_rows_repeat(convert_values<float>(rmat), convert_values<float>(rmat), TileSpgemmOptions{});
}

/// The list budget (TileSpgemmOptions::list_bytes_limit) counts the kept lists (8 bytes a pair,
/// 4 a task, 8 a block of 8 tasks' first pair) and one batch's scratch (16 bytes a pair): a budget short
/// of one batch of everything makes the lists in smaller batches, the same bits; short of the
/// kept lists, the rows are searched, still the same bits.
TEST(TileSpgemmGpu, ListBudgetShrinksBatchesBeforeSearching) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> rmat = gen::generate(gen::parse_spec("rmat:14:4:seed=" + std::to_string(seed % 1000)));
  const auto da = cuda::to_tiles(cuda::upload(rmat));
  const auto product = [&](std::int64_t limit, cuda::TileSpgemmInfo& info) {
    cuda::TileSpgemm<double> plan(TileSpgemmOptions{TileProduct::tensor_core, false, limit});
    cuda::DeviceTileMatrix<double> c;
    plan.symbolic(da, da, c);
    info = plan.info();
    return numeric_values(plan, da, da, c);
  };
  cuda::TileSpgemmInfo whole, shrunk, searched;
  const auto want = product(-1, whole);
  ASSERT_GT(whole.listed_pairs, 0);
  const std::int64_t kept = 8 * whole.listed_pairs + 4 * whole.listed_tasks + 8 * ((whole.listed_tasks + 7) / 8 + 1);
  EXPECT_EQ(whole.list_bytes, kept);
  const auto values_shrunk = product(kept + 16 * whole.listed_pairs - 1, shrunk);
  const auto values_searched = product(kept - 1, searched);
  EXPECT_EQ(whole.list_batches, 1);
  EXPECT_GT(shrunk.list_batches, 1) << "a budget one byte short of one batch";
  EXPECT_EQ(shrunk.listed_pairs, whole.listed_pairs);
  EXPECT_EQ(searched.list_batches, 0) << "a budget one byte short of the kept lists";
  EXPECT_EQ(searched.listed_tasks, 0);
  ASSERT_EQ(values_shrunk.size(), want.size());
  ASSERT_EQ(values_searched.size(), want.size());
  EXPECT_EQ(std::memcmp(values_shrunk.data(), want.data(), want.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(values_searched.data(), want.data(), want.size() * sizeof(double)), 0);
}

TEST(TileSpgemmGpu, RectangularProducts) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto a = random_csr(RandomSpec{37, 250, 0.1, 0.1, 0.1}, seed);
  const auto b = random_csr(RandomSpec{250, 23, 0.1, 0.1, 0.1}, seed + 1);
  const auto c = random_csr(RandomSpec{23, 41, 0.3, 0.1, 0.1}, seed + 2);
  expect_matches_reference(a, b, gpu_product(a, b).c);
  expect_matches_reference(b, c, gpu_product(b, c).c);
}

TEST(TileSpgemmGpu, EmptyAndCulledProducts) {
  // A uses only columns 0-3 of each tile, B only rows 4-7: every tile pair matches (same K)
  // but every boolean product is empty, so C has no tiles at all.
  std::vector<std::int64_t> ar, ac, br, bc;
  for (std::int64_t i = 0; i < 40; ++i) {
    ar.push_back(i), ac.push_back((i % 5) * 8 + i % 4);
    br.push_back((i % 5) * 8 + 4 + i % 4), bc.push_back(i);
  }
  const auto a = csr_from_triplets<double>(40, 40, ar, ac, std::vector<double>(40, 2.0));
  const auto b = csr_from_triplets<double>(40, 40, br, bc, std::vector<double>(40, 3.0));
  const auto c = gpu_product(a, b);
  EXPECT_GT(c.info.tile_pairs, 0);
  EXPECT_EQ(c.info.c_tiles, 0);
  EXPECT_EQ(c.c.nnz(), 0);
  expect_matches_reference(a, b, c.c);
  // Structurally empty: no matching inner index at all.
  const auto z = gpu_product(a, Csr<double>::empty(40, 17));
  EXPECT_EQ(z.info.tile_pairs, 0);
  EXPECT_EQ(z.c.nnz(), 0);
}

/// A = [X X; W 0], B = [Y; -Y]: C = [XY - XY; WY], exact zeros in the top block (integers).
TEST(TileSpgemmGpu, CancellationKeepsOrDropsZeros) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto x = random_csr(RandomSpec{21, 13, 0.3, 0, 0, false, true}, seed);
  const auto w = random_csr(RandomSpec{19, 13, 0.3, 0, 0, false, true}, seed + 1);
  const auto y = random_csr(RandomSpec{13, 29, 0.3, 0, 0, false, true}, seed + 2);
  std::vector<std::int64_t> ar, ac, br, bc;
  std::vector<double> av, bv;
  for (std::int64_t i = 0; i < 21; ++i)
    for (std::int64_t e = x.row_ptr[i]; e < x.row_ptr[i + 1]; ++e)
      for (int copy = 0; copy < 2; ++copy) ar.push_back(i), ac.push_back(x.col_idx[e] + 13 * copy), av.push_back(x.values[e]);
  for (std::int64_t i = 0; i < 19; ++i)
    for (std::int64_t e = w.row_ptr[i]; e < w.row_ptr[i + 1]; ++e) ar.push_back(21 + i), ac.push_back(w.col_idx[e]), av.push_back(w.values[e]);
  for (std::int64_t i = 0; i < 13; ++i)
    for (std::int64_t e = y.row_ptr[i]; e < y.row_ptr[i + 1]; ++e)
      for (int copy = 0; copy < 2; ++copy)
        br.push_back(i + 13 * copy), bc.push_back(y.col_idx[e]), bv.push_back(copy ? -y.values[e] : y.values[e]);
  const auto a = csr_from_triplets<double>(40, 26, ar, ac, av);
  const auto b = csr_from_triplets<double>(26, 29, br, bc, bv);
  for (TileProduct p : {TileProduct::tensor_core, TileProduct::fma}) {
    const auto kept = gpu_product(a, b, TileSpgemmOptions{p, false});
    expect_matches_reference(a, b, kept.c, true);
    const auto dropped = gpu_product(a, b, TileSpgemmOptions{p, true});
    expect_matches_reference(a, b, dropped.c, false);
    EXPECT_LT(dropped.c.nnz(), kept.c.nnz());
    for (double v : dropped.c.values) EXPECT_NE(v, 0.0);
  }
}

/// One symbolic phase, two numeric phases on new values with the same patterns.
TEST(TileSpgemmGpu, SymbolicReuseWithNewValues) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto a = random_csr(RandomSpec{150, 140, 0.05, 0.1, 0, true}, seed);
  auto b = random_csr(RandomSpec{140, 130, 0.05, 0, 0.1}, seed + 1);
  auto da = cuda::to_tiles(cuda::upload(a)), db = cuda::to_tiles(cuda::upload(b));
  cuda::TileSpgemm<double> plan;
  cuda::DeviceTileMatrix<double> dc;
  plan.symbolic(da, db, dc);
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {  // new values, same patterns: rebuild the inputs' device tiles
      for (auto& v : a.values) v = 3.0 * v - 0.5;
      for (auto& v : b.values) v = -v * v;
      da = cuda::to_tiles(cuda::upload(a));
      db = cuda::to_tiles(cuda::upload(b));
    }
    dc.values.fill_bytes(0xff);
    plan.numeric(da, db, dc);
    expect_matches_reference(a, b, download(cuda::to_csr(dc)));
  }
}

TEST(TileSpgemmGpu, BadInputIsAnInputError) {
  const auto a = random_csr(RandomSpec{10, 12, 0.3}, 1), b = random_csr(RandomSpec{11, 10, 0.3}, 2);
  cuda::TileSpgemm<double> plan;
  cuda::DeviceTileMatrix<double> c;
  const auto da = cuda::to_tiles(cuda::upload(a)), db = cuda::to_tiles(cuda::upload(b));
  EXPECT_THROW(plan.symbolic(da, db, c), InputError);
  EXPECT_THROW(plan.numeric(da, da, c), InputError);  // no symbolic yet
  // FP16: an Inf in the device values is refused with a clear message.
  auto h = convert_values<Half>(random_csr(RandomSpec{9, 9, 0.5}, 3));
  h.values.at(0).bits = 0x7c00;  // +Inf
  const auto dh = cuda::to_tiles(cuda::upload(h));
  cuda::TileSpgemm<Half> half_plan;
  cuda::DeviceTileMatrix<float> hc;
  half_plan.symbolic(dh, dh, hc);
  EXPECT_THROW(half_plan.numeric(dh, dh, hc), InputError);
}

}  // namespace
}  // namespace tessera
