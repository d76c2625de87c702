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
#include "local/io/matrix_market.hpp"
#include "support/matrix_files.hpp"
#include "support/random_matrix.hpp"

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

// A near-null vector with a NaN or Inf would reach every coarse level through P: refused, naming
// the vector and the row. So are a column-major space and one without vectors.
TEST(AmgInput, NonFiniteNearNullVectorIsNamed) {
  const gen::ProblemSpec spec = gen::parse_spec("elasticity3d:4");
  const Csr<double> a = gen::generate(spec);
  const NearNullSpace modes = rigid_body_modes(gen::coordinates(spec, 0, a.rows), a.rows, 3);
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
    NearNullSpace b = modes;
    b.vectors.at(17, 4) = bad;
    const std::string e = input_error([&] { setup(a, b); });
    EXPECT_NE(e.find("near-null vector 4 has a non-finite value"), std::string::npos) << e;
    EXPECT_NE(e.find("at row 17"), std::string::npos) << e;
  }
  NearNullSpace column_major = modes;
  column_major.vectors.layout = Layout::col_major;
  EXPECT_NE(input_error([&] { setup(a, column_major); }).find("column-major"), std::string::npos);
  const NearNullSpace none{DenseMatrix(a.rows, 0, Layout::row_major), 3};
  EXPECT_NE(input_error([&] { setup(a, none); }).find("needs at least one vector"), std::string::npos);
  EXPECT_EQ(near_null_space_problem(modes, a.rows), "");
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

/// PCG or FGMRES (amg/krylov.hpp) with an AMG preconditioner.
using KrylovSolver = SolveResult (*)(const Csr<double>&, const Vector&, Vector&, const Preconditioner&,
                                     const KrylovOptions&, const LevelOps&);
constexpr std::pair<const char*, KrylovSolver> kSolvers[] = {{"PCG", pcg}, {"FGMRES", fgmres}};

// rtol below what double precision attains on the system: the solver's own residual (PCG's
// recurrence, FGMRES's least squares) keeps falling, the true one stops at rounding. The solve
// must stop soon after (accuracy_limit, not the stagnation window or the iteration limit) and
// say why, with an x whose true residual is at that floor. Poisson's floor is near 1e-16, so
// rtol 1e-17 is out of reach.
TEST(AmgInput, UnreachableToleranceStopsAtTheAccuracyLimit) {
  const Csr<double> a = poisson("poisson3d:7");
  AmgOptions o;
  o.coarse_size = 10;
  const Hierarchy h = setup(a, constant_near_null_space(a.rows), o);
  AmgPreconditioner m(h);
  const Vector b = testing::random_values(a.rows, testing::fresh_seed());
  for (const auto& [name, solve] : kSolvers) {
    SCOPED_TRACE(name);
    Vector x(b.size(), 0.0);
    KrylovOptions ko;
    ko.rtol = 1e-17;
    const SolveResult r =
        solve(a, b, x, [&](const Vector& rv, Vector& z) { m.apply(rv, z); }, ko, host_reference_ops());
    EXPECT_EQ(r.status, SolveStatus::accuracy_limit) << r.message;
    EXPECT_NE(r.message.find("attainable accuracy"), std::string::npos) << r.message;
    EXPECT_LT(r.iterations, 40) << "it iterated on rounding noise";
    EXPECT_LE(r.relative_residual, 1e-14);
    EXPECT_STREQ(to_string(r.status), "tolerance below the attainable accuracy");
  }
}

// Real matrices whose rtol 1e-8 is out of reach: bcsstk19 and bcsstk20 (cond(A) ~1e11), one
// level, so the preconditioner is A's own dense Cholesky factor. A backward-stable direct solve
// in double leaves b - A x at 1.5e-7 and 2.0e-7 of ||b|| on them (b = 1; docs/performance.md,
// fifty-eighth session). PCG's recurrence fell to 2e-17 at iteration 2; it used to go on from the
// true residual and return an x whose true residual was 19 (bcsstk19) after 200 iterations, and
// FGMRES restarted for 200 iterations before it gave up.
TEST(AmgInput, IllConditionedMatricesStopAtTheDirectSolvesAccuracy) {
  int tested = 0;
  for (const testing::MatrixFile& f : testing::manifest()) {
    if (f.name != "bcsstk19" && f.name != "bcsstk20") continue;
    SCOPED_TRACE(f.name);
    const Csr<double> a = io::read_matrix_market(f.path);
    AmgOptions o;
    o.coarse_size = a.rows;  // one level: the dense Cholesky of A
    const Hierarchy h = setup(a, constant_near_null_space(a.rows), o);
    ASSERT_EQ(h.levels.size(), 1u);
    AmgPreconditioner m(h);
    const Vector b(static_cast<std::size_t>(a.rows), 1.0);
    for (const auto& [name, solve] : kSolvers)
      for (const double rtol : {1e-8, 1e-6}) {
        SCOPED_TRACE(std::string(name) + ", rtol " + std::to_string(rtol));
        Vector x(b.size(), 0.0);
        KrylovOptions ko;
        ko.rtol = rtol;
        const SolveResult r =
            solve(a, b, x, [&](const Vector& rv, Vector& z) { m.apply(rv, z); }, ko, host_reference_ops());
        EXPECT_EQ(r.status, rtol < 1e-6 ? SolveStatus::accuracy_limit : SolveStatus::converged) << r.message;
        EXPECT_LE(r.iterations, 6);
        EXPECT_LE(r.relative_residual, 1e-6);
      }
    ++tested;
  }
  EXPECT_EQ(tested, 2) << "bcsstk19/bcsstk20 missing from " << testing::matrix_dir();
}

// The bookkeeping behind accuracy_limit: the smallest true residual, and whether the last failed
// confirmation halved the smallest before it (the first always counts as progress).
TEST(AmgInput, FailedConfirmationsTrackTheSmallestAndTheProgress) {
  detail::FailedConfirmations f;
  EXPECT_TRUE(f.record(4e-7));
  EXPECT_TRUE(f.halved);
  EXPECT_TRUE(f.record(1e-7));  // a new smallest, and a quarter of the last
  EXPECT_TRUE(f.halved);
  EXPECT_TRUE(f.record(0.6e-7));  // a new smallest, not halved: the limit
  EXPECT_FALSE(f.halved);
  EXPECT_FALSE(f.record(2e-7));  // larger: the kept iterate stays
  EXPECT_FALSE(f.halved);
  EXPECT_EQ(f.count, 4);
  EXPECT_EQ(f.smallest, 0.6e-7);
  const std::string m = f.limit_message("recurrence residual", 1e-8, 2e-7);
  EXPECT_NE(m.find("the recurrence residual reached rtol 1.0e-08 4 times"), std::string::npos) << m;
  EXPECT_NE(m.find("last 2.000e-07, smallest 6.000e-08"), std::string::npos) << m;
}

// A breakdown's scalar and a stagnation's smallest residual in scientific notation: "%f" wrote
// r^T M^-1 r = -1e-20 as -0.000000 (the pattern-only power networks of ../shared/matrices).
TEST(AmgInput, BreakdownMessagesKeepTheirScalarsDigits) {
  EXPECT_EQ(detail::value_at(13, "r^T M^-1 r", -1.5e-20), "r^T M^-1 r = -1.500e-20 at iteration 13");
  const std::string stalled = detail::stagnation_message(200, 3.25e-9);
  EXPECT_NE(stalled.find("in 200 iterations (smallest 3.250e-09)"), std::string::npos) << stalled;
  EXPECT_NE(stalled.find("too ill-conditioned for the preconditioner"), std::string::npos) << stalled;  // not cut short
}

// The scale of a b out of b.b's range (amg/krylov.hpp), on a one-entry b = v: k = 0 in range and
// for 0, else ||2^k b|| in [1/2, 1) with k within [-1022, 1022]; a non-finite v is refused.
TEST(AmgInput, RightHandSideScaleIsAPowerOfTwoIntoRange) {
  const auto k_of = [](double v) {
    return detail::rhs_scale_exponent("test", v * v, [v](int t) { return std::ldexp(v, t) * std::ldexp(v, t); });
  };
  EXPECT_EQ(k_of(0.0), 0);
  EXPECT_EQ(k_of(1.0), 0);
  EXPECT_EQ(k_of(0x1p256), 0);    // b.b = 2^512: the range's top
  EXPECT_EQ(k_of(0x1p-256), 0);   // and its bottom
  EXPECT_EQ(k_of(0x1p257), -258);  // 2^-258 2^257 = 1/2
  EXPECT_EQ(k_of(-3e200), -666);   // 3e200 = 0.98 2^666
  EXPECT_EQ(k_of(1e-200), 664);    // 1e-200 = 0.77 2^-664
  EXPECT_EQ(k_of(std::numeric_limits<double>::max()), -1022);         // 2^1024 - ulp: clamped
  EXPECT_EQ(k_of(std::numeric_limits<double>::denorm_min()), 1022);   // 2^-1074: clamped
  for (const double bad : {std::numeric_limits<double>::infinity(), std::nan("")})
    EXPECT_NE(input_error([&] { k_of(bad); }).find("test: b has a non-finite value"), std::string::npos) << bad;
}

// The scaling's two limits, each stated: an initial x so far from b's scale that 2^k x overflows
// (b near 1e-300, x near 1e300) is refused and left as it was; a solution past double's range
// (A times 1e-20, b near 1e300: x near 1e320) ends in a breakdown that says so, never a
// "converged" with an infinite x.
TEST(AmgInput, OutOfRangeRightHandSidesStateTheirLimits) {
  Csr<double> a = poisson();
  for (double& v : a.values) v *= 1e-20;
  AmgOptions o;
  o.coarse_size = 10;
  const Hierarchy h = setup(a, constant_near_null_space(a.rows), o);
  AmgPreconditioner m(h);
  const Preconditioner apply = [&](const Vector& r, Vector& z) { m.apply(r, z); };
  for (const auto& [name, solve] : kSolvers) {
    SCOPED_TRACE(name);
    const Vector tiny(static_cast<std::size_t>(a.rows), 1e-300);
    Vector x(tiny.size(), 1e300);
    const std::string error = input_error([&] { solve(a, tiny, x, apply, KrylovOptions{}, host_reference_ops()); });
    EXPECT_NE(error.find("the initial x times 2^"), std::string::npos) << error;
    EXPECT_EQ(x, Vector(tiny.size(), 1e300));
    const Vector huge(tiny.size(), 1e300);
    x.assign(huge.size(), 0.0);
    const SolveResult r = solve(a, huge, x, apply, KrylovOptions{}, host_reference_ops());
    EXPECT_EQ(r.status, SolveStatus::breakdown) << r.message;
    EXPECT_NE(r.message.find("the solution overflows double precision"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("(converged after"), std::string::npos) << "the scaled system was solved: " << r.message;
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
