// The row-wise hash SpGEMM (local/cuda/hash_spgemm.hpp) against ref::spgemm with keep_zeros
// (the engine keeps the structural pattern), within the rounding bound of
// spgemm_test_support.hpp: random rectangular and degenerate shapes (fresh seeds), Poisson 7/27,
// elasticity, R-MAT, A*A^T, real SPD matrices, rows long enough for the global-memory tables,
// B of few columns (the capped row bound), exact cancellation, poisoned outputs, numeric
// re-runs on new values, row ranges, row batches, the info() counters (rows on both sides of
// every bin edge) and the InputErrors.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "local/core/error.hpp"
#include "local/cuda/hash_spgemm.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "local/reference/kernels.hpp"
#include "spgemm_test_support.hpp"
#include "support/matrix_files.hpp"
#include "support/random_matrix.hpp"

namespace tessera::cuda {
namespace {

using testing::expect_matches_reference;

// The header: a row's table holds twice its bound and the largest shared table has 16384
// slots, so a row whose bound passes 8192 goes to the global-memory tables.
constexpr std::int64_t kLargestSharedBound = 8192;

Csr<double> random_matrix(std::int64_t rows, std::int64_t cols, double density, std::uint64_t seed,
                          bool dense_row = false) {
  testing::RandomSpec spec;
  spec.rows = rows, spec.cols = cols, spec.density = density, spec.empty_row_fraction = 0.1;
  spec.empty_col_fraction = 0.1, spec.dense_row = dense_row;
  return testing::random_csr(spec, seed);
}

Csr<double> generated(const std::string& spec) { return gen::generate(gen::parse_spec(spec)); }

/// Row r gets lengths[r] distinct columns drawn uniformly from [0, cols), values in [-1, 1].
Csr<double> rows_of_lengths(std::int64_t cols, const std::vector<std::int64_t>& lengths, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> column(0, std::int32_t(cols - 1));
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Csr<double> m = Csr<double>::empty(std::int64_t(lengths.size()), cols);
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    std::set<std::int32_t> picked;
    while (std::int64_t(picked.size()) < lengths[r]) picked.insert(column(rng));
    for (const std::int32_t c : picked) m.col_idx.push_back(c), m.values.push_back(value(rng));
    m.row_ptr[r + 1] = m.nnz();
  }
  return m;
}

/// Rows [begin, end) of `a` as a matrix of their own (the reference of a RowRange product).
Csr<double> row_slice(const Csr<double>& a, std::int64_t begin, std::int64_t end) {
  Csr<double> s = Csr<double>::empty(end - begin, a.cols);
  for (std::int64_t r = begin; r < end; ++r) s.row_ptr[r - begin + 1] = a.row_ptr[r + 1] - a.row_ptr[begin];
  s.col_idx.assign(a.col_idx.begin() + a.row_ptr[begin], a.col_idx.begin() + a.row_ptr[end]);
  s.values.assign(a.values.begin() + a.row_ptr[begin], a.values.begin() + a.row_ptr[end]);
  return s;
}

/// Same pattern, new values in [-1, 1] (reproducible from `seed`).
Csr<double> with_new_values(Csr<double> a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (double& v : a.values) v = value(rng);
  return a;
}

/// Per row of A, its products (B's row lengths summed over the row), uncapped.
std::vector<std::int64_t> row_products(const Csr<double>& a, const Csr<double>& b) {
  std::vector<std::int64_t> products(std::size_t(a.rows), 0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) products[r] += b.row_length(a.col_idx[e]);
  return products;
}

/// The bins as the header defines them: every row binned once, bin 0 = no products, the last
/// bin = bound (products capped at B's columns) past the largest shared table.
void expect_bins(const HashSpgemmInfo& info, const Csr<double>& a, const Csr<double>& b) {
  std::int64_t binned = 0, empty = 0, global = 0;
  for (const std::int64_t n : info.rows_per_bin) binned += n;
  for (const std::int64_t p : row_products(a, b)) {
    empty += p == 0;
    global += std::min(p, b.cols) > kLargestSharedBound;
  }
  EXPECT_EQ(binned, a.rows);
  EXPECT_EQ(info.rows_per_bin.front(), empty) << "rows with no products";
  EXPECT_EQ(info.rows_per_bin.back(), global) << "rows in the global-memory bin";
  EXPECT_EQ(info.global_table_rows, global);
  EXPECT_EQ(info.global_table_chunks > 0, global > 0) << info.global_table_chunks << " chunks";
}

/// info() of the product A*B (A already restricted to the range's rows).
void expect_info(const HashSpgemmInfo& info, const Csr<double>& a, const Csr<double>& b, std::int64_t c_nnz) {
  EXPECT_EQ(info.rows, a.rows);
  EXPECT_EQ(info.products, ref::spgemm_flops(a, b));
  EXPECT_EQ(info.c_nnz, c_nnz);
  expect_bins(info, a, b);
}

/// symbolic, poison C's columns and values (0xff bytes: column -1, NaN), numeric, download.
Csr<double> poisoned_product(HashSpgemm& plan, const DeviceCsr<double>& da, const DeviceCsr<double>& db,
                             RowRange range = {}) {
  DeviceCsr<double> dc;
  plan.symbolic(da, db, dc, range);
  EXPECT_TRUE(plan.has_symbolic());
  dc.col_idx.fill_bytes(0xff);
  dc.values.fill_bytes(0xff);
  plan.numeric(da, db, dc);
  return download(dc);
}

/// The plan (poisoned outputs) and the one-shot hash_spgemm against the reference, and info().
void check_product(const Csr<double>& a, const Csr<double>& b, const std::string& what) {
  SCOPED_TRACE(what);
  const DeviceCsr<double> da = upload(a), db = upload(b);
  HashSpgemm plan;
  const Csr<double> c = poisoned_product(plan, da, db);
  expect_matches_reference(a, b, c);
  expect_info(plan.info(), a, b, c.nnz());
  HashSpgemm counter;
  DeviceBuffer<std::int64_t> counted;
  counter.count_rows(da, db, RowRange{}, counted);
  EXPECT_EQ(counted.download(), c.row_ptr) << "count_rows";
  {
    SCOPED_TRACE("one-shot hash_spgemm");
    expect_matches_reference(a, b, download(hash_spgemm(da, db)));
  }
}

std::string seeded(const std::string& what, std::uint64_t seed) { return what + ", seed " + std::to_string(seed); }

TEST(HashSpgemm, RandomRectangularFreshSeeds) {
  const std::int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {37, 29, 41}, {101, 250, 67}, {333, 17, 200}, {250, 301, 123}};
  for (const auto& s : shapes)
    for (const double density : {0.02, 0.15, 0.6}) {
      const std::uint64_t seed = testing::fresh_seed();
      const Csr<double> a = random_matrix(s[0], s[1], density, seed), b = random_matrix(s[1], s[2], density, seed + 1);
      check_product(a, b, seeded(std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) +
                                     " density " + std::to_string(density), seed));
    }
}

TEST(HashSpgemm, EmptyAndDegenerateShapes) {
  const std::uint64_t seed = testing::fresh_seed();
  check_product(Csr<double>::empty(0, 0), Csr<double>::empty(0, 0), "0x0 * 0x0");
  check_product(Csr<double>::empty(5, 0), Csr<double>::empty(0, 7), "5x0 * 0x7");
  check_product(Csr<double>::empty(0, 9), random_matrix(9, 4, 0.5, seed), seeded("0x9 * 9x4", seed));
  check_product(Csr<double>::empty(9, 11), random_matrix(11, 3, 0.5, seed), seeded("no entries in A", seed));
  check_product(random_matrix(11, 13, 0.5, seed), Csr<double>::empty(13, 4), seeded("no entries in B", seed));
  testing::RandomSpec spec;  // one dense row among empty ones
  spec.rows = 97, spec.cols = 301, spec.density = 0.5, spec.empty_row_fraction = 1.0, spec.dense_row = true;
  check_product(testing::random_csr(spec, seed), random_matrix(301, 157, 0.3, seed + 1), seeded("one dense row", seed));
}

TEST(HashSpgemm, StructuredAndGraphProblems) {
  for (const char* spec : {"poisson3d:12", "poisson3d27:9", "elasticity3d:6", "rmat:12:8", "random:999:7"}) {
    const Csr<double> a = generated(spec);
    check_product(a, a, std::string(spec) + " A*A");
  }
  const std::uint64_t seed = testing::fresh_seed();
  const Csr<double> a = random_matrix(203, 517, 0.05, seed);
  check_product(a, ref::transpose(a), seeded("random A*A^T", seed));
  const Csr<double> r = generated("rmat:10:8");
  check_product(r, ref::transpose(r), "rmat:10:8 A*A^T");
}

TEST(HashSpgemm, RealSpdMatrices) {
  int seen = 0;
  for (const testing::MatrixFile& f : testing::manifest())
    if (f.name == "bcsstk21" || f.name == "bcsstk06" || f.name == "1138_bus") {
      const Csr<double> a = io::read_matrix_market(f.path);
      check_product(a, a, f.name + " A*A");
      ++seen;
    }
  EXPECT_GT(seen, 0) << "no real matrices found in " << testing::matrix_dir();
}

/// Rows 17 and 40 of A have 200 and 150 entries over B rows of 60 entries into 25000 columns:
/// 12000 and 9000 products, past the shared tables; the other rows have 0 to 6.
struct LongRowsCase {
  Csr<double> a, b;
};
LongRowsCase long_rows_case(std::uint64_t seed) {
  std::vector<std::int64_t> a_lengths(61);
  for (std::size_t r = 0; r < a_lengths.size(); ++r) a_lengths[r] = std::int64_t(r % 7);
  a_lengths[17] = 200, a_lengths[40] = 150;
  return {rows_of_lengths(400, a_lengths, seed), rows_of_lengths(25000, std::vector<std::int64_t>(400, 60), seed + 1)};
}

TEST(HashSpgemm, LongRowsUseTheGlobalTables) {
  const std::uint64_t seed = testing::fresh_seed();
  const LongRowsCase t = long_rows_case(seed);
  check_product(t.a, t.b, seeded("two rows past 8192 products", seed));
  HashSpgemm plan;
  poisoned_product(plan, upload(t.a), upload(t.b));
  EXPECT_EQ(plan.info().global_table_rows, 2);
  EXPECT_GT(plan.info().global_table_chunks, 0);
  // 12000 products into 25000 columns make ~9500 entries: past the shared tables in the numeric
  // phase too (its bins go by exact length)
  EXPECT_GT(plan.info().numeric_rows_per_bin[HashSpgemmInfo::kBins - 1], 0);
}

/// Holds the global-table slot budget for a scope and restores the default (0) however the
/// scope ends, a failed ASSERT or an exception included, so no later test runs with it.
class GlobalSlotBudget {
 public:
  explicit GlobalSlotBudget(std::int64_t slots) { testing_hooks::set_hash_global_slot_budget(slots); }
  ~GlobalSlotBudget() { testing_hooks::set_hash_global_slot_budget(0); }
  GlobalSlotBudget(const GlobalSlotBudget&) = delete;
  GlobalSlotBudget& operator=(const GlobalSlotBudget&) = delete;
};

TEST(HashSpgemm, GlobalRowsInSeveralChunks) {
  // A budget of one slot puts each global row in a chunk of its own (a row's table always runs).
  const std::uint64_t seed = testing::fresh_seed();
  const LongRowsCase t = long_rows_case(seed);
  const GlobalSlotBudget one_slot(1);
  check_product(t.a, t.b, seeded("one global row per chunk", seed));
  HashSpgemm plan;
  poisoned_product(plan, upload(t.a), upload(t.b));
  EXPECT_EQ(plan.info().global_table_chunks, 2);
}

/// Square n x n, row r holds one entry at column perm[r] (a random permutation), values in
/// [-1, 1]: a row of A with p entries then has p products into p distinct columns, so its
/// bound (products) and its exact length in C are both p.
Csr<double> one_distinct_column_per_row(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> perm(std::size_t(n), 0);
  for (std::int64_t r = 0; r < n; ++r) perm[std::size_t(r)] = std::int32_t(r);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Csr<double> m = Csr<double>::empty(n, n);
  for (std::int64_t r = 0; r < n; ++r) {
    m.col_idx.push_back(perm[std::size_t(r)]), m.values.push_back(value(rng));
    m.row_ptr[r + 1] = r + 1;
  }
  return m;
}

/// The largest shared-table bin of the current device, as hash_spgemm.cu decides it: numeric
/// tables of 12 KB a block for bins 1-6, then 24, 48, 96 and 192 KB (hash_spgemm_kernels.cuh),
/// plus 1 KB of counters, within the opt-in shared memory per block (all ten on H100 / H200).
int device_max_shared_bin() {
  int device = 0, optin = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), cudaSuccess);
  constexpr int kNumericKiB[] = {12, 12, 12, 12, 12, 12, 24, 48, 96, 192};  // bins 1..10
  int bin = 0;
  for (int b = 1; b <= 10; ++b)
    if ((kNumericKiB[b - 1] + 1) * 1024 <= optin) bin = b;
  return bin;
}

TEST(HashSpgemm, RowsOnTheBinEdges) {
  // Bin b (1..10) takes bounds in (8 << (b-1), 16 << (b-1)] (16, 32, ..., 8192); past 8192 the
  // global bin. Rows of 2^k and 2^k + 1 products for k = 4..13 sit on both sides of every edge;
  // one empty row and one of a single product fill bin 0 and the bottom of bin 1.
  std::vector<std::int64_t> lengths = {1, 0};
  for (int k = 4; k <= 13; ++k) lengths.push_back(std::int64_t(1) << k), lengths.push_back((std::int64_t(1) << k) + 1);
  const std::int64_t n = 20000;  // B's columns: caps no row (the longest has 8193 products)
  const std::uint64_t seed = testing::fresh_seed();
  const Csr<double> a = rows_of_lengths(n, lengths, seed), b = one_distinct_column_per_row(n, seed + 1);
  check_product(a, b, seeded("rows of 2^k and 2^k + 1 products", seed));

  SCOPED_TRACE(seeded("bin edges", seed));
  HashSpgemm plan;
  const Csr<double> c = poisoned_product(plan, upload(a), upload(b));
  for (std::size_t r = 0; r < lengths.size(); ++r) ASSERT_EQ(c.row_length(std::int64_t(r)), lengths[r]) << "row " << r;
  // bin 0: {0}; bin 1: {1, 16}; bin b = 2..10: {2^(b+2) + 1, 2^(b+3)}; global: {8193}
  std::array<std::int64_t, HashSpgemmInfo::kBins> by_products = {1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1};
  const int max_shared_bin = device_max_shared_bin();  // past it (smaller devices): global rows
  for (int bin = max_shared_bin + 1; bin < HashSpgemmInfo::kBins - 1; ++bin)
    by_products.back() += by_products[bin], by_products[bin] = 0;
  const HashSpgemmInfo& info = plan.info();
  EXPECT_EQ(info.rows_per_bin, by_products) << "largest shared bin " << max_shared_bin;
  EXPECT_EQ(info.global_table_rows, by_products.back());
  EXPECT_EQ(info.global_table_chunks, 1) << "the default budget holds every global table at once";
  // Numeric bins go by exact length, here equal to the products. Only the bins of rows past 512
  // products (7 and up) are asserted: the engine may keep the small rows' symbolic bins.
  std::int64_t numeric_binned = 0;
  for (int bin = 0; bin < HashSpgemmInfo::kBins; ++bin) {
    numeric_binned += info.numeric_rows_per_bin[bin];
    if (bin >= 7) EXPECT_EQ(info.numeric_rows_per_bin[bin], by_products[bin]) << "numeric bin " << bin;
  }
  EXPECT_EQ(numeric_binned, a.rows);
}

/// Rows that fill every column of B, B's columns at and around powers of two: the block radix
/// sort keys empty slots b_cols, so a key width one bit short would sort them in among column 0.
TEST(HashSpgemm, FullRowsAtPowerOfTwoColumnCounts) {
  const std::uint64_t seed = testing::fresh_seed();
  for (const std::int64_t b_cols : {1024, 1025, 2047, 2048, 4096, 8191, 8192, 8193}) {
    const std::vector<std::int64_t> full(8, b_cols);
    const Csr<double> b = rows_of_lengths(b_cols, full, seed);          // 8 dense rows
    const Csr<double> a = rows_of_lengths(8, std::vector<std::int64_t>(37, 1), seed + 1);  // one entry a row
    check_product(a, b, seeded("C rows of " + std::to_string(b_cols) + " = all of B's columns", seed));
  }
}

TEST(HashSpgemm, FewColumnsOfBCapTheRowBound) {
  const std::uint64_t seed = testing::fresh_seed();
  const Csr<double> a = random_matrix(2000, 2000, 0.3, seed);  // ~540 entries a row
  for (const std::int64_t b_cols : {5, 40}) {
    const Csr<double> b = random_matrix(2000, b_cols, 0.6, seed + 1);
    check_product(a, b, seeded("2000x2000 * 2000x" + std::to_string(b_cols), seed));
    // Rows of more than 8192 products stay in shared tables: their bound is B's columns.
    const std::vector<std::int64_t> products = row_products(a, b);
    if (b_cols == 40) EXPECT_GT(*std::max_element(products.begin(), products.end()), kLargestSharedBound);
  }
}

TEST(HashSpgemm, CancellationKeepsTheStructuralZero) {
  // Row 0 of A*B: (1*1 + 1*-1, 1*2 + 1*-2, 1*3) = (0, 0, 3): two exact zeros kept as entries.
  const Csr<double> a = csr_from_triplets<double>(2, 2, {0, 0, 1}, {0, 1, 0}, {1, 1, 1});
  const Csr<double> b = csr_from_triplets<double>(2, 3, {0, 0, 1, 1, 1}, {0, 1, 0, 1, 2}, {1, 2, -1, -2, 3});
  check_product(a, b, "exact cancellation");
  const Csr<double> c = download(hash_spgemm(upload(a), upload(b)));
  ASSERT_EQ(c.nnz(), 5);
  EXPECT_EQ(c.values[0], 0.0);
  EXPECT_EQ(c.values[1], 0.0);
  EXPECT_EQ(c.values[2], 3.0);
}

/// numeric() twice on one plan: the second on new values of A and B (same patterns), with C's
/// values poisoned again in between so nothing of the first run can pass for the second.
void check_rerun(const Csr<double>& a, const Csr<double>& b, std::uint64_t seed, const std::string& what) {
  SCOPED_TRACE(seeded(what, seed));
  DeviceCsr<double> da = upload(a), db = upload(b), dc;
  HashSpgemm plan;
  plan.symbolic(da, db, dc);
  plan.numeric(da, db, dc);
  expect_matches_reference(a, b, download(dc));
  const Csr<double> a2 = with_new_values(a, seed + 2), b2 = with_new_values(b, seed + 3);
  da.values.upload(a2.values), db.values.upload(b2.values);
  dc.values.fill_bytes(0xff);
  plan.numeric(da, db, dc);
  expect_matches_reference(a2, b2, download(dc));
}

TEST(HashSpgemm, NumericRerunOnNewValues) {
  const std::uint64_t seed = testing::fresh_seed();
  check_rerun(random_matrix(157, 93, 0.1, seed), random_matrix(93, 71, 0.1, seed + 1), seed, "random");
  const Csr<double> p = generated("poisson3d27:7");
  check_rerun(p, p, seed, "poisson3d27:7");
  const LongRowsCase t = long_rows_case(seed);
  check_rerun(t.a, t.b, seed, "long rows (global tables)");
}

/// C = A*B with each value summed left to right in A's CSR order (then B's), product rounded
/// before the add: the order the numeric phase promises (for_each_product_in_order).
Csr<double> product_in_csr_order(const Csr<double>& a, const Csr<double>& b) {
  Csr<double> c = Csr<double>::empty(a.rows, b.cols);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    std::map<std::int32_t, double> row;
    for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
      for (std::int64_t j = b.row_ptr[a.col_idx[e]]; j < b.row_ptr[a.col_idx[e] + 1]; ++j) {
        const double p = a.values[e] * b.values[j];
        row[b.col_idx[j]] += p;
      }
    for (const auto& [col, v] : row) c.col_idx.push_back(col), c.values.push_back(v);
    c.row_ptr[i + 1] = c.nnz();
  }
  return c;
}

/// Values equal bit for bit (NaN never equals: the poison must be gone).
std::int64_t bitwise_differences(const HostArray<double>& got, const HostArray<double>& want) {
  std::int64_t n = got.size() == want.size() ? 0 : 1;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    n += std::memcmp(&got[i], &want[i], sizeof(double)) != 0;
  return n;
}

// Run-to-run reproducibility: with atomic adds from several A entries at once, the last bits of
// C depended on timing, and AMG's coarse decisions on those bits (two runs of the device setup
// on poisson3d:64 built different level-1 prolongators). The numeric phase now sums every
// value in A's CSR order in every bin: the shared tables of groups within a warp (4-32 lanes),
// of named-barrier groups (64 lanes, two to a block), of a block, and the global tables.
TEST(HashSpgemm, ValuesAreSummedInCsrOrderBitForBit) {
  const std::uint64_t seed = testing::fresh_seed();
  std::vector<std::int64_t> lengths(300);
  for (std::size_t r = 0; r < lengths.size(); ++r) lengths[r] = std::int64_t(r % 13) * 9;  // 0..108 entries
  const LongRowsCase t = long_rows_case(seed);
  struct Case {
    std::string what;
    Csr<double> a, b;
  };
  const std::vector<Case> cases = {
      {"random 400x400 squared", random_matrix(400, 400, 0.15, seed), random_matrix(400, 400, 0.15, seed)},
      {"rows of 0..108 entries times rows of 12", rows_of_lengths(900, lengths, seed + 2),
       rows_of_lengths(3000, std::vector<std::int64_t>(900, 12), seed + 3)},
      {"long rows (global tables)", t.a, t.b},
      {"rmat:10:16 squared", generated("rmat:10:16"), generated("rmat:10:16")}};
  for (const Case& k : cases) {
    SCOPED_TRACE(seeded(k.what, seed));
    const DeviceCsr<double> da = upload(k.a), db = upload(k.b);
    HashSpgemm plan;
    const Csr<double> c = poisoned_product(plan, da, db);
    const Csr<double> want = product_in_csr_order(k.a, k.b);
    ASSERT_EQ(c.row_ptr, want.row_ptr);
    ASSERT_EQ(c.col_idx, want.col_idx);
    EXPECT_EQ(bitwise_differences(c.values, want.values), 0);
    HashSpgemm again;  // a second plan and run: the same bits
    EXPECT_EQ(bitwise_differences(poisoned_product(again, da, db).values, c.values), 0);
  }
}

// A few B rows 100x longer than the others: a numeric walk that splits A's row by B's mean
// row length (sub-groups, products held in registers) must still add every column in CSR
// order, including the columns of those long rows. Rows of A of 0..56 entries (several bins,
// groups of 4 to 1024 lanes) and one row over all of B (every long row, a whole block).
TEST(HashSpgemm, LongBRowsAmongShortOnesAreSummedInCsrOrderBitForBit) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seeded("B rows of 2..6 and of 600 entries", seed));
  std::vector<std::int64_t> b_lengths(200), a_lengths(65);
  for (std::size_t k = 0; k < b_lengths.size(); ++k) b_lengths[k] = k % 50 == 0 ? 600 : 2 + std::int64_t(k % 5);
  for (std::size_t r = 0; r < a_lengths.size(); ++r) a_lengths[r] = std::int64_t(r % 9) * 7;
  a_lengths.back() = 200;
  const Csr<double> a = rows_of_lengths(200, a_lengths, seed), b = rows_of_lengths(1500, b_lengths, seed + 1);
  const DeviceCsr<double> da = upload(a), db = upload(b);
  HashSpgemm plan;
  const Csr<double> c = poisoned_product(plan, da, db);
  const Csr<double> want = product_in_csr_order(a, b);
  ASSERT_EQ(c.row_ptr, want.row_ptr);
  ASSERT_EQ(c.col_idx, want.col_idx);
  EXPECT_EQ(bitwise_differences(c.values, want.values), 0);
}

void check_range(const Csr<double>& a, const Csr<double>& b, RowRange range, const std::string& what) {
  const std::int64_t end = range.end < 0 ? a.rows : range.end;
  SCOPED_TRACE(what + ", rows [" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ")");
  HashSpgemm plan;
  const Csr<double> c = poisoned_product(plan, upload(a), upload(b), range);
  const Csr<double> a_rows = row_slice(a, range.begin, end);
  expect_matches_reference(a_rows, b, c);  // = rows begin..end of A*B, row_ptr from 0
  expect_info(plan.info(), a_rows, b, c.nnz());
}

TEST(HashSpgemm, RowRangesGiveTheRowsOfTheProduct) {
  const std::uint64_t seed = testing::fresh_seed();
  const Csr<double> a = random_matrix(157, 93, 0.1, seed), b = random_matrix(93, 71, 0.1, seed + 1);
  const std::string what = seeded("157x93x71", seed);
  const RowRange ranges[] = {{0, 157}, {0, -1}, {13, 14}, {40, 101}, {156, 157}, {156, -1},
                             {0, 0},   {77, 77}, {157, 157}, {157, -1}};
  for (const RowRange range : ranges) check_range(a, b, range, what);
  const LongRowsCase t = long_rows_case(seed);
  check_range(t.a, t.b, {17, 18}, seeded("long row 17 alone", seed));
  check_range(t.a, t.b, {18, -1}, seeded("from row 18", seed));
}

TEST(HashSpgemm, RowRangeOutsideAIsAnInputError) {
  const Csr<double> a = generated("poisson3d:5");
  const DeviceCsr<double> da = upload(a);
  for (const RowRange range : {RowRange{-1, 3}, RowRange{0, a.rows + 1}, RowRange{5, 3}, RowRange{a.rows + 1, -1}}) {
    SCOPED_TRACE("rows [" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ")");
    HashSpgemm plan;
    DeviceCsr<double> dc;
    EXPECT_THROW(plan.symbolic(da, da, dc, range), InputError);
  }
}

/// The batches of hash_spgemm_row_batches, appended in order, and checks on each as it comes.
Csr<double> product_in_batches(const Csr<double>& a, const Csr<double>& b, std::int64_t max_batch_nnz,
                               std::int64_t& total, int& batches) {
  Csr<double> c = Csr<double>::empty(0, b.cols);
  batches = 0;
  const auto consume = [&](std::int64_t first_row, const DeviceCsr<double>& part) {
    EXPECT_EQ(first_row, c.rows) << "batches must be consecutive";
    EXPECT_EQ(part.cols, b.cols);
    EXPECT_TRUE(part.nnz <= max_batch_nnz || part.rows == 1) << part.rows << " rows, " << part.nnz << " entries";
    const Csr<double> h = download(part);
    for (std::int64_t r = 0; r < h.rows; ++r) c.row_ptr.push_back(c.nnz() + h.row_ptr[r + 1]);
    c.col_idx.insert(c.col_idx.end(), h.col_idx.begin(), h.col_idx.end());
    c.values.insert(c.values.end(), h.values.begin(), h.values.end());
    c.rows += h.rows;
    ++batches;
  };
  total = hash_spgemm_row_batches(upload(a), upload(b), max_batch_nnz, consume);
  return c;
}

TEST(HashSpgemm, RowBatchesConcatenateToTheProduct) {
  const std::uint64_t seed = testing::fresh_seed();
  // One dense row of A: its C row is the longest, longer than the small batch limit.
  const Csr<double> a = random_matrix(300, 200, 0.05, seed, true), b = random_matrix(200, 400, 0.05, seed + 1);
  const Csr<double> ref_c = ref::spgemm(a, b, ref::SpgemmOptions{true});
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < ref_c.rows; ++r) longest = std::max(longest, ref_c.row_length(r));
  for (const std::int64_t max_batch : {std::int64_t(1), longest - 1, 3 * longest, ref_c.nnz() + 1}) {
    SCOPED_TRACE(seeded("max_batch_nnz " + std::to_string(max_batch), seed));
    std::int64_t total = -1;
    int batches = 0;
    const Csr<double> c = product_in_batches(a, b, max_batch, total, batches);
    EXPECT_EQ(total, ref_c.nnz());
    expect_matches_reference(a, b, c);
    if (max_batch == longest - 1) EXPECT_GT(batches, 2);
    if (max_batch > ref_c.nnz()) EXPECT_EQ(batches, 1);
  }
  std::int64_t total = -1;
  int batches = 0;
  const Csr<double> none = product_in_batches(Csr<double>::empty(0, 200), b, 100, total, batches);
  EXPECT_EQ(total, 0);
  EXPECT_EQ(none.rows, 0);
}

TEST(HashSpgemm, MismatchedShapesAreInputErrors) {
  const DeviceCsr<double> a = upload(Csr<double>::empty(4, 4)), b = upload(Csr<double>::empty(6, 4));
  HashSpgemm plan;
  DeviceCsr<double> c;
  EXPECT_THROW(plan.symbolic(a, b, c), InputError);
  EXPECT_THROW(hash_spgemm(a, b), InputError);
  const auto ignore = [](std::int64_t, const DeviceCsr<double>&) {};
  EXPECT_THROW(hash_spgemm_row_batches(a, b, 100, ignore), InputError);
  EXPECT_THROW(hash_spgemm_row_batches(a, a, 0, ignore), InputError) << "max_batch_nnz must be positive";
}

TEST(HashSpgemm, SizesPastInt32AreInputErrors) {
  // Shapes only (no arrays): the size check comes before any device access.
  const std::int64_t past_int32 = std::int64_t(1) << 31;
  DeviceCsr<double> tall, wide, small = upload(Csr<double>::empty(4, 4)), c;
  tall.rows = past_int32, tall.cols = 4;
  wide.rows = 4, wide.cols = past_int32;
  HashSpgemm plan;
  EXPECT_THROW(plan.symbolic(tall, small, c), InputError) << "A rows past int32";
  EXPECT_THROW(plan.symbolic(small, wide, c), InputError) << "B columns past int32";
}

TEST(HashSpgemm, NumericNeedsTheSymbolicPatterns) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seeded("57x43x39", seed));
  const Csr<double> a = random_matrix(57, 43, 0.2, seed), b = random_matrix(43, 39, 0.2, seed + 1);
  ASSERT_GT(a.nnz(), 0);
  ASSERT_GT(b.nnz(), 0);
  const DeviceCsr<double> da = upload(a), db = upload(b);
  HashSpgemm plan;
  DeviceCsr<double> dc;
  EXPECT_FALSE(plan.has_symbolic());
  EXPECT_THROW(plan.numeric(da, db, dc), InputError) << "numeric() before symbolic()";
  plan.symbolic(da, db, dc);
  ASSERT_GT(dc.nnz, 0);
  const DeviceCsr<double> other_a = upload(Csr<double>::empty(a.rows, a.cols));  // same shape, other nnz
  const DeviceCsr<double> other_b = upload(Csr<double>::empty(b.rows, b.cols));
  DeviceCsr<double> other_c;
  EXPECT_THROW(plan.numeric(other_a, db, dc), InputError) << "A of another pattern";
  EXPECT_THROW(plan.numeric(da, other_b, dc), InputError) << "B of another pattern";
  EXPECT_THROW(plan.numeric(da, db, other_c), InputError) << "C not from this symbolic()";
  plan.numeric(da, db, dc);  // the plan is still good for its own operands
  expect_matches_reference(a, b, download(dc));
}

}  // namespace
}  // namespace tessera::cuda
