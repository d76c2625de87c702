// GPU SpMV (vector, nnz-split, tiles) against the host reference, in fp64 and fp32.
#include <gtest/gtest.h>

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

TEST(GpuSpmv, PlanPicksKernelFromRowStatistics) {
  const cuda::DeviceCsr<double> poisson = cuda::upload(gen::generate(gen::parse_spec("poisson3d:20")));
  const cuda::SpmvPlan p = cuda::make_spmv_plan(poisson);
  EXPECT_EQ(p.algorithm, cuda::SpmvAlgorithm::vector);
  EXPECT_EQ(p.threads_per_row, 8);  // mean row length is just under 7
  EXPECT_EQ(p.stats.max_row, 7);
  EXPECT_EQ(p.stats.rows, 8000);
  EXPECT_NEAR(p.stats.mean, (7.0 * 8000 - 6 * 400) / 8000, 1e-12);  // 2400 boundary faces drop a neighbour

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
  const cuda::DeviceCsr<double> b = cuda::upload(gen::generate(gen::parse_spec("poisson3d:5")));
  const cuda::SpmvPlan plan_b = cuda::make_spmv_plan(b);
  cuda::DeviceBuffer<double> x(64), y(64);
  EXPECT_THROW(cuda::spmv(plan_b, 1.0, a, x.data(), 0.0, y.data()), InputError);
}

}  // namespace
}  // namespace tessera
