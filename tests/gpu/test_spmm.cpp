// GPU SpMM (balanced and nnz-split, row- and column-major, k = 1..128) against ref::spmm.
#include <gtest/gtest.h>

#include "local/core/error.hpp"
#include "local/cuda/spmm.hpp"
#include "local/formats/convert.hpp"
#include "local/reference/kernels.hpp"
#include "test_spmv_common.hpp"

namespace tessera {
namespace {

using namespace tessera::testing;

template <class T>
void check_spmm(const NamedMatrix& m, std::int64_t k, Layout layout, cuda::SpmmAlgorithm algorithm, double alpha,
                double beta, std::uint64_t seed) {
  SCOPED_TRACE(m.name + " k " + std::to_string(k) + (layout == Layout::row_major ? " row-major" : " col-major") +
               " algorithm " + cuda::to_string(algorithm) + " alpha " + std::to_string(alpha) + " beta " +
               std::to_string(beta));
  const Csr<T> a = convert_values<T>(m.a);
  DenseMatrix x(a.cols, k, layout), y(a.rows, k, layout);
  x.data = random_values<T>(a.cols * k, seed);
  y.data = random_values<T>(a.rows * k, seed + 5);
  const std::vector<double> y0 = y.data;
  ref::spmm(alpha, a, x, beta, y);

  const cuda::DeviceCsr<T> da = cuda::upload(a);
  const cuda::SpmmPlan plan = cuda::make_spmm_plan(da, k, algorithm);
  cuda::DeviceBuffer<T> dx = to_device<T>(x.data), dy = to_device<T>(y0);
  if (beta == 0) dy.fill_bytes(0xff);  // NaN: must never be read
  cuda::spmm(plan, T(alpha), da, dx.data(), T(beta), dy.data(), layout);
  const std::vector<double> got = to_host(dy);

  BoundCheck check;
  for (std::int64_t j = 0; j < k; ++j) {
    const RowMagnitudes mag = row_magnitudes(a, x.data, k, j, layout == Layout::row_major);
    for (std::int64_t i = 0; i < a.rows; ++i) {
      const std::int64_t at = y.index(i, j);
      const double bound = (mag.length[i] + 3) * unit_roundoff<T>() *
                           (std::abs(alpha) * mag.abs_sum[i] + std::abs(beta * y0[at]));
      check.expect(within(got[at], y.data[at], bound), "(" + std::to_string(i) + ", " + std::to_string(j) +
                                                           "): got " + std::to_string(got[at]) + " want " +
                                                           std::to_string(y.data[at]));
    }
  }
  EXPECT_EQ(check.failures, 0) << check.first;
}

template <class T>
void check_all(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<NamedMatrix> matrices = test_matrices(seed);
  for (const NamedMatrix& m : matrices)
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (std::int64_t k : {1, 2, 3, 8, 13, 32, 33, 64, 97, 128})
        for (auto alg : {cuda::SpmmAlgorithm::automatic, cuda::SpmmAlgorithm::balanced, cuda::SpmmAlgorithm::nnz_split}) {
          check_spmm<T>(m, k, layout, alg, 1.0, 0.0, seed);
          if (k == 3 || k == 64) check_spmm<T>(m, k, layout, alg, -0.5, 2.0, seed);
        }
}

TEST(GpuSpmm, Fp64MatchesReference) { check_all<double>(fresh_seed()); }
TEST(GpuSpmm, Fp32MatchesReference) { check_all<float>(fresh_seed()); }

TEST(GpuSpmm, PlanChecksKAndPicksLoadBalancing) {
  const cuda::DeviceCsr<double> a = cuda::upload(gen::generate(gen::parse_spec("poisson3d:4")));
  EXPECT_THROW(cuda::make_spmm_plan(a, 0), InputError);
  EXPECT_THROW(cuda::make_spmm_plan(a, 129), InputError);
  const cuda::DeviceCsr<double> skewed = cuda::upload(dense_row_among_empty(4000, 0, 9));
  EXPECT_EQ(cuda::make_spmm_plan(skewed, 8).algorithm, cuda::SpmmAlgorithm::nnz_split);
  const cuda::DeviceCsr<double> big = cuda::upload(gen::generate(gen::parse_spec("poisson3d:64")));
  EXPECT_EQ(cuda::make_spmm_plan(big, 8).algorithm, cuda::SpmmAlgorithm::balanced);
}

TEST(GpuSpmm, RefusesPlanOfAnotherMatrixOfTheSameSize) {
  const Csr<double> host = gen::generate(gen::parse_spec("poisson3d:6"));
  const cuda::DeviceCsr<double> a = cuda::upload(host), copy = cuda::upload(host);
  const cuda::SpmmPlan plan = cuda::make_spmm_plan(a, 4);
  cuda::DeviceBuffer<double> x(std::size_t(host.cols * 4)), y(std::size_t(host.rows * 4));
  x.fill_bytes(0), y.fill_bytes(0);
  EXPECT_NO_THROW(cuda::spmm(plan, 1.0, a, x.data(), 0.0, y.data(), Layout::row_major));
  EXPECT_THROW(cuda::spmm(plan, 1.0, copy, x.data(), 0.0, y.data(), Layout::row_major), InputError);
}

}  // namespace
}  // namespace tessera
