// tessera-amg's near-null space on 1-4 ranks, partitions uneven and with an empty rank: the
// --near-null vectors are each rank's rows of the file (each vector scaled to a largest
// magnitude of 1), and GAMG's copy is orthonormal over all ranks and spans the same space, for
// vectors of any finite size; a vector that is (to 1e-5 of its norm) a combination of those
// before it is refused on every rank; the rigid-body modes a rank makes are its rows of the
// whole grid's (one global centroid, whatever the partition).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "dist/dist_test_util.hpp"
#include "drivers/amg_near_null.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "support/random_matrix.hpp"
#include "support/shared_directory.hpp"

namespace tessera::driver {
namespace {

/// Rows [begin, end) of this rank: uneven shares, and on 3 or more ranks the last owns none.
std::pair<std::int64_t, std::int64_t> my_rows(const dist::Communicator& comm, std::int64_t n) {
  const int owners = comm.size() >= 3 ? comm.size() - 1 : comm.size();
  const auto cut = [&](int r) { return r >= owners ? n : n * r * (r + 1) / (owners * (owners + 1)); };
  return {cut(comm.rank()), cut(comm.rank() + 1)};
}

using testing::SharedDirectory;

/// Every test's communicator, seed (rank 0's, shared) and scratch directory.
class AmgNearNull : public ::testing::Test {
 protected:
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const SharedDirectory dir{comm, "near_null"};
};

/// Q^T Q = I, summed over the ranks.
void expect_orthonormal(const dist::Communicator& comm, const DenseMatrix& q) {
  const std::int64_t k = q.cols;
  std::vector<double> qtq(static_cast<std::size_t>(k * k), 0.0);
  for (std::int64_t i = 0; i < q.rows; ++i)
    for (std::int64_t a = 0; a < k; ++a)
      for (std::int64_t b = 0; b < k; ++b) qtq[a * k + b] += q.at(i, a) * q.at(i, b);
  comm.allreduce_in_place(qtq, dist::ReduceOp::sum);
  for (std::int64_t a = 0; a < k; ++a)
    for (std::int64_t b = 0; b < k; ++b) EXPECT_NEAR(qtq[a * k + b], a == b ? 1.0 : 0.0, 1e-12) << a << ", " << b;
}

/// `k` random vectors of `n` rows, the same on every rank (rank 0's seed), written by rank 0.
DenseMatrix shared_random_vectors(const dist::Communicator& comm, std::int64_t n, int k, std::uint64_t seed,
                                  const std::string& path) {
  std::mt19937_64 rng(seed);
  DenseMatrix v(n, k, Layout::row_major);
  for (double& x : v.data) x = std::uniform_real_distribution<double>(-1, 1)(rng);
  if (comm.rank() == 0) io::write_matrix_market(path, v);
  comm.barrier();
  return v;
}


NearNullChoice vectors_file(const std::string& path) {
  NearNullChoice choice;
  choice.vectors = path;
  return choice;
}

TEST_F(AmgNearNull, VectorsAreTheRanksRowsAndOrthonormalForGamg) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 203;
  const int k = 4;
  const DenseMatrix whole = shared_random_vectors(comm, n, k, seed, dir.file("v.mtx"));
  const auto [begin, end] = my_rows(comm, n);
  const NearNullSource source(MatrixSource{"A.mtx", ""}, vectors_file(dir.file("v.mtx")), n);
  ASSERT_EQ(source.kind(), NearNullSource::Kind::vectors);
  const OwnedNearNull owned = owned_near_null(comm, source, begin, end);

  // Tessera's space: the file's rows (17 digits read back exactly), each vector divided by its
  // largest magnitude over all rows; block size 1.
  // Shapes agreed over the ranks (the reads and sums below rely on them): a wrong one fails every rank at once.
  EXPECT_EQ(owned.space.vectors.rows, end - begin);
  EXPECT_EQ(owned.space.vectors.cols, k);
  const bool space_shaped = owned.space.vectors.rows == end - begin && owned.space.vectors.cols == k;
  ASSERT_EQ(comm.allreduce(std::int64_t(space_shaped), dist::ReduceOp::min), 1) << "a rank's vectors are misshapen";
  EXPECT_EQ(owned.space.block_size, 1);
  EXPECT_FALSE(owned.space.constant);
  std::vector<double> largest(k, 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) largest[j] = std::max(largest[j], std::abs(whole.at(i, j)));
  for (std::int64_t i = begin; i < end; ++i)
    for (int j = 0; j < k; ++j)
      EXPECT_EQ(owned.space.vectors.at(i - begin, j), whole.at(i, j) / largest[j]) << i << ", " << j;
  EXPECT_TRUE(owned.coordinates.empty());

  // GAMG's: Q^T Q = I and Q (Q^T B) = B, the products summed over the ranks.
  const DenseMatrix& q = owned.orthonormal;
  EXPECT_EQ(q.rows, end - begin);
  EXPECT_EQ(q.cols, k);
  const bool q_shaped = q.rows == end - begin && q.cols == k;
  ASSERT_EQ(comm.allreduce(std::int64_t(q_shaped), dist::ReduceOp::min), 1) << "a rank's orthonormal copy is misshapen";
  expect_orthonormal(comm, q);
  std::vector<double> qtb(k * k, 0.0);
  for (std::int64_t i = 0; i < q.rows; ++i)
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b) qtb[a * k + b] += q.at(i, a) * owned.space.vectors.at(i, b);
  comm.allreduce_in_place(qtb, dist::ReduceOp::sum);
  for (std::int64_t i = 0; i < q.rows; ++i)
    for (int b = 0; b < k; ++b) {
      double projected = 0;
      for (int a = 0; a < k; ++a) projected += q.at(i, a) * qtb[a * k + b];
      ASSERT_NEAR(projected, owned.space.vectors.at(i, b), 1e-12) << "row " << begin + i << ", vector " << b;
    }
}

// Vectors of any finite size: Tessera's copy is scaled to a largest magnitude of 1, GAMG's stays
// finite and orthonormal, when one vector's values are near the largest double and another's
// near the smallest normal one.
TEST_F(AmgNearNull, OrthonormalCopyOfHugeAndTinyVectors) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 90;
  DenseMatrix v = shared_random_vectors(comm, n, 3, seed, dir.file("unscaled.mtx"));
  for (std::int64_t i = 0; i < n; ++i) v.at(i, 0) *= 1e300, v.at(i, 2) *= 1e-300;
  if (comm.rank() == 0) io::write_matrix_market(dir.file("scaled.mtx"), v);
  comm.barrier();
  const auto [begin, end] = my_rows(comm, n);
  const NearNullSource source(MatrixSource{"A.mtx", ""}, vectors_file(dir.file("scaled.mtx")), n);
  const OwnedNearNull owned = owned_near_null(comm, source, begin, end);
  std::vector<double> largest(3, 0.0);
  for (std::int64_t i = 0; i < owned.space.vectors.rows; ++i)
    for (int j = 0; j < 3; ++j) largest[j] = std::max(largest[j], std::abs(owned.space.vectors.at(i, j)));
  comm.allreduce_in_place(largest, dist::ReduceOp::max);
  EXPECT_EQ(largest, std::vector<double>(3, 1.0));
  expect_orthonormal(comm, owned.orthonormal);
}

// Vector 2 = 0.5 v0 - 2 v1 + eps w: refused on every rank for eps = 1e-7 (its part outside the
// span of v0 and v1 is about 1e-7 of its norm, under the 1e-5 bound), accepted for eps = 1e-3.
TEST_F(AmgNearNull, DependentVectorIsRefusedOnEveryRank) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 150;
  DenseMatrix v = shared_random_vectors(comm, n, 4, seed, dir.file("random.mtx"));
  const auto [begin, end] = my_rows(comm, n);
  for (const double eps : {1e-7, 1e-3}) {
    SCOPED_TRACE("eps " + std::to_string(eps));
    const std::string path = dir.file("dependent_" + std::to_string(eps) + ".mtx");
    DenseMatrix three(n, 3, Layout::row_major);
    for (std::int64_t i = 0; i < n; ++i) {
      three.at(i, 0) = v.at(i, 0);
      three.at(i, 1) = v.at(i, 1);
      three.at(i, 2) = 0.5 * v.at(i, 0) - 2.0 * v.at(i, 1) + eps * v.at(i, 3);
    }
    if (comm.rank() == 0) io::write_matrix_market(path, three);
    comm.barrier();
    const NearNullSource source(MatrixSource{"A.mtx", ""}, vectors_file(path), n);
    std::string error;
    try {
      owned_near_null(comm, source, begin, end);
    } catch (const InputError& e) {
      error = e.what();
    }
    if (eps < 1e-5)
      EXPECT_NE(error.find("vector 2 is a combination of vectors 0..1"), std::string::npos) << error;
    else
      EXPECT_EQ(error, "");
  }
}

TEST_F(AmgNearNull, RigidBodyModesAreTheWholeGridsRows) {
  const gen::ProblemSpec spec = gen::parse_spec("elasticity3d:5");
  const std::int64_t n = gen::generate(spec).rows;  // 375 rows, 125 nodes
  const NearNullSource source(MatrixSource{"", "elasticity3d:5"}, NearNullChoice{}, n);
  ASSERT_EQ(source.kind(), NearNullSource::Kind::rigid_body);
  EXPECT_EQ(source.block_size(), 3);
  // Whole nodes a rank: 3 dofs never split.
  auto [begin, end] = my_rows(comm, n / 3);
  begin *= 3, end *= 3;
  const OwnedNearNull owned = owned_near_null(comm, source, begin, end);
  const amg::NearNullSpace whole = amg::rigid_body_modes(gen::coordinates(spec, 0, n), n, 3);
  ASSERT_EQ(owned.space.vectors.rows, end - begin);
  ASSERT_EQ(owned.space.vectors.cols, 6);
  EXPECT_EQ(owned.coordinates, gen::coordinates(spec, begin, end));
  for (std::int64_t i = begin; i < end; ++i)
    for (int j = 0; j < 6; ++j)
      ASSERT_NEAR(owned.space.vectors.at(i - begin, j), whole.vectors.at(i, j), 1e-13) << i << ", " << j;
  EXPECT_EQ(owned.orthonormal.cols, 0) << "GAMG builds the modes from the coordinates itself";
}

}  // namespace
}  // namespace tessera::driver
