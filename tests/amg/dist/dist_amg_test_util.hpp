#pragma once
// Helpers of the distributed AMG tests: generated problems with their near-null spaces, real
// matrices from ../shared/matrices, node-aligned partitions (elasticity nodes of 3 dofs must not
// span ranks, so boundaries are multiples of lcm(8, block size)), including one where a rank
// owns no rows, and comparisons of gathered distributed objects with the serial reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "amg/krylov.hpp"
#include "amg/near_null_space.hpp"
#include "dist/dist_test_util.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "support/generated_near_null_space.hpp"
#include "support/matrix_files.hpp"

namespace tessera::amg::testing {

struct Problem {
  std::string spec;
  Csr<double> a;
  NearNullSpace near_null;  // global rows
};

inline Problem make_problem(const std::string& spec) {
  const gen::ProblemSpec s = gen::parse_spec(spec);
  return Problem{spec, gen::generate(s), tessera::testing::generated_near_null_space(s)};
}

/// The matrices of ../shared/matrices named in `names` (tests/support/matrix_files.hpp), read
/// whole on every rank, with the constant near-null space (scalar nodes); those missing there
/// are left out (the caller says so).
inline std::vector<Problem> file_problems(const std::vector<std::string>& names) {
  std::vector<Problem> out;
  for (const ::tessera::testing::MatrixFile& f : ::tessera::testing::manifest())
    if (std::find(names.begin(), names.end(), f.name) != names.end()) {
      Problem p{f.name, io::read_matrix_market(f.path), {}};
      p.near_null = constant_near_null_space(p.a.rows);
      out.push_back(std::move(p));
    }
  return out;
}

/// Rows [begin, end) of a row-major near-null space.
inline NearNullSpace owned_rows(const NearNullSpace& b, std::int64_t begin, std::int64_t end) {
  NearNullSpace out;
  out.block_size = b.block_size;
  out.vectors = DenseMatrix(end - begin, b.vectors.cols, Layout::row_major);
  std::copy(b.vectors.data.begin() + begin * b.vectors.cols, b.vectors.data.begin() + end * b.vectors.cols,
            out.vectors.data.begin());
  return out;
}

/// Boundaries at multiples of lcm(8, block_size): balanced, or random with an empty rank.
inline dist::RowPartition aligned_partition(const dist::Communicator& comm, std::int64_t n, int block_size,
                                            bool uneven, std::uint64_t seed) {
  const std::int64_t align = std::lcm<std::int64_t>(8, block_size), chunks = (n + align - 1) / align;
  const int ranks = comm.size();
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> offsets{0};
  for (int r = 1; r < ranks; ++r)
    offsets.push_back(std::min(n, align * (uneven ? static_cast<std::int64_t>(rng() % (chunks + 1)) : chunks * r / ranks)));
  offsets.push_back(n);
  std::sort(offsets.begin(), offsets.end());
  if (uneven && ranks >= 3) offsets[2] = offsets[1];  // rank 1 owns nothing
  if (uneven && ranks == 2) offsets[1] = 0;           // rank 0 owns nothing
  return dist::RowPartition::from_offsets(comm, n, offsets);
}

inline double max_abs(const Csr<double>& a) {
  double m = 0;
  for (double v : a.values) m = std::max(m, std::fabs(v));
  return m;
}

/// Same pattern, values equal to rounding (relative to the largest entry): the distributed
/// products sum in another order, and the Lanczos dot products too (omega differs in the last bits).
inline void expect_equal_to_rounding(const Csr<double>& got, const Csr<double>& want, const std::string& what) {
  ASSERT_EQ(got.rows, want.rows) << what;
  ASSERT_EQ(got.cols, want.cols) << what;
  ASSERT_EQ(got.row_ptr, want.row_ptr) << what << ": row pattern differs";
  ASSERT_EQ(got.col_idx, want.col_idx) << what << ": column pattern differs";
  const double tol = 1e-11 * max_abs(want);
  for (std::size_t k = 0; k < want.values.size(); ++k)
    ASSERT_NEAR(got.values[k], want.values[k], tol) << what << ", entry " << k;
}

/// `a` with its off-diagonal entries times `factor`: the same pattern, other values, and a
/// D^-1 A of another spectrum (a uniform scale would leave the smoothers' operator unchanged).
inline Csr<double> off_diagonal_scaled(Csr<double> a, double factor) {
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      if (a.col_idx[k] != r) a.values[k] *= factor;
  return a;
}

/// Factors of b for the solves out of b.b's range (amg/krylov.hpp): a power of two, scaled
/// exactly, and two whose products round each entry of b (relative 1.1e-16).
inline const std::pair<double, const char*> kOutOfRangeFactors[] = {
    {0x1p700, "2^700"}, {1e200, "1e200"}, {1e-200, "1e-200"}};

/// The solve of c b from 0 (`got`, x_c) against that of b (`want`, x), this rank's rows of x,
/// checked on every rank: converged within rtol, the same iterations on every rank and as
/// `want`'s (+-1 where c is not a power of two); x_c = c x bit for bit for a power of two (it
/// scales every step exactly), else x_c / c within 1e-12 of x relative to x_max = max|x| over
/// the ranks (serially x moves by about 1e-15; a wrong scale would show at rtol's 1e-8).
inline void expect_solved_like_unscaled(const dist::Communicator& comm, double c, const SolveResult& want,
                                        const Vector& x, const SolveResult& got, const Vector& x_c, double x_max) {
  int e = 0;
  const bool power_of_two = std::frexp(c, &e) == 0.5;
  EXPECT_TRUE(got.converged()) << got.message;
  EXPECT_LE(got.relative_residual, KrylovOptions{}.rtol);
  EXPECT_LE(std::abs(got.iterations - want.iterations), power_of_two ? 0 : 1);
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, got.iterations));
  double worst = 0;
  std::int64_t off = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(x_c[i] / c - x[i])), off += x_c[i] != c * x[i];
  if (power_of_two)
    EXPECT_EQ(comm.allreduce(off, dist::ReduceOp::sum), 0) << "entries of x other than the unscaled x times c";
  else
    EXPECT_LE(comm.allreduce(worst, dist::ReduceOp::max), 1e-12 * x_max) << "x / c off the unscaled x";
}

}  // namespace tessera::amg::testing
