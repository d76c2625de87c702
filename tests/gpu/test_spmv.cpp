// GPU SpMV (vector, nnz-split, CSR-Stream, tiles, and the cuSPARSE baseline) against the host
// reference, in fp64 and fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>

#include "local/core/error.hpp"
#include "local/cuda/cusparse_spmv.hpp"
#include "local/cuda/spmv.hpp"
#include "local/formats/convert.hpp"
#include "local/io/matrix_market.hpp"
#include "local/reference/kernels.hpp"
#include "support/matrix_files.hpp"
#include "test_spmv_common.hpp"

namespace tessera {
namespace {

using namespace tessera::testing;

enum class Path { csr, tiles };

/// y = alpha*A*x + beta*y by `multiply(x, y)` on device vectors against ref::spmv, within the
/// forward error bound; beta == 0 poisons y with NaN first (it must not be read). Returns y.
template <class T, class Multiply>
std::vector<double> expect_spmv_matches_reference(const Csr<T>& a, double alpha, double beta, std::uint64_t seed,
                                                  Multiply&& multiply) {
  const std::vector<double> x = random_values<T>(a.cols, seed), y0 = random_values<T>(a.rows, seed + 7);
  std::vector<double> want = y0;
  ref::spmv(alpha, a, x, beta, want);

  cuda::DeviceBuffer<T> dx = to_device<T>(x), dy = to_device<T>(y0);
  if (beta == 0) dy.fill_bytes(0xff);
  multiply(static_cast<const T*>(dx.data()), dy.data());
  const std::vector<double> got = to_host(dy);
  const RowMagnitudes mag = row_magnitudes(a, x);
  BoundCheck check;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const double bound = (mag.length[i] + 3) * unit_roundoff<T>() *
                         (std::abs(alpha) * mag.abs_sum[i] + std::abs(beta * y0[i]));
    if (within(got[i], want[i], bound)) continue;  // the message only for failures: it costs more than the check
    check.expect(false, "row " + std::to_string(i) + ": got " + std::to_string(got[i]) + " want " +
                            std::to_string(want[i]));
  }
  EXPECT_EQ(check.failures, 0) << check.first;
  return got;
}

// Tessera's CSR (planned) or tile SpMV.
template <class T>
void check_spmv(const NamedMatrix& m, Path path, const cuda::SpmvOptions& options, double alpha, double beta,
                std::uint64_t seed) {
  SCOPED_TRACE(m.name + " alpha " + std::to_string(alpha) + " beta " + std::to_string(beta) + " algorithm " +
               cuda::to_string(options.algorithm) + " tpr " + std::to_string(options.threads_per_row) +
               " rows/group " + std::to_string(options.rows_per_group) + " chunk " +
               std::to_string(options.chunk_nnz) + " stream shape " + cuda::to_string(options.stream_shape) +
               (options.stream_offsets16 ? " offsets16" : "") + (path == Path::tiles ? " tiles" : " csr"));
  const Csr<T> a = convert_values<T>(m.a);
  expect_spmv_matches_reference(a, alpha, beta, seed, [&](const T* x, T* y) {
    if (path == Path::tiles) {
      const cuda::DeviceTileMatrix<T> da = cuda::upload(to_tiles(a));
      cuda::spmv_tiles(T(alpha), da, x, T(beta), y);
    } else {
      const cuda::DeviceCsr<T> da = cuda::upload(a);
      const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, options);
      cuda::spmv(plan, T(alpha), da, x, T(beta), y);
    }
  });
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

// The nnz split is bitwise repeatable: a row split over chunks is summed in a fixed order (the
// fix-up pass), not by atomics in arrival order. Five products through one plan on fresh outputs
// (NaN-poisoned, or y0 again for beta != 0) agree bit for bit, each within the reference's bound;
// on the automatic plan (which must choose the nnz split) and on 32-nonzero chunks, where the
// long rows cross hundreds of chunk boundaries.
template <class T>
void check_nnz_split_repeatable(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const NamedMatrix& m : nnz_split_matrices(seed)) {
    const Csr<T> a = convert_values<T>(m.a);
    const cuda::DeviceCsr<T> da = cuda::upload(a);
    for (std::int64_t chunk : {0, 32}) {
      SCOPED_TRACE(m.name + " chunk " + std::to_string(chunk));
      const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, {cuda::SpmvAlgorithm::automatic, 0, 0, chunk});
      ASSERT_EQ(plan.algorithm, cuda::SpmvAlgorithm::nnz_split);
      EXPECT_GT(plan.stats.max_row, 2 * plan.chunks.chunk_nnz);  // a row crosses two chunk boundaries or more
      for (const auto& s : {std::pair{1.0, 0.0}, std::pair{-0.75, 1.5}}) {
        const double alpha = s.first, beta = s.second;  // locals: a lambda may not capture structured bindings
        SCOPED_TRACE("alpha " + std::to_string(alpha) + " beta " + std::to_string(beta));
        expect_bitwise_repeatable(5, [&] {
          return expect_spmv_matches_reference(
              a, alpha, beta, seed, [&](const T* x, T* y) { cuda::spmv(plan, T(alpha), da, x, T(beta), y); });
        });
      }
    }
  }
}

TEST(GpuSpmv, Fp64NnzSplitIsBitwiseRepeatable) { check_nnz_split_repeatable<double>(fresh_seed()); }
TEST(GpuSpmv, Fp32NnzSplitIsBitwiseRepeatable) { check_nnz_split_repeatable<float>(fresh_seed()); }

// cuSPARSE's SpMV, the baseline tessera-spmv times and verifies, with each algorithm it offers,
// held to the bound Tessera's kernels meet (cuSPARSE also sums each row's products in some order).
template <class T>
void check_cusparse_spmv(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double scalings[][2] = {{1.0, 0.0}, {-0.75, 0.0}, {2.5, -0.5}, {0.0, 3.0}};
  for (const NamedMatrix& m : test_matrices(seed)) {
    const Csr<T> a = convert_values<T>(m.a);
    const cuda::DeviceCsr<T> da = cuda::upload(a);
    for (const std::string alg : {"default", "csr_alg2"})
      for (const auto& s : scalings) {
        SCOPED_TRACE(m.name + " cusparse " + alg + " alpha " + std::to_string(s[0]) + " beta " + std::to_string(s[1]));
        try {
          expect_spmv_matches_reference(a, s[0], s[1], seed, [&](const T* x, T* y) {
            cuda::CusparseSpmv<T> baseline(da, alg, x, y);
            EXPECT_EQ(baseline.name(), "cusparse-spmv-" + alg);
            baseline.run(T(s[0]), T(s[1]));
          });
        } catch (const DeviceError& e) {
          // cuSPARSE 12.6 (CUDA 13.0, H100) ran every case here, empty matrices included, so no refusal
          // is accepted; caught to fail inside this case's trace and go on with the others.
          ADD_FAILURE() << "cuSPARSE refused: " << e.what();
        }
      }
  }
}

TEST(GpuSpmv, Fp64CusparseBaselineMatchesReference) { check_cusparse_spmv<double>(fresh_seed()); }
TEST(GpuSpmv, Fp32CusparseBaselineMatchesReference) { check_cusparse_spmv<float>(fresh_seed()); }

TEST(GpuSpmv, CusparseBaselineRefusesUnknownAlgorithm) {
  const cuda::DeviceCsr<double> a = cuda::upload(gen::generate(gen::parse_spec("poisson3d:4")));
  cuda::DeviceBuffer<double> x(64), y(64);
  EXPECT_THROW(cuda::CusparseSpmv<double>(a, "csr_alg1", x.data(), y.data()), InputError);
}

// Every matrix of ../shared/matrices but the complex ones (the reader refuses them): the rows
// of real applications (power networks, structures, circuits, graphs; rectangular ones too),
// through the planned CSR kernel with y poisoned, and the tile kernel with beta != 0.
TEST(GpuSpmv, EveryRealMatrixOfTheManifest) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int seen = 0;
  for (const MatrixFile& f : manifest()) {
    if (f.field == "complex") continue;
    const NamedMatrix m{f.name, io::read_matrix_market(f.path)};
    check_spmv<double>(m, Path::csr, {}, 1.5, 0.0, seed);
    check_spmv<double>(m, Path::tiles, {}, -1.0, 0.5, seed);
    ++seen;
  }
  EXPECT_GE(seen, 140) << "matrices missing from " << matrix_dir();
}

/// Shapes that stress the stream blocks of a shape of `capacity`: many blocks, blocks of
/// thousands of (empty) rows reduced in several passes, rows long enough for 32 lanes each,
/// the longest admitted row and one past it.
std::vector<NamedMatrix> stream_matrices(std::uint64_t seed, int capacity) {
  const std::int64_t half = capacity / 2, n = std::max<std::int64_t>(3001, half + 1001);
  std::vector<NamedMatrix> m;
  m.push_back({"random 20011x20011, 60% empty rows", random_csr({20011, 20011, 0.0004, 0.6, 0.0, false, false}, seed)});
  m.push_back({"random 1203x1999, 500 per row", random_csr({1203, 1999, 0.25, 0.05, 0.0, false, false}, seed + 1)});
  m.push_back({"all empty 5003x5003", Csr<double>::empty(5003, 5003)});
  m.push_back({"poisson3d:31", gen::generate(gen::parse_spec("poisson3d:31"))});
  m.push_back({"poisson3d27:19", gen::generate(gen::parse_spec("poisson3d27:19"))});
  m.push_back({"elasticity3d:9", gen::generate(gen::parse_spec("elasticity3d:9"))});
  for (std::int64_t row : {half, half + 1})
    m.push_back({"row of " + std::to_string(row) + " among rows of 3",
                 long_row_among_rows_of_three(n, row, seed + 2 + (row - half))});
  return m;
}

cuda::SpmvOptions stream_options(cuda::StreamShape shape, bool offsets16 = false) {
  cuda::SpmvOptions options{cuda::SpmvAlgorithm::stream};
  options.stream_shape = shape;
  options.stream_offsets16 = offsets16;
  return options;
}

// Host check of the plan's blocks: they tile [0, rows) in order and no block holds more than
// the shape's capacity in nonzeros plus rows (what the kernel's shared array and int indices need).
void expect_stream_blocks_fit(const Csr<double>& a, const cuda::SpmvPlan& plan) {
  const int capacity = cuda::stream_capacity(plan.stream_shape);
  ASSERT_EQ(plan.stream_blocks.capacity, capacity);
  const std::vector<std::int64_t> start = plan.stream_blocks.start.download();
  ASSERT_EQ(static_cast<std::int64_t>(start.size()), a.rows == 0 ? 0 : plan.stream_blocks.count + 1);
  if (a.rows == 0) return;
  EXPECT_EQ(start.front(), 0);
  EXPECT_EQ(start.back(), a.rows);
  for (std::size_t b = 0; b + 1 < start.size(); ++b) {
    ASSERT_LE(start[b], start[b + 1]) << "block " << b;
    const std::int64_t rows = start[b + 1] - start[b], nnz = a.row_ptr[start[b + 1]] - a.row_ptr[start[b]];
    EXPECT_LE(rows + nnz, capacity) << "block " << b;
  }
  // The cut rule, by linear scan: block b starts at the first row r with row_ptr[r] + r >= b*W.
  const std::int64_t window = capacity - plan.stats.max_row;
  ASSERT_EQ(plan.stream_blocks.count, (a.nnz() + a.rows + window - 1) / window);
  std::int64_t r = 0;
  for (std::int64_t b = 0; b < plan.stream_blocks.count; ++b) {
    while (r < a.rows && a.row_ptr[r] + r < b * window) ++r;
    ASSERT_EQ(start[b], r) << "block " << b;
  }
  if (!plan.stream_blocks.offsets16()) return;
  // 16-bit offsets: every row's start relative to its block's first nonzero.
  const std::vector<std::uint16_t> offset = plan.stream_blocks.local_offset.download();
  ASSERT_EQ(static_cast<std::int64_t>(offset.size()), a.rows);
  for (std::size_t b = 0; b + 1 < start.size(); ++b)
    for (std::int64_t row = start[b]; row < start[b + 1]; ++row)
      ASSERT_EQ(offset[row], a.row_ptr[row] - a.row_ptr[start[b]]) << "row " << row << " of block " << b;
}

// Offsets are built only for a stream plan with at least one row.
bool fits_any_row(const cuda::SpmvPlan& plan, int capacity) {
  return plan.stats.rows > 0 && plan.stats.max_row <= capacity / 2;
}

template <class T>
void check_stream(cuda::StreamShape shape, bool offsets16, std::uint64_t seed) {
  SCOPED_TRACE(std::string("seed ") + std::to_string(seed) + " shape " + cuda::to_string(shape) +
               (offsets16 ? " offsets16" : ""));
  const int capacity = cuda::stream_capacity(shape);
  std::vector<NamedMatrix> all = test_matrices(seed), extra = stream_matrices(seed + 100, capacity);
  all.insert(all.end(), std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()));
  for (const NamedMatrix& m : all) {
    SCOPED_TRACE(m.name);
    const cuda::DeviceCsr<T> da = cuda::upload(convert_values<T>(m.a));
    const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, stream_options(shape, offsets16));
    EXPECT_EQ(plan.stream_shape, shape);
    EXPECT_EQ(plan.stream_blocks.offsets16(), offsets16 && fits_any_row(plan, capacity));
    const bool fits = plan.stats.max_row <= capacity / 2;
    EXPECT_EQ(plan.algorithm == cuda::SpmvAlgorithm::stream, fits) << "max row " << plan.stats.max_row;
    if (fits) expect_stream_blocks_fit(m.a, plan);
    else EXPECT_EQ(plan.stream_blocks.count, 0);
    const double scalings[][2] = {{1.0, 0.0}, {-0.75, 0.0}, {2.5, -0.5}, {0.0, 3.0}};
    for (const auto& s : scalings)
      check_spmv<T>(m, Path::csr, stream_options(shape, offsets16), s[0], s[1], seed);
  }
}

// Every block shape (default first), with int64 row bounds and with 16-bit block offsets,
// against the reference, each on a fresh seed.
using StreamVariant = std::tuple<cuda::StreamShape, bool>;
class GpuSpmvStream : public ::testing::TestWithParam<StreamVariant> {};

TEST_P(GpuSpmvStream, Fp64MatchesReferenceAndBlocksFit) {
  check_stream<double>(std::get<0>(GetParam()), std::get<1>(GetParam()), fresh_seed());
}
TEST_P(GpuSpmvStream, Fp32MatchesReferenceAndBlocksFit) {
  check_stream<float>(std::get<0>(GetParam()), std::get<1>(GetParam()), fresh_seed());
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuSpmvStream,
                         ::testing::Combine(::testing::ValuesIn(cuda::kStreamShapes), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<StreamVariant>& info) {
                           return std::string("s") + cuda::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_offsets16" : "_offsets64");
                         });

TEST(GpuSpmv, StreamShapesNamesAndDefault) {
  EXPECT_EQ(cuda::parse_stream_shape("auto"), cuda::StreamShape::automatic);
  for (cuda::StreamShape shape : cuda::kStreamShapes)
    EXPECT_EQ(cuda::parse_stream_shape(cuda::to_string(shape)), shape);
  EXPECT_THROW(cuda::parse_stream_shape("256x4"), InputError);
  EXPECT_EQ(cuda::stream_capacity(cuda::StreamShape::t256x8), 2048);
  EXPECT_EQ(cuda::stream_capacity(cuda::StreamShape::t256x16), 4096);
  EXPECT_EQ(cuda::stream_capacity(cuda::StreamShape::t512x8), 4096);
  EXPECT_EQ(cuda::stream_capacity(cuda::StreamShape::t512x16), 8192);
  EXPECT_EQ(cuda::stream_capacity(cuda::StreamShape::automatic), cuda::kStreamCapacity);
  // A small matrix takes the small shape (more blocks), a large one the default.
  const cuda::DeviceCsr<double> a = cuda::upload(gen::generate(gen::parse_spec("poisson3d:5")));
  const cuda::SpmvPlan p = cuda::make_spmv_plan(a, {cuda::SpmvAlgorithm::stream});
  EXPECT_EQ(p.stream_shape, cuda::kSmallMatrixStreamShape);
  EXPECT_EQ(p.stream_blocks.capacity, cuda::stream_capacity(cuda::kSmallMatrixStreamShape));
  cuda::RowStats large;
  large.rows = 1 << 20, large.nnz = std::int64_t(27) << 20;
  EXPECT_EQ(cuda::automatic_stream_shape(large, 132), cuda::kDefaultStreamShape);
  EXPECT_EQ(cuda::automatic_stream_shape(large, 132, 4), cuda::kFp32StreamShape);  // FP32 values
  large.nnz = 1 << 20;
  EXPECT_EQ(cuda::automatic_stream_shape(large, 132), cuda::kSmallMatrixStreamShape);  // 512 blocks < 4 x 132
  large.max_row = 1500;  // past half the small shape's capacity: the large shape still fits it
  EXPECT_EQ(cuda::automatic_stream_shape(large, 132), cuda::kDefaultStreamShape);
  EXPECT_THROW(cuda::make_spmv_plan(a, stream_options(static_cast<cuda::StreamShape>(17))), InputError);
}

// A row of 1025 fits the larger shapes (capacity >= 4096) and not 256x8 (capacity 2048).
TEST(GpuSpmv, LargerShapesAdmitLongerRows) {
  const cuda::DeviceCsr<double> a = cuda::upload(long_row_among_rows_of_three(3001, 1025, 9));
  EXPECT_NE(cuda::make_spmv_plan(a, stream_options(cuda::StreamShape::t256x8)).algorithm, cuda::SpmvAlgorithm::stream);
  for (cuda::StreamShape shape : {cuda::StreamShape::t256x16, cuda::StreamShape::t512x8, cuda::StreamShape::t512x16}) {
    const cuda::SpmvPlan p = cuda::make_spmv_plan(a, stream_options(shape));
    EXPECT_EQ(p.algorithm, cuda::SpmvAlgorithm::stream) << cuda::to_string(shape);
    EXPECT_TRUE(cuda::stream_fits(p.stats, shape));
  }
}

TEST(GpuSpmv, StreamRefusesARowLongerThanHalfABlock) {
  // A small matrix takes the small shape while its longest row fits half of it, the large shape
  // beyond, and no stream at all past half the large shape.
  const cuda::DeviceCsr<double> fits = cuda::upload(long_row_among_rows_of_three(3001, 1024, 5));
  const cuda::SpmvPlan small = cuda::make_spmv_plan(fits, {cuda::SpmvAlgorithm::stream});
  EXPECT_EQ(small.algorithm, cuda::SpmvAlgorithm::stream);
  EXPECT_EQ(small.stream_shape, cuda::kSmallMatrixStreamShape);
  const cuda::DeviceCsr<double> longer = cuda::upload(long_row_among_rows_of_three(3001, 1025, 5));
  const cuda::SpmvPlan large = cuda::make_spmv_plan(longer, {cuda::SpmvAlgorithm::stream});
  EXPECT_EQ(large.algorithm, cuda::SpmvAlgorithm::stream);
  EXPECT_EQ(large.stream_shape, cuda::kDefaultStreamShape);
  const std::int64_t half = cuda::stream_capacity(cuda::kDefaultStreamShape) / 2;
  const cuda::DeviceCsr<double> too_long = cuda::upload(long_row_among_rows_of_three(3001, half + 1, 5));
  const cuda::SpmvPlan p = cuda::make_spmv_plan(too_long, {cuda::SpmvAlgorithm::stream});
  EXPECT_NE(p.algorithm, cuda::SpmvAlgorithm::stream);
  EXPECT_EQ(p.algorithm, cuda::make_spmv_plan(too_long).algorithm);  // the automatic choice
  EXPECT_EQ(p.stats.max_row, half + 1);
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

  // Elasticity rows (3 dofs x up to 27 nodes) are short enough for CSR-Stream ...
  const cuda::DeviceCsr<double> elasticity = cuda::upload(gen::generate(gen::parse_spec("elasticity3d:6")));
  const cuda::SpmvPlan e = cuda::make_spmv_plan(elasticity);
  EXPECT_LE(e.stats.mean, cuda::kStreamMaxMeanRow);
  EXPECT_EQ(e.algorithm, cuda::SpmvAlgorithm::stream);
  // ... long even rows stay on the vector kernel.
  const cuda::DeviceCsr<double> wide = cuda::upload(gen::generate(gen::parse_spec("random:3000:200")));
  const cuda::SpmvPlan w = cuda::make_spmv_plan(wide);
  EXPECT_GT(w.stats.mean, cuda::kStreamMaxMeanRow);
  EXPECT_EQ(w.algorithm, cuda::SpmvAlgorithm::vector);

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

/// n rows of three entries, except row `empty` (none) and row `full` (six): every choice of the
/// two gives the same rows and nonzeros (3n) but another row_ptr.
Csr<double> three_per_row_but(std::int64_t n, std::int64_t empty, std::int64_t full, std::uint64_t seed) {
  std::vector<std::int64_t> r, c;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == empty) continue;
    for (std::int64_t j : {i, (i + 1) % n, (i + 5) % n}) r.push_back(i), c.push_back(j);
    if (i == full)
      for (std::int64_t j : {(i + 2) % n, (i + 3) % n, (i + 4) % n}) r.push_back(i), c.push_back(j);
  }
  return csr_from_triplets<double>(n, n, r, c, random_values<double>(static_cast<std::int64_t>(r.size()), seed));
}

// Rows and nnz alone do not identify a matrix: a stream plan of A on B would reduce B's rows
// over A's blocks. The plan remembers its row_ptr; a re-upload (new buffers) needs a new plan,
// a moved DeviceCsr (same buffers) keeps it.
TEST(GpuSpmv, RefusesPlanOfAnotherMatrixOfTheSameSize) {
  const std::int64_t n = 1001;
  const Csr<double> host_a = three_per_row_but(n, 0, 1, 3), host_b = three_per_row_but(n, n - 2, n - 1, 4);
  ASSERT_EQ(host_a.nnz(), host_b.nnz());
  ASSERT_NE(host_a.row_ptr, host_b.row_ptr);
  cuda::DeviceCsr<double> a = cuda::upload(host_a);
  const cuda::DeviceCsr<double> b = cuda::upload(host_b), a_again = cuda::upload(host_a);
  const std::vector<double> x = random_values<double>(n, 5);
  cuda::DeviceBuffer<double> dx = to_device<double>(x), dy(static_cast<std::size_t>(n));
  for (cuda::SpmvAlgorithm algorithm :
       {cuda::SpmvAlgorithm::stream, cuda::SpmvAlgorithm::vector, cuda::SpmvAlgorithm::nnz_split}) {
    SCOPED_TRACE(cuda::to_string(algorithm));
    const cuda::SpmvPlan plan = cuda::make_spmv_plan(a, {algorithm});
    EXPECT_EQ(plan.algorithm, algorithm);
    EXPECT_THROW(cuda::spmv(plan, 1.0, b, dx.data(), 0.0, dy.data()), InputError);
    EXPECT_THROW(cuda::spmv(plan, 1.0, a_again, dx.data(), 0.0, dy.data()), InputError);
    EXPECT_NO_THROW(cuda::spmv(plan, 1.0, a, dx.data(), 0.0, dy.data()));
  }
  const cuda::SpmvPlan plan = cuda::make_spmv_plan(a, {cuda::SpmvAlgorithm::stream});
  try {
    cuda::spmv(plan, 1.0, b, dx.data(), 0.0, dy.data());
    ADD_FAILURE() << "a plan of another matrix was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("spmv: the SpMV plan was made for another matrix"), std::string::npos)
        << e.what();
  }
  const cuda::DeviceCsr<double> moved = std::move(a);
  dy.fill_bytes(0xff);
  cuda::spmv(plan, 1.0, moved, dx.data(), 0.0, dy.data());
  std::vector<double> want(static_cast<std::size_t>(n));
  ref::spmv(1.0, host_a, x, 0.0, want);
  const std::vector<double> got = to_host(dy);
  const RowMagnitudes mag = row_magnitudes(host_a, x);
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_TRUE(within(got[i], want[i], (mag.length[i] + 3) * unit_roundoff<double>() * mag.abs_sum[i])) << "row " << i;
}

}  // namespace
}  // namespace tessera
