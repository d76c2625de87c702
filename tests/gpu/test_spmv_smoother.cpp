// Fused residual and damped-Jacobi kernels against their host formulas, through the vector
// kernel (every rows-per-group) and through CSR-Stream.
#include <gtest/gtest.h>

#include "local/core/error.hpp"
#include "local/cuda/fused_smoother.hpp"
#include "local/formats/convert.hpp"
#include "local/reference/kernels.hpp"
#include "test_spmv_common.hpp"

namespace tessera {
namespace {

using namespace tessera::testing;

/// Random matrix plus a dominant diagonal (every diagonal entry stored and nonzero).
Csr<double> with_diagonal(const Csr<double>& a, std::uint64_t seed) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) r.push_back(i), c.push_back(a.col_idx[p]), v.push_back(a.values[p]);
  const std::vector<double> d = random_values<double>(a.rows, seed);
  for (std::int64_t i = 0; i < a.rows; ++i) r.push_back(i), c.push_back(i), v.push_back(4.0 + d[i]);
  return csr_from_triplets<double>(a.rows, a.cols, r, c, v);
}

/// n rows of two off-diagonal entries, row n/2 with entries in columns 0..long_row-1 except
/// its diagonal (with_diagonal adds that): too long for CSR-Stream, which falls back.
Csr<double> long_row_among_short(std::int64_t n, std::int64_t long_row, std::uint64_t seed) {
  std::vector<std::int64_t> r, c;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == n / 2) continue;
    for (std::int64_t j : {(i + 1) % n, (i + 5) % n}) r.push_back(i), c.push_back(j);
  }
  for (std::int64_t j = 0; j < long_row; ++j)
    if (j != n / 2) r.push_back(n / 2), c.push_back(j);
  return csr_from_triplets<double>(n, n, r, c, random_values<double>(static_cast<std::int64_t>(r.size()), seed));
}

std::vector<NamedMatrix> square_matrices(std::uint64_t seed) {
  const std::string power_law_spec = "rmat:11:8:seed=" + std::to_string(seed + 6);
  return {{"random 501 + diagonal", with_diagonal(random_csr({501, 501, 0.02, 0.1, 0.0, false, false}, seed), seed + 1)},
          {"poisson3d:9", gen::generate(gen::parse_spec("poisson3d:9"))},
          {"elasticity3d:4", gen::generate(gen::parse_spec("elasticity3d:4"))},
          {"poisson3d27:12", gen::generate(gen::parse_spec("poisson3d27:12"))},
          {"random 3001 + diagonal, one row of 1500", with_diagonal(long_row_among_short(3001, 1500, seed + 4), seed + 5)},
          // Power law: hub rows of hundreds of entries among rows that hold their diagonal only; R-MAT's
          // positive self-loops are summed into the diagonal, which stays >= 3.
          {power_law_spec + " + diagonal", with_diagonal(gen::generate(gen::parse_spec(power_law_spec)), seed + 7)},
          {"1x1", csr_from_triplets<double>(1, 1, {0}, {0}, {-2.5})},
          {"0x0", Csr<double>::empty(0, 0)}};
}

template <class T>
void check_smoothers(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double omega = 2.0 / 3.0;
  for (const NamedMatrix& m : square_matrices(seed)) {
    SCOPED_TRACE(m.name);
    const Csr<T> a = convert_values<T>(m.a);
    const std::vector<double> x = random_values<T>(a.rows, seed + 2), b = random_values<T>(a.rows, seed + 3);
    std::vector<double> ax(static_cast<std::size_t>(a.rows));
    ref::spmv(1.0, a, x, 0.0, ax);
    const cuda::DeviceCsr<T> da = cuda::upload(a);
    std::vector<cuda::SpmvOptions> plans = {{cuda::SpmvAlgorithm::vector, 0, 1}, {cuda::SpmvAlgorithm::vector, 0, 2},
                                            {cuda::SpmvAlgorithm::vector, 0, 4}, {cuda::SpmvAlgorithm::vector, 0, 8}};
    for (cuda::StreamShape shape : cuda::kStreamShapes)  // every CSR-Stream block shape, both row-bound widths
      for (bool offsets16 : {false, true}) {
        plans.push_back({cuda::SpmvAlgorithm::stream});
        plans.back().stream_shape = shape;
        plans.back().stream_offsets16 = offsets16;
      }
    for (const cuda::SpmvOptions& options : plans) {
      SCOPED_TRACE(std::string(cuda::to_string(options.algorithm)) + " rows per group " +
                   std::to_string(options.rows_per_group) + " stream shape " + cuda::to_string(options.stream_shape) +
                   (options.stream_offsets16 ? " offsets16" : ""));
      const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, options);
      if (options.algorithm == cuda::SpmvAlgorithm::stream) {  // falls back only for a row past half the capacity
        EXPECT_EQ(plan.stream_shape, options.stream_shape);
        EXPECT_EQ(plan.algorithm == cuda::SpmvAlgorithm::stream,
                  plan.stats.max_row <= cuda::stream_capacity(options.stream_shape) / 2);
      }
      cuda::DeviceBuffer<T> dx = to_device<T>(x), db = to_device<T>(b), out(static_cast<std::size_t>(a.rows));
      const cuda::DeviceBuffer<T> dinv = cuda::diagonal_inverse(da);

      out.fill_bytes(0xff);
      cuda::residual(plan, da, dx.data(), db.data(), out.data());
      const std::vector<double> r = to_host(out);
      out.fill_bytes(0xff);
      cuda::jacobi_sweep(plan, da, dinv.data(), T(omega), dx.data(), db.data(), out.data());
      const std::vector<double> x_new = to_host(out), d_inv = to_host(dinv);

      const RowMagnitudes mag = row_magnitudes(a, x);
      const double u = unit_roundoff<T>();
      BoundCheck check;
      for (std::int64_t i = 0; i < a.rows; ++i) {
        double diag = 0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
          if (a.col_idx[p] == i) diag = static_cast<double>(a.values[p]);
        const double res_bound = (mag.length[i] + 3) * u * (mag.abs_sum[i] + std::abs(b[i]));
        check.expect(within(r[i], b[i] - ax[i], res_bound), "residual row " + std::to_string(i));
        check.expect(within(d_inv[i], 1.0 / diag, 2 * u / std::abs(diag)), "diagonal inverse row " + std::to_string(i));
        const double want = x[i] + omega / diag * (b[i] - ax[i]);
        const double jac_bound = (mag.length[i] + 6) * u * (std::abs(x[i]) + omega / std::abs(diag) * (mag.abs_sum[i] + std::abs(b[i])));
        check.expect(within(x_new[i], want, jac_bound), "jacobi row " + std::to_string(i) + " got " +
                                                            std::to_string(x_new[i]) + " want " + std::to_string(want));
      }
      EXPECT_EQ(check.failures, 0) << check.first;
    }
  }
}

TEST(GpuSmoother, Fp64ResidualAndJacobiMatchHostFormulas) { check_smoothers<double>(fresh_seed()); }
TEST(GpuSmoother, Fp32ResidualAndJacobiMatchHostFormulas) { check_smoothers<float>(fresh_seed()); }

TEST(GpuSmoother, RejectsMissingDiagonalAliasingAndRectangular) {
  const cuda::DeviceCsr<double> no_diag = cuda::upload(csr_from_triplets<double>(3, 3, {0, 1, 2}, {0, 2, 2}, {1, 1, 1}));
  EXPECT_THROW(cuda::diagonal_inverse(no_diag), InputError);  // row 1 has no diagonal
  const cuda::DeviceCsr<double> zero_diag = cuda::upload(csr_from_triplets<double>(2, 2, {0, 1}, {0, 1}, {1, 0}));
  EXPECT_THROW(cuda::diagonal_inverse(zero_diag), InputError);
  const cuda::DeviceCsr<double> a = cuda::upload(gen::generate(gen::parse_spec("poisson3d:3")));
  const cuda::SpmvPlan plan = cuda::make_spmv_plan(a);
  const cuda::DeviceBuffer<double> dinv = cuda::diagonal_inverse(a);
  cuda::DeviceBuffer<double> x(27), b(27);
  EXPECT_THROW(cuda::jacobi_sweep(plan, a, dinv.data(), 0.5, x.data(), b.data(), x.data()), InputError);
  EXPECT_THROW(cuda::residual(plan, a, x.data(), b.data(), x.data()), InputError);
  const cuda::DeviceCsr<double> rect = cuda::upload(Csr<double>::empty(2, 3));
  EXPECT_THROW(cuda::diagonal_inverse(rect), InputError);
}

// The plan of another matrix with the same rows and nonzeros (here: the same pattern uploaded
// again, so other buffers) is refused; the matrix it was made from is accepted.
TEST(GpuSmoother, RefusesPlanOfAnotherMatrixOfTheSameSize) {
  const Csr<double> host = gen::generate(gen::parse_spec("poisson3d:7"));
  const cuda::DeviceCsr<double> a = cuda::upload(host), a_again = cuda::upload(host);
  const cuda::DeviceBuffer<double> dinv = cuda::diagonal_inverse(a);
  cuda::DeviceBuffer<double> x(343), b(343), out(343);
  x.fill_bytes(0);
  b.fill_bytes(0);
  for (cuda::SpmvAlgorithm algorithm : {cuda::SpmvAlgorithm::stream, cuda::SpmvAlgorithm::vector}) {
    SCOPED_TRACE(cuda::to_string(algorithm));
    const cuda::SpmvPlan plan = cuda::make_spmv_plan(a, {algorithm});
    EXPECT_THROW(cuda::residual(plan, a_again, x.data(), b.data(), out.data()), InputError);
    EXPECT_THROW(cuda::jacobi_sweep(plan, a_again, dinv.data(), 0.5, x.data(), b.data(), out.data()), InputError);
    EXPECT_NO_THROW(cuda::residual(plan, a, x.data(), b.data(), out.data()));
    EXPECT_NO_THROW(cuda::jacobi_sweep(plan, a, dinv.data(), 0.5, x.data(), b.data(), out.data()));
  }
}

}  // namespace
}  // namespace tessera
