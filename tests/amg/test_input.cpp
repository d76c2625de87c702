// Bad input to the AMG: every case ends in an InputError naming the problem, or a solve
// result whose status says what went wrong: never a hang, never NaN in x.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "amg/cycle.hpp"
#include "amg/hierarchy.hpp"
#include "amg/krylov.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"

namespace tessera::amg {
namespace {

/// The message of the InputError `f` throws ("" if it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Csr<double> poisson(const char* spec = "poisson3d:6") { return gen::generate(gen::parse_spec(spec)); }

void set_entry(Csr<double>& a, std::int64_t row, std::int32_t col, double value) {
  for (std::int64_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p)
    if (a.col_idx[p] == col) a.values[p] = value;
}

struct Outcome {
  std::string error;  // InputError message, if setup refused the matrix
  SolveResult result;
  bool x_finite = true;
};

Outcome setup_and_solve(const Csr<double>& a, int max_it = 300, int stagnation = 200) {
  Outcome out;
  out.error = input_error([&] {
    AmgOptions o;
    o.coarse_size = 10;
    const Hierarchy h = setup(a, constant_near_null_space(a.rows), o);
    AmgPreconditioner m(h);
    Vector b(static_cast<std::size_t>(a.rows), 1.0), x(b.size(), 0.0);
    KrylovOptions ko;
    ko.max_iterations = max_it;
    ko.stagnation_window = stagnation;
    out.result = pcg(a, b, x, [&](const Vector& r, Vector& z) { m.apply(r, z); }, ko);
    for (const double v : x) out.x_finite = out.x_finite && std::isfinite(v);
  });
  return out;
}

TEST(AmgInput, NonSquareIsRefused) {
  const Csr<double> a = Csr<double>::empty(4, 5);
  const std::string e = input_error([&] { setup(a, constant_near_null_space(4)); });
  EXPECT_NE(e.find("square"), std::string::npos) << e;
}

TEST(AmgInput, ZeroNegativeMissingDiagonalNamesTheRow) {
  Csr<double> a = poisson();
  set_entry(a, 17, 17, 0.0);
  EXPECT_NE(input_error([&] { setup(a, constant_near_null_space(a.rows)); }).find("zero diagonal 0 at row 17"),
            std::string::npos);
  set_entry(a, 17, 17, -6.0);
  EXPECT_NE(input_error([&] { setup(a, constant_near_null_space(a.rows)); }).find("negative diagonal -6 at row 17"),
            std::string::npos);
  const Csr<double> off = csr_from_triplets<double>(2, 2, {0, 1}, {1, 0}, {1.0, 1.0});
  EXPECT_NE(input_error([&] { setup(off, constant_near_null_space(2)); }).find("no diagonal entry in row 0"),
            std::string::npos);
}

TEST(AmgInput, NonFiniteValuesAreRefused) {
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Csr<double> a = poisson();
    set_entry(a, 5, 4, bad);
    const std::string e = input_error([&] { setup(a, constant_near_null_space(a.rows)); });
    EXPECT_NE(e.find("non-finite value"), std::string::npos) << e;
    EXPECT_NE(e.find("row 5, column 4"), std::string::npos) << e;
  }
  const Csr<double> a = poisson();
  const Hierarchy h = setup(a, constant_near_null_space(a.rows));
  AmgPreconditioner m(h);
  Vector b(static_cast<std::size_t>(a.rows), 1.0), x(b.size(), 0.0);
  b[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(pcg(a, b, x, [&](const Vector& r, Vector& z) { m.apply(r, z); }, {}), InputError);
}

TEST(AmgInput, BadOptionsAndNearNullSpaceSize) {
  const Csr<double> a = poisson();
  AmgOptions o;
  o.strength_threshold = -1;
  EXPECT_THROW(setup(a, constant_near_null_space(a.rows), o), InputError);
  EXPECT_THROW(setup(a, constant_near_null_space(a.rows - 1)), InputError);
  EXPECT_THROW(setup(a, constant_near_null_space(a.rows, 5)), InputError);  // 5 does not divide 216
  EXPECT_THROW(parse_smoother("gauss-seidel"), InputError);
  EXPECT_THROW(parse_cycle("F"), InputError);
}

TEST(AmgInput, IndefiniteMatrixIsReportedNotNaN) {
  Csr<double> a = poisson();  // eigenvalues of A - 4 I span (-4 + h, 8 - h): indefinite, diagonal 2 > 0
  for (std::int64_t i = 0; i < a.rows; ++i) set_entry(a, i, static_cast<std::int32_t>(i), 2.0);
  const Outcome out = setup_and_solve(a);
  if (out.error.empty()) {
    EXPECT_FALSE(out.result.converged());
    EXPECT_TRUE(out.result.status == SolveStatus::indefinite_operator ||
                out.result.status == SolveStatus::indefinite_preconditioner)
        << out.result.message;
    EXPECT_TRUE(std::isfinite(out.result.relative_residual));
    EXPECT_TRUE(out.x_finite);
  } else {
    EXPECT_NE(out.error.find("indefinite"), std::string::npos) << out.error;
  }
}

TEST(AmgInput, InconsistentSingularSystemStopsWithAFlag) {
  // Neumann Laplacian on a 2D grid (rows sum to zero: singular) with b = 1, not in the range.
  const std::int64_t n = 9, rows = n * n;
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (auto [di, dj] : {std::pair{1, 0}, {0, 1}}) {
        if (i + di >= n || j + dj >= n) continue;
        const std::int64_t p = i * n + j, q = (i + di) * n + j + dj;
        r.insert(r.end(), {p, q, p, q}), c.insert(c.end(), {p, q, q, p}), v.insert(v.end(), {1, 1, -1, -1});
      }
  const Csr<double> a = csr_from_triplets<double>(rows, rows, r, c, v);
  const Outcome out = setup_and_solve(a, 300, 30);
  ASSERT_TRUE(out.error.empty()) << out.error;
  EXPECT_FALSE(out.result.converged());
  EXPECT_LE(out.result.iterations, 300);
  EXPECT_TRUE(std::isfinite(out.result.relative_residual));
  EXPECT_TRUE(out.x_finite);
  EXPECT_FALSE(out.result.message.empty());
}

TEST(AmgInput, MaxIterationsIsRespected) {
  const Csr<double> a = poisson("poisson3d:10");
  for (int limit : {0, 1, 3}) {
    const Outcome out = setup_and_solve(a, limit);
    ASSERT_TRUE(out.error.empty()) << out.error;
    EXPECT_EQ(out.result.iterations, limit);
    EXPECT_EQ(out.result.status, SolveStatus::max_iterations);
  }
}

TEST(AmgInput, TinyAndEmptyMatrices) {
  const Csr<double> one = csr_from_triplets<double>(1, 1, {0}, {0}, {4.0});
  const Outcome out = setup_and_solve(one);
  ASSERT_TRUE(out.error.empty()) << out.error;
  EXPECT_TRUE(out.result.converged());
  EXPECT_LE(out.result.relative_residual, 1e-15);
  const Csr<double> empty = Csr<double>::empty(0, 0);
  const Hierarchy h = setup(empty, constant_near_null_space(0));
  EXPECT_EQ(h.levels.size(), 1u);
}

}  // namespace
}  // namespace tessera::amg
