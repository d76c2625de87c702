// The device coarse solver (amg/cuda/device_coarse_solver.hpp) against the host DenseCoarseSolver
// on the same operators: SPD (coarse Poisson / elasticity Galerkin operators, random SPD of odd
// sizes, a real SPD matrix, either side of the order where the explicit inverse's own kernels stop)
// through cuSOLVER Cholesky; symmetric indefinite and nonsymmetric nonsingular ones through
// cuSOLVER LU; well-conditioned ones applied as their explicit inverse, ill-conditioned ones
// (Hilbert, bcsstk06) through the factor; singular ones through the host fallback (bitwise the
// host's answer); 1x1, 0x0, re-factoring, a user stream, bad input; and the device hierarchy's
// coarsest level solved on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "amg/coarse_solver.hpp"
#include "amg/cuda/dense_inverse.hpp"
#include "amg/cuda/device_coarse_solver.hpp"
#include "amg/cuda/device_hierarchy.hpp"
#include "amg/hierarchy.hpp"
#include "local/core/error.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "support/matrix_files.hpp"
#include "support/random_matrix.hpp"
#include "support/generated_near_null_space.hpp"

namespace tessera::amg {
namespace {

using gpu::DeviceCoarseSolver;

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (const double x : v) m = std::max(m, std::abs(x));
  return m;
}

std::vector<double> multiply(const Csr<double>& a, const std::vector<double>& x) {
  std::vector<double> y(std::size_t(a.rows), 0.0);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) y[i] += a.values[p] * x[a.col_idx[p]];
  return y;
}

std::vector<double> device_solve(const DeviceCoarseSolver& s, const std::vector<double>& b, cudaStream_t stream = nullptr) {
  tessera::cuda::DeviceBuffer<double> db, dx(b.size(), stream);
  db.upload(b, stream);
  dx.fill_bytes(0xff, stream);  // NaN: an entry left unwritten shows
  s.solve(db.data(), dx.data(), stream);
  return dx.download(stream);
}

/// How a test expects the device to apply its factorisation.
enum class Applied { inverse, factor, either };

/// The device answer equals the host's to `rtol` and has a small backward error: that of a
/// backward-stable solve through the factor, or the residual bound of the explicit inverse
/// (device_coarse_solver.hpp) when the solver kept it.
void expect_matches_host(const Csr<double>& a, const std::string& factor, Applied applied, double rtol) {
  SCOPED_TRACE(std::to_string(a.rows) + " rows, expecting " + factor);
  DenseCoarseSolver host;
  host.factor(a);
  DeviceCoarseSolver device;
  device.factor(tessera::cuda::upload(a));
  const bool inverse = device.applies_inverse();
  EXPECT_EQ(device.method(), factor + (inverse ? DeviceCoarseSolver::kAppliedAsInverse : ""));
  if (applied != Applied::either)
    EXPECT_EQ(inverse, applied == Applied::inverse) << "||I - AX|| = " << device.inverse_residual();
  EXPECT_EQ(device.rows(), a.rows);
  EXPECT_TRUE(device.on_device());
  EXPECT_GE(device.device_bytes(), std::int64_t(a.rows * a.rows * sizeof(double)));
  std::vector<double> b(std::size_t(a.rows)), x_host;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(1.0 + double(i));
  host.solve(b, x_host);
  const std::vector<double> x = device_solve(device, b);
  ASSERT_EQ(x.size(), x_host.size());
  const double scale = max_abs(x_host);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_LE(std::abs(x[i] - x_host[i]), rtol * scale) << "entry " << i;
  const std::vector<double> ax = multiply(a, x);
  double residual = 0, a_norm = 0;
  for (std::size_t i = 0; i < b.size(); ++i) residual = std::max(residual, std::abs(b[i] - ax[i]));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double row = 0;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) row += std::abs(a.values[p]);
    a_norm = std::max(a_norm, row);
  }
  // Through X the residual is (I - AX) b plus the product's rounding: the measured ||I - AX||
  // bounds it, and that is within the tolerance.
  const double stable = 1e-13 * double(a.rows) * (a_norm * max_abs(x) + max_abs(b));
  if (inverse) {
    EXPECT_LE(device.inverse_residual(), DeviceCoarseSolver::kInverseTolerance);
    EXPECT_LE(residual, stable + device.inverse_residual() * max_abs(b)) << "residual through the explicit inverse";
  } else {
    EXPECT_LE(residual, stable) << "backward error";
  }
}

/// Random sparse matrix with a diagonal of |row sum| + 1 (sign from `diagonal_sign`):
/// nonsingular, well conditioned; symmetric unless `symmetric` is false.
Csr<double> random_dominant(std::int64_t n, std::uint64_t seed, bool symmetric, double (*diagonal_sign)(std::int64_t)) {
  testing::RandomSpec spec;
  spec.rows = spec.cols = n;
  spec.density = std::min(1.0, 6.0 / double(n));
  const Csr<double> r = testing::random_csr(spec, seed);
  std::vector<double> dense(std::size_t(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = r.row_ptr[i]; p < r.row_ptr[i + 1]; ++p) {
      dense[i * n + r.col_idx[p]] += r.values[p];
      if (symmetric) dense[r.col_idx[p] * n + i] += r.values[p];
    }
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  for (std::int64_t i = 0; i < n; ++i) {
    double off = 0;
    for (std::int64_t j = 0; j < n; ++j)
      if (j != i && dense[i * n + j] != 0) off += std::abs(dense[i * n + j]), rows.push_back(i), cols.push_back(j),
                                           vals.push_back(dense[i * n + j]);
    rows.push_back(i), cols.push_back(i), vals.push_back(diagonal_sign(i) * (off + 1.0));
  }
  return csr_from_triplets<double>(n, n, rows, cols, vals);
}

double positive(std::int64_t) { return 1.0; }
double alternating(std::int64_t i) { return i % 2 ? -1.0 : 1.0; }
double negative_first(std::int64_t i) { return i == 0 ? -1.0 : 1.0; }

Csr<double> coarsest_operator(const std::string& spec_text, std::int64_t coarse_size) {
  const gen::ProblemSpec spec = gen::parse_spec(spec_text);
  const Csr<double> a = gen::generate(spec);
  const NearNullSpace nns = tessera::testing::generated_near_null_space(spec);
  AmgOptions o;
  o.coarse_size = coarse_size;
  return setup(a, nns, o).coarsest().a;
}

TEST(DeviceCoarseSolver, CholeskyOnGalerkinOperators) {
  // Coarsest operators of odd sizes, block size 3 with 6 rigid-body modes included.
  // Poisson's coarse operators are well conditioned (inverse kept); elasticity's condition
  // depends on the aggregates, so either path is right there, each with its own bound.
  for (const auto& [spec, coarse, applied] : {std::tuple{"poisson3d:15", 40, Applied::inverse},
                                              {"poisson3d27:17", 60, Applied::inverse},
                                              {"elasticity3d:6", 40, Applied::either}}) {
    SCOPED_TRACE(spec);
    const Csr<double> c = coarsest_operator(spec, coarse);
    ASSERT_GT(c.rows, 1);
    expect_matches_host(c, "cholesky (cuSOLVER)", applied, 1e-9);
  }
  expect_matches_host(gen::generate(gen::parse_spec("poisson3d27:7")), "cholesky (cuSOLVER)", Applied::inverse, 1e-10);
}

TEST(DeviceCoarseSolver, CholeskyOnRandomSpdAndRealMatrix) {
  for (const std::int64_t n : {2, 7, 37, 130, 301}) {
    const std::uint64_t seed = testing::fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_matches_host(random_dominant(n, seed, true, positive), "cholesky (cuSOLVER)", Applied::inverse, 1e-11);
  }
  for (const testing::MatrixFile& f : testing::manifest())
    if (f.name == "bcsstk06") {  // ill conditioned: the residual is the real check, on either path
      SCOPED_TRACE(f.name);
      expect_matches_host(io::read_matrix_market(f.path), "cholesky (cuSOLVER)", Applied::either, 1e-3);
    }
}

/// Either side of the order where the inverse stops being formed by Tessera's own kernels
/// (dense_inverse.hpp) and is formed by cuSOLVER's solves on the identity instead: the same
/// answer and the same bound on either path.
TEST(DeviceCoarseSolver, CholeskyInverseEitherSideOfTheOwnKernelsLimit) {
  for (const std::int64_t n : {gpu::kOwnInverseMaxRows, gpu::kOwnInverseMaxRows + 1}) {
    const std::uint64_t seed = testing::fresh_seed();
    SCOPED_TRACE("n " + std::to_string(n) + ", seed " + std::to_string(seed));
    expect_matches_host(random_dominant(n, seed, true, positive), "cholesky (cuSOLVER)", Applied::inverse, 1e-11);
  }
}

/// CoarseForm::factor never forms the inverse, however well conditioned the operator.
TEST(DeviceCoarseSolver, FactorFormKeepsTheFactor) {
  const Csr<double> a = random_dominant(37, testing::fresh_seed(), true, positive);
  DeviceCoarseSolver device;
  device.factor(tessera::cuda::upload(a), nullptr, gpu::CoarseForm::factor);
  EXPECT_EQ(device.method(), "cholesky (cuSOLVER)");
  EXPECT_FALSE(device.applies_inverse());
  EXPECT_TRUE(std::isnan(device.inverse_residual()));
  std::vector<double> x_star(37);
  for (std::size_t i = 0; i < x_star.size(); ++i) x_star[i] = std::cos(double(i));
  const std::vector<double> x = device_solve(device, multiply(a, x_star));
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], x_star[i], 1e-12) << "entry " << i;
}

/// The Hilbert matrix of order n (condition about 1.6e13 at n = 10): Cholesky gets through.
Csr<double> hilbert(std::int64_t n) {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> values;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      rows.push_back(i), cols.push_back(j), values.push_back(1.0 / double(i + j + 1));
  return csr_from_triplets<double>(n, n, rows, cols, values);
}

/// Its inverse fails the residual test, so the triangular solves stay; the same solver object
/// then keeps the inverse of a well-conditioned matrix again, and drops it for Hilbert again.
TEST(DeviceCoarseSolver, IllConditionedKeepsTheFactor) {
  const Csr<double> h = hilbert(10);
  const Csr<double> easy = random_dominant(10, testing::fresh_seed(), true, positive);
  DeviceCoarseSolver device;
  for (const bool ill : {true, false, true}) {
    SCOPED_TRACE(ill ? "Hilbert" : "diagonally dominant");
    const Csr<double>& a = ill ? h : easy;
    device.factor(tessera::cuda::upload(a));
    EXPECT_EQ(device.applies_inverse(), !ill) << "||I - AX|| = " << device.inverse_residual();
    if (ill) {
      EXPECT_EQ(device.method(), "cholesky (cuSOLVER)");
      EXPECT_GT(device.inverse_residual(), DeviceCoarseSolver::kInverseTolerance);
    }
    // Through the factor the residual stays at rounding level although the solution cannot be
    // accurate for Hilbert: b = A * ones.
    const std::vector<double> b = multiply(a, std::vector<double>(10, 1.0));
    const std::vector<double> ax = multiply(a, device_solve(device, b));
    for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(ax[i], b[i], 1e-12 * max_abs(b)) << "row " << i;
  }
}

TEST(DeviceCoarseSolver, LuOnIndefiniteAndNonsymmetric) {
  for (const std::int64_t n : {3, 29, 131}) {
    const std::uint64_t seed = testing::fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_matches_host(random_dominant(n, seed, true, alternating), "lu (cuSOLVER)", Applied::inverse, 1e-11);
    // Nonsymmetric: LU reads the upper triangle too, so a transposed scatter would show here
    // (in the factor and in the inverse's residual test alike).
    expect_matches_host(random_dominant(n, seed + 1, false, negative_first), "lu (cuSOLVER)", Applied::inverse, 1e-11);
    // Nonsymmetric with a positive dominant diagonal: Cholesky of the lower triangle would
    // succeed and factor another matrix; the symmetry test sends it to LU.
    expect_matches_host(random_dominant(n, seed + 2, false, positive), "lu (cuSOLVER)", Applied::inverse, 1e-11);
  }
}

/// A symmetric tridiagonal matrix but for one entry far from the diagonal: a(n-1, 0), in the
/// last (partial) row of the symmetry test's 32 x 32 tiles and their first column, or its mirror
/// a(0, n-1). The test must find it wherever it lies and send the matrix to LU, and must not
/// see asymmetry where there is none (the matrix without it goes to Cholesky).
TEST(DeviceCoarseSolver, OneAsymmetricEntryAnywhereSendsItToLu) {
  for (const std::int64_t n : {33, 131, 1000}) {
    for (const bool below : {true, false}) {
      SCOPED_TRACE("n " + std::to_string(n) + (below ? ", a(n-1, 0)" : ", a(0, n-1)"));
      std::vector<std::int64_t> rows, cols;
      std::vector<double> vals;
      for (std::int64_t i = 0; i < n; ++i) {
        rows.push_back(i), cols.push_back(i), vals.push_back(4.0);
        if (i + 1 < n) rows.insert(rows.end(), {i, i + 1}), cols.insert(cols.end(), {i + 1, i}),
                           vals.insert(vals.end(), {-1.0, -1.0});
      }
      expect_matches_host(csr_from_triplets<double>(n, n, rows, cols, vals), "cholesky (cuSOLVER)", Applied::inverse,
                          1e-12);
      rows.push_back(below ? n - 1 : 0), cols.push_back(below ? 0 : n - 1), vals.push_back(0.3);
      expect_matches_host(csr_from_triplets<double>(n, n, rows, cols, vals), "lu (cuSOLVER)", Applied::inverse, 1e-12);
    }
  }
}

/// Singular matrices: Cholesky and LU both fail, the host factors; answers are the host's, bitwise.
void expect_host_fallback(const Csr<double>& a, int dropped) {
  DenseCoarseSolver host;
  host.factor(a);
  DeviceCoarseSolver device;
  device.factor(tessera::cuda::upload(a));
  EXPECT_FALSE(device.on_device());
  EXPECT_NE(device.method().find("host fallback"), std::string::npos) << device.method();
  EXPECT_EQ(device.method().rfind(host.method(), 0), 0u) << device.method();
  EXPECT_EQ(device.dropped_pivots(), dropped);
  EXPECT_EQ(host.dropped_pivots(), dropped);
  std::vector<double> y(std::size_t(a.rows)), x_host;
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = double(i * i % 5);
  const std::vector<double> b = multiply(a, y);  // consistent right-hand side
  host.solve(b, x_host);
  EXPECT_EQ(device_solve(device, b), x_host);
  const std::vector<double> ax = multiply(a, x_host);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(ax[i], b[i], 1e-10) << "row " << i;
}

TEST(DeviceCoarseSolver, SingularFallsBackToHost) {
  // Negated Neumann 1D Laplacian (37 rows): the first pivot is negative, the last LU pivot 0.
  const std::int64_t n = 37;
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i + 1 < n; ++i)
    for (auto [p, q, w] : {std::tuple{i, i, -1.0}, {i + 1, i + 1, -1.0}, {i, i + 1, 1.0}, {i + 1, i, 1.0}})
      r.push_back(p), c.push_back(q), v.push_back(w);
  {
    SCOPED_TRACE("negated Neumann Laplacian");
    expect_host_fallback(csr_from_triplets<double>(n, n, r, c, v), 1);
  }
  // An SPD matrix with an empty row and column (a zero pivot) in the middle.
  const Csr<double> spd = random_dominant(21, testing::fresh_seed(), true, positive);
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  for (std::int64_t i = 0; i < spd.rows; ++i)
    for (std::int64_t p = spd.row_ptr[i]; p < spd.row_ptr[i + 1]; ++p)
      if (i != 10 && spd.col_idx[p] != 10) rows.push_back(i), cols.push_back(spd.col_idx[p]), vals.push_back(spd.values[p]);
  SCOPED_TRACE("empty row and column 10");
  expect_host_fallback(csr_from_triplets<double>(spd.rows, spd.cols, rows, cols, vals), 1);
}

TEST(DeviceCoarseSolver, TinyRefactorStreamAndBadInput) {
  expect_matches_host(csr_from_triplets<double>(1, 1, {0}, {0}, {4.0}), "cholesky (cuSOLVER)", Applied::inverse, 1e-15);
  expect_matches_host(csr_from_triplets<double>(1, 1, {0}, {0}, {-3.0}), "lu (cuSOLVER)", Applied::inverse, 1e-15);
  DeviceCoarseSolver s;
  s.factor(tessera::cuda::upload(Csr<double>::empty(0, 0)));
  EXPECT_EQ(s.method(), "none (0 rows)");
  EXPECT_EQ(s.rows(), 0);
  s.solve(nullptr, nullptr);  // nothing to do
  // Re-factoring one object: same size (buffers kept), then another size, on a user stream.
  // The solver's buffers are stream-ordered allocations freed on the stream they were made on,
  // so the stream must outlive them: the solver lives in the inner scope.
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    DeviceCoarseSolver on_stream;
    for (const auto& [n, sign] : {std::pair{37, positive}, {37, alternating}, {12, positive}}) {
      const Csr<double> a = random_dominant(n, testing::fresh_seed(), true, sign);
      on_stream.factor(tessera::cuda::upload(a, stream), stream);
      std::vector<double> x_star(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < x_star.size(); ++i) x_star[i] = std::cos(double(i));
      const std::vector<double> x = device_solve(on_stream, multiply(a, x_star), stream);
      for (std::size_t i = 0; i < x.size(); ++i)
        EXPECT_NEAR(x[i], x_star[i], 1e-12) << on_stream.method() << ", entry " << i;
    }
  }
  cudaStreamDestroy(stream);
  const Csr<double> rect = csr_from_triplets<double>(2, 3, {0, 1}, {0, 1}, {1.0, 1.0});
  try {
    s.factor(tessera::cuda::upload(rect));
    ADD_FAILURE() << "a 2x3 operator was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2x3"), std::string::npos) << e.what();
  }
}

TEST(DeviceCoarseSolver, DeviceHierarchyFactorsTheCoarsestOnTheDevice) {
  const gen::ProblemSpec spec = gen::parse_spec("poisson3d:15");
  const Csr<double> a = gen::generate(spec);
  AmgOptions o;
  o.coarse_size = 40;
  gpu::DeviceHierarchy h = gpu::device_setup(tessera::cuda::upload(a), constant_near_null_space(a.rows, 1), o);
  ASSERT_TRUE(h.coarse_direct);
  EXPECT_EQ(h.coarse.rows(), h.coarsest().a.rows);
  // Poisson's coarse operator is well conditioned: the one-GPU setup keeps its explicit inverse.
  EXPECT_EQ(statistics(h).coarse_method,
            std::string("dense cholesky (cuSOLVER)") + gpu::DeviceCoarseSolver::kAppliedAsInverse);
  EXPECT_TRUE(h.coarse.applies_inverse());
  EXPECT_GE(gpu::device_bytes(h), h.coarse.device_bytes());
  const Csr<double> coarsest = tessera::cuda::download(h.coarsest().a);
  std::vector<double> b(std::size_t(coarsest.rows), 1.0), x_host;
  DenseCoarseSolver host;
  host.factor(coarsest);
  host.solve(b, x_host);
  const std::vector<double> x = device_solve(h.coarse, b);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], x_host[i], 1e-9 * max_abs(x_host)) << "entry " << i;
}

}  // namespace
}  // namespace tessera::amg
