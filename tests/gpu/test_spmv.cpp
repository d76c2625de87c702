// GPU SpMV (vector, nnz-split, CSR-Stream, tiles) against the host reference, in fp64 and fp32.
#include <gtest/gtest.h>

#include <iterator>
#include <utility>

#include "local/core/error.hpp"
#include "local/cuda/spmv.hpp"
#include "local/formats/convert.hpp"
#include "local/reference/kernels.hpp"
#include "test_spmv_common.hpp"

namespace tessera {
namespace {

using namespace tessera::testing;

enum class Path { csr, tiles };

// y = alpha*A*x + beta*y on the device against ref::spmv; beta == 0 poisons y with NaN.
template <class T>
void check_spmv(const NamedMatrix& m, Path path, const cuda::SpmvOptions& options, double alpha, double beta,
                std::uint64_t seed) {
  SCOPED_TRACE(m.name + " alpha " + std::to_string(alpha) + " beta " + std::to_string(beta) + " algorithm " +
               cuda::to_string(options.algorithm) + " tpr " + std::to_string(options.threads_per_row) + " rows/group " +
               std::to_string(options.rows_per_group) + " chunk " + std::to_string(options.chunk_nnz) +
               (path == Path::tiles ? " tiles" : " csr"));
  const Csr<T> a = convert_values<T>(m.a);
  const std::vector<double> x = random_values<T>(a.cols, seed), y0 = random_values<T>(a.rows, seed + 7);
  std::vector<double> want = y0;
  ref::spmv(alpha, a, x, beta, want);

  cuda::DeviceBuffer<T> dx = to_device<T>(x), dy = to_device<T>(y0);
  if (beta == 0) dy.fill_bytes(0xff);
  if (path == Path::tiles) {
    const cuda::DeviceTileMatrix<T> da = cuda::upload(to_tiles(a));
    cuda::spmv_tiles(T(alpha), da, dx.data(), T(beta), dy.data());
  } else {
    const cuda::DeviceCsr<T> da = cuda::upload(a);
    const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, options);
    cuda::spmv(plan, T(alpha), da, dx.data(), T(beta), dy.data());
  }
  const std::vector<double> got = to_host(dy);
  const RowMagnitudes mag = row_magnitudes(a, x);
  BoundCheck check;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const double bound = (mag.length[i] + 3) * unit_roundoff<T>() *
                         (std::abs(alpha) * mag.abs_sum[i] + std::abs(beta * y0[i]));
    check.expect(within(got[i], want[i], bound), "row " + std::to_string(i) + ": got " + std::to_string(got[i]) +
                                                     " want " + std::to_string(want[i]));
  }
  EXPECT_EQ(check.failures, 0) << check.first;
}

template <class T>
void check_all_paths(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double scalings[][2] = {{1.0, 0.0}, {-0.75, 0.0}, {1.0, 1.0}, {2.5, -0.5}, {0.0, 3.0}};
  for (const NamedMatrix& m : test_matrices(seed)) {
    for (const auto& s : scalings) {
      check_spmv<T>(m, Path::csr, {}, s[0], s[1], seed);
      check_spmv<T>(m, Path::csr, {cuda::SpmvAlgorithm::nnz_split, 0}, s[0], s[1], seed);
      check_spmv<T>(m, Path::csr, {cuda::SpmvAlgorithm::stream}, s[0], s[1], seed);
      check_spmv<T>(m, Path::tiles, {}, s[0], s[1], seed);
    }
    for (int tpr : {2, 4, 8, 16, 32})
      for (int rows_per_group : {1, 2, 4, 8}) {
        check_spmv<T>(m, Path::csr, {cuda::SpmvAlgorithm::vector, tpr, rows_per_group}, 1.5, 0.0, seed);
        check_spmv<T>(m, Path::csr, {cuda::SpmvAlgorithm::vector, tpr, rows_per_group}, -1.0, 0.5, seed);
      }
    for (std::int64_t chunk : {32, 96, 1024})  // small chunks: rows cross many chunk boundaries
      check_spmv<T>(m, Path::csr, {cuda::SpmvAlgorithm::nnz_split, 0, 0, chunk}, 0.5, -2.0, seed);
  }
}

TEST(GpuSpmv, Fp64AllPathsMatchReference) { check_all_paths<double>(fresh_seed()); }
TEST(GpuSpmv, Fp32AllPathsMatchReference) { check_all_paths<float>(fresh_seed()); }

/// n rows of three entries, and row n/2 with `long_row` entries (columns 0..long_row-1).
Csr<double> long_row_among_short(std::int64_t n, std::int64_t long_row, std::uint64_t seed) {
  std::vector<std::int64_t> r, c;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == n / 2) continue;
    for (std::int64_t j : {i, (i + 1) % n, (i + 5) % n}) r.push_back(i), c.push_back(j);
  }
  for (std::int64_t j = 0; j < long_row; ++j) r.push_back(n / 2), c.push_back(j);
  return csr_from_triplets<double>(n, n, r, c, random_values<double>(static_cast<std::int64_t>(r.size()), seed));
}

/// Shapes that stress the stream blocks: many blocks, blocks of thousands of (empty) rows
/// reduced in several passes, rows long enough for 32 lanes each, the longest admitted row.
std::vector<NamedMatrix> stream_matrices(std::uint64_t seed) {
  std::vector<NamedMatrix> m;
  m.push_back({"random 20011x20011, 60% empty rows", random_csr({20011, 20011, 0.0004, 0.6, 0.0, false, false}, seed)});
  m.push_back({"random 1203x1999, 500 per row", random_csr({1203, 1999, 0.25, 0.05, 0.0, false, false}, seed + 1)});
  m.push_back({"all empty 5003x5003", Csr<double>::empty(5003, 5003)});
  m.push_back({"poisson3d:31", gen::generate(gen::parse_spec("poisson3d:31"))});
  m.push_back({"poisson3d27:19", gen::generate(gen::parse_spec("poisson3d27:19"))});
  m.push_back({"elasticity3d:9", gen::generate(gen::parse_spec("elasticity3d:9"))});
  m.push_back({"row of 1024 among rows of 3", long_row_among_short(3001, cuda::kStreamCapacity / 2, seed + 2)});
  m.push_back({"row of 1025 among rows of 3", long_row_among_short(3001, cuda::kStreamCapacity / 2 + 1, seed + 3)});
  return m;
}

// Host check of the plan's blocks: they tile [0, rows) in order and no block holds more than
// kStreamCapacity nonzeros plus rows (what the kernel's shared array and int indices need).
void expect_stream_blocks_fit(const Csr<double>& a, const cuda::SpmvPlan& plan) {
  const std::vector<std::int64_t> start = plan.stream_blocks.start.download();
  ASSERT_EQ(static_cast<std::int64_t>(start.size()), a.rows == 0 ? 0 : plan.stream_blocks.count + 1);
  if (a.rows == 0) return;
  EXPECT_EQ(start.front(), 0);
  EXPECT_EQ(start.back(), a.rows);
  for (std::size_t b = 0; b + 1 < start.size(); ++b) {
    ASSERT_LE(start[b], start[b + 1]) << "block " << b;
    const std::int64_t rows = start[b + 1] - start[b], nnz = a.row_ptr[start[b + 1]] - a.row_ptr[start[b]];
    EXPECT_LE(rows + nnz, cuda::kStreamCapacity) << "block " << b;
  }
  // The cut rule, by linear scan: block b starts at the first row r with row_ptr[r] + r >= b*W.
  const std::int64_t window = cuda::kStreamCapacity - plan.stats.max_row;
  ASSERT_EQ(plan.stream_blocks.count, (a.nnz() + a.rows + window - 1) / window);
  std::int64_t r = 0;
  for (std::int64_t b = 0; b < plan.stream_blocks.count; ++b) {
    while (r < a.rows && a.row_ptr[r] + r < b * window) ++r;
    ASSERT_EQ(start[b], r) << "block " << b;
  }
}

template <class T>
void check_stream(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<NamedMatrix> all = test_matrices(seed), extra = stream_matrices(seed + 100);
  all.insert(all.end(), std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()));
  for (const NamedMatrix& m : all) {
    SCOPED_TRACE(m.name);
    const cuda::DeviceCsr<T> da = cuda::upload(convert_values<T>(m.a));
    const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, {cuda::SpmvAlgorithm::stream});
    const bool fits = plan.stats.max_row <= cuda::kStreamCapacity / 2;
    EXPECT_EQ(plan.algorithm == cuda::SpmvAlgorithm::stream, fits) << "max row " << plan.stats.max_row;
    if (fits) expect_stream_blocks_fit(m.a, plan);
    else EXPECT_EQ(plan.stream_blocks.count, 0);
    const double scalings[][2] = {{1.0, 0.0}, {-0.75, 0.0}, {2.5, -0.5}, {0.0, 3.0}};
    for (const auto& s : scalings) check_spmv<T>(m, Path::csr, {cuda::SpmvAlgorithm::stream}, s[0], s[1], seed);
  }
}

TEST(GpuSpmv, Fp64StreamMatchesReferenceAndBlocksFit) { check_stream<double>(fresh_seed()); }
TEST(GpuSpmv, Fp32StreamMatchesReferenceAndBlocksFit) { check_stream<float>(fresh_seed()); }

TEST(GpuSpmv, StreamRefusesARowLongerThanHalfABlock) {
  const cuda::DeviceCsr<double> fits = cuda::upload(long_row_among_short(3001, 1024, 5));
  EXPECT_EQ(cuda::make_spmv_plan(fits, {cuda::SpmvAlgorithm::stream}).algorithm, cuda::SpmvAlgorithm::stream);
  const cuda::DeviceCsr<double> too_long = cuda::upload(long_row_among_short(3001, 1025, 5));
  const cuda::SpmvPlan p = cuda::make_spmv_plan(too_long, {cuda::SpmvAlgorithm::stream});
  EXPECT_EQ(p.algorithm, cuda::make_spmv_plan(too_long).algorithm);  // the automatic choice
  EXPECT_EQ(p.stats.max_row, 1025);
}

TEST(GpuSpmv, PlanPicksKernelFromRowStatistics) {
  const cuda::DeviceCsr<double> poisson = cuda::upload(gen::generate(gen::parse_spec("poisson3d:20")));
  const cuda::SpmvPlan p = cuda::make_spmv_plan(poisson);
  EXPECT_EQ(p.algorithm, cuda::SpmvAlgorithm::stream);  // short, even rows
  EXPECT_GT(p.stream_blocks.count, 0);
  EXPECT_EQ(p.threads_per_row, 8);  // mean row length is just under 7 (the vector fallback's choice)
  EXPECT_EQ(p.stats.max_row, 7);
  EXPECT_EQ(p.stats.rows, 8000);
  EXPECT_NEAR(p.stats.mean, (7.0 * 8000 - 6 * 400) / 8000, 1e-12);  // 2400 boundary faces drop a neighbour

  // Long even rows (elasticity, 3 dofs x 27 nodes) stay on the vector kernel.
  const cuda::DeviceCsr<double> elasticity = cuda::upload(gen::generate(gen::parse_spec("elasticity3d:6")));
  const cuda::SpmvPlan e = cuda::make_spmv_plan(elasticity);
  EXPECT_GT(e.stats.mean, cuda::kStreamMaxMeanRow);
  EXPECT_EQ(e.algorithm, cuda::SpmvAlgorithm::vector);

  const cuda::DeviceCsr<double> skewed = cuda::upload(dense_row_among_empty(5000, 17, 3));
  const cuda::SpmvPlan s = cuda::make_spmv_plan(skewed);
  EXPECT_EQ(s.algorithm, cuda::SpmvAlgorithm::nnz_split);
  EXPECT_EQ(s.stats.max_row, 5000);
  EXPECT_EQ(s.stats.empty_rows, 4999);
  EXPECT_NEAR(s.stats.cv, std::sqrt(4999.0), 1e-9);  // mean 1, variance 5000 - 1
}

TEST(GpuSpmv, RejectsBadThreadsPerRowAndForeignPlan) {
  const cuda::DeviceCsr<double> a = cuda::upload(gen::generate(gen::parse_spec("poisson3d:4")));
  EXPECT_THROW(cuda::make_spmv_plan(a, {cuda::SpmvAlgorithm::vector, 3}), InputError);
  EXPECT_THROW(cuda::make_spmv_plan(a, {cuda::SpmvAlgorithm::vector, 64}), InputError);
  EXPECT_THROW(cuda::make_spmv_plan(a, {cuda::SpmvAlgorithm::vector, 8, 3}), InputError);
  EXPECT_THROW(cuda::make_spmv_plan(a, {cuda::SpmvAlgorithm::nnz_split, 0, 0, 33}), InputError);
  EXPECT_THROW(cuda::parse_spmv_algorithm("csr-stream"), InputError);
  const std::pair<const char*, cuda::SpmvAlgorithm> names[] = {{"auto", cuda::SpmvAlgorithm::automatic},
                                                               {"vector", cuda::SpmvAlgorithm::vector},
                                                               {"nnz-split", cuda::SpmvAlgorithm::nnz_split},
                                                               {"stream", cuda::SpmvAlgorithm::stream}};
  for (const auto& [name, alg] : names) EXPECT_EQ(cuda::parse_spmv_algorithm(name), alg) << name;
  const cuda::DeviceCsr<double> b = cuda::upload(gen::generate(gen::parse_spec("poisson3d:5")));
  const cuda::SpmvPlan plan_b = cuda::make_spmv_plan(b);
  cuda::DeviceBuffer<double> x(64), y(64);
  EXPECT_THROW(cuda::spmv(plan_b, 1.0, a, x.data(), 0.0, y.data()), InputError);
}

}  // namespace
}  // namespace tessera
