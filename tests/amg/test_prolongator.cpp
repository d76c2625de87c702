// Tentative prolongator (per-aggregate QR), near-null spaces, the lambda_max estimate, the
// smoothed prolongator against its definition, and the Galerkin operators of a hierarchy.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "amg/eigen_estimate.hpp"
#include "amg/hierarchy.hpp"
#include "amg/input_check.hpp"
#include "amg/prolongator_smoothing.hpp"
#include "amg/tentative_prolongator.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "local/reference/kernels.hpp"
#include "support/generated_near_null_space.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg {
namespace {

TEST(ThinQr, FactorsRandomTallWideAndRankDeficientBlocks) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::pair<int, int> shapes[] = {{1, 1}, {5, 1}, {7, 6}, {6, 6}, {20, 6}, {3, 6}, {1, 6}};
  for (const auto& [m, k] : shapes) {
    for (bool deficient : {false, true}) {
      std::vector<double> a(static_cast<std::size_t>(m) * k);
      for (double& x : a) x = u(rng);
      if (deficient && k > 1)
        for (int i = 0; i < m; ++i) a[(k - 1) * m + i] = 2 * a[i];  // last column = 2 x first
      const std::vector<double> original = a;
      std::vector<double> q, r;
      thin_qr(m, k, a, q, r);
      const int c = std::min(m, k);
      for (int i = 0; i < c; ++i) {
        EXPECT_GE(r[i * k + i], 0.0);
        for (int j = 0; j < i; ++j) EXPECT_EQ(r[i * k + j], 0.0);
        for (int j = 0; j < c; ++j) {  // Q^T Q = I
          double dot = 0;
          for (int row = 0; row < m; ++row) dot += q[i * m + row] * q[j * m + row];
          EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-14) << m << "x" << k;
        }
      }
      for (int row = 0; row < m; ++row)
        for (int j = 0; j < k; ++j) {  // Q R = A
          double s = 0;
          for (int i = 0; i < c; ++i) s += q[i * m + row] * r[i * k + j];
          EXPECT_NEAR(s, original[j * m + row], 1e-14) << m << "x" << k;
        }
    }
  }
}

/// Checks P_tent: per aggregate Q^T Q = I, P_tent B_c = B on aggregated rows, zero rows elsewhere.
void expect_tentative_exact(const Csr<double>& a, const NearNullSpace& nns, double theta) {
  const NodeLayout nodes = uniform_nodes(a.rows, nns.block_size);
  const Aggregates agg = aggregate(strength_graph(a, nodes, theta));
  const TentativeProlongator t = tentative_prolongator(agg, nodes, nns.vectors);
  validate(t.p, "P_tent");
  const int k = static_cast<int>(nns.vectors.cols);
  const Csr<double> pt = ref::transpose(t.p);
  const Csr<double> ptp = ref::spgemm(pt, t.p);  // block diagonal identity: orthonormal per aggregate
  for (std::int64_t i = 0; i < ptp.rows; ++i)
    for (std::int64_t p = ptp.row_ptr[i]; p < ptp.row_ptr[i + 1]; ++p)
      EXPECT_NEAR(ptp.values[p], ptp.col_idx[p] == i ? 1.0 : 0.0, 1e-13) << i << "," << ptp.col_idx[p];
  const std::vector<std::int32_t> node = node_of_dof(nodes);
  for (std::int64_t row = 0; row < a.rows; ++row) {
    const bool aggregated = agg.of_node[node[row]] != kNotAggregated;
    EXPECT_EQ(t.p.row_length(row) > 0, aggregated) << row;
    for (int j = 0; j < k; ++j) {
      double s = 0;
      for (std::int64_t p = t.p.row_ptr[row]; p < t.p.row_ptr[row + 1]; ++p)
        s += t.p.values[p] * t.coarse_vectors.at(t.p.col_idx[p], j);
      const double expect = aggregated ? nns.vectors.at(row, j) : 0.0;
      EXPECT_NEAR(s, expect, 1e-12 * (1 + std::abs(expect))) << "row " << row << " vector " << j;
    }
  }
}

TEST(TentativeProlongator, ConstantOnPoissonIsExactAndOrthonormal) {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:9"));
  expect_tentative_exact(a, constant_near_null_space(a.rows), 0.02);
}

TEST(TentativeProlongator, RigidBodyModesOnElasticityAreExact) {
  for (const char* text : {"elasticity2d:13", "elasticity3d:6"}) {  // 3 and 6 modes
    SCOPED_TRACE(text);
    const gen::ProblemSpec spec = gen::parse_spec(text);
    expect_tentative_exact(gen::generate(spec), tessera::testing::generated_near_null_space(spec), 0.02);
  }
}

TEST(TentativeProlongator, AggregateSmallerThanNearNullSpaceGetsFewerCoarseDofs) {
  // Scalar path graph of 4 nodes, 3 random vectors: aggregates of 2 nodes get 2 coarse dofs.
  const Csr<double> a = csr_from_triplets<double>(4, 4, {0, 0, 1, 1, 1, 2, 2, 2, 3, 3}, {0, 1, 0, 1, 2, 1, 2, 3, 2, 3},
                                                  {2, -1, -1, 2, -1, -1, 2, -1, -1, 2});
  NearNullSpace nns{DenseMatrix(4, 3, Layout::row_major), 1};
  std::mt19937_64 rng(testing::fresh_seed());
  for (double& x : nns.vectors.data) x = std::uniform_real_distribution<double>(-1, 1)(rng);
  expect_tentative_exact(a, nns, 0.0);
}

TEST(RigidBodyModes, AreInTheKernelOfTheUnclampedOperator) {
  // Interior rows of elasticity and of frames (away from the clamped edge or face) annihilate
  // the rigid-body modes: 3 in 2D, 6 in 3D; a frame's nodes rotate with them.
  for (const char* text : {"elasticity2d:7", "elasticity3d:5", "frame2d:7", "frame3d:5"}) {
    const gen::ProblemSpec spec = gen::parse_spec(text);
    const Csr<double> a = gen::generate(spec);
    const int dim = gen::dimension(spec), dofs = gen::block_size(spec);
    const NearNullSpace rbm = tessera::testing::generated_near_null_space(spec);
    ASSERT_EQ(rbm.vectors.cols, rigid_body_mode_count(dim)) << text;
    ASSERT_EQ(rbm.block_size, dofs) << text;
    for (int j = 0; j < rigid_body_mode_count(dim); ++j) {
      std::vector<double> v(static_cast<std::size_t>(a.rows)), av(v.size());
      for (std::int64_t i = 0; i < a.rows; ++i) v[i] = rbm.vectors.at(i, j);
      ref::spmv(1.0, a, v, 0.0, av);
      double largest = 0;  // the mode is not itself zero on the interior
      for (std::int64_t node = 0; node < a.rows / dofs; ++node) {
        if (node % spec.params[0] < 2) continue;  // clamped x = 0 and its neighbours feel the boundary
        for (int c = 0; c < dofs; ++c) {
          EXPECT_NEAR(av[dofs * node + c], 0.0, 1e-12) << text << " mode " << j << " node " << node;
          largest = std::max(largest, std::abs(v[dofs * node + c]));
        }
      }
      EXPECT_GT(largest, 0.5) << text << " mode " << j;
    }
  }
}

TEST(RigidBodyModes, PlanarModesAreTheTranslationsAndTheRotation) {
  // Two nodes at (0, 0) and (2, 1), centroid (1, 0.5): x, y translations and (-y, x) about it.
  const NearNullSpace b = rigid_body_modes({0, 0, 7, 0, 0, 7, 2, 1, -7, 2, 1, -7}, 4, 2);  // z is not read
  ASSERT_EQ(b.vectors.rows, 4);
  ASSERT_EQ(b.vectors.cols, 3);
  EXPECT_EQ(b.block_size, 2);
  EXPECT_FALSE(b.constant);
  const std::vector<double> expect = {1, 0, 0.5, 0, 1, -1, 1, 0, -0.5, 0, 1, 1};  // row-major
  EXPECT_EQ(b.vectors.data, expect);
  EXPECT_THROW(rigid_body_modes(std::vector<double>(9, 0.0), 3, 2), InputError);   // 3 rows, 2 dofs a node
  EXPECT_THROW(rigid_body_modes(std::vector<double>(12, 0.0), 4, 4), InputError);  // no 4D modes
  EXPECT_THROW(rigid_body_modes(std::vector<double>(9, 0.0), 4, 2), InputError);   // 3 numbers a row needed
}

TEST(RigidBodyModes, NodesThatRotateTurnTheirRotationDofs) {
  // The same two nodes with a rotation dof each (ux uy rz): the rotation mode is 1 there.
  const std::vector<double> xyz = {0, 0, 7, 0, 0, 7, 0, 0, 7, 2, 1, -7, 2, 1, -7, 2, 1, -7};
  const NearNullSpace plane = rigid_body_modes(xyz, 6, 2, NodeDofs::with_rotations);
  EXPECT_EQ(plane.block_size, 3);
  EXPECT_EQ(plane.vectors.data,
            (std::vector<double>{1, 0, 0.5, 0, 1, -1, 0, 0, 1, 1, 0, -0.5, 0, 1, 1, 0, 0, 1}));  // row-major
  // One node in 3D (ux uy uz rx ry rz), at the centroid: no displacement from a rotation; the
  // columns are the translations, then the rotations about z, x, y.
  const NearNullSpace space = rigid_body_modes(std::vector<double>(18, 0.0), 6, 3, NodeDofs::with_rotations);
  EXPECT_EQ(space.block_size, 6);
  std::vector<double> expect(36, 0.0);
  for (const auto& [row, column] : std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {2, 2}, {3, 4}, {4, 5}, {5, 3}})
    expect[6 * row + column] = 1;
  EXPECT_EQ(space.vectors.data, expect);
  EXPECT_EQ(node_dof_count(3, NodeDofs::with_rotations), 6);
  EXPECT_EQ(node_dof_count(2, NodeDofs::displacements), 2);
  EXPECT_THROW(rigid_body_modes(std::vector<double>(27, 0.0), 9, 3, NodeDofs::with_rotations),
               InputError);  // 1.5 nodes
  EXPECT_THROW(rigid_body_modes(std::vector<double>(12, 0.0), 4, 2, NodeDofs::with_rotations), InputError);
}

TEST(EigenEstimate, TridiagonalMaxEigenvalueIsExact) {
  for (int n : {1, 2, 5, 40}) {  // tridiag(-1, 2, -1): lambda_max = 2 - 2 cos(n pi / (n + 1))
    const double expect = 2 - 2 * std::cos(n * M_PI / (n + 1));
    EXPECT_NEAR(tridiagonal_max_eigenvalue(std::vector<double>(n, 2.0), std::vector<double>(n - 1, -1.0)), expect, 1e-13);
  }
}

TEST(EigenEstimate, RitzBelowTrueMaxAndSafeBelowGershgorin) {
  // 1D Laplacian, n = 50: lambda_max(D^-1 A) = 1 + cos(pi / 51).
  const std::int64_t n = 50;
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) {
    r.push_back(i), c.push_back(i), v.push_back(2);
    if (i > 0) r.push_back(i), c.push_back(i - 1), v.push_back(-1);
    if (i + 1 < n) r.push_back(i), c.push_back(i + 1), v.push_back(-1);
  }
  const Csr<double> a = csr_from_triplets<double>(n, n, r, c, v);
  const double exact = 1 + std::cos(M_PI / (n + 1));
  const EigenEstimate e = estimate_lambda_max(a, Vector(n, 0.5), 10, 1.1, host_reference_ops());
  EXPECT_LE(e.ritz, exact * (1 + 1e-12));
  EXPECT_GT(e.ritz, 0.95 * exact);  // Lanczos reaches the top of the spectrum in 10 steps
  EXPECT_DOUBLE_EQ(e.gershgorin, 2.0);
  EXPECT_DOUBLE_EQ(e.safe, std::min(1.1 * e.ritz, 2.0));
  EXPECT_GE(e.safe, exact * (1 - 1e-3));
}

TEST(ProlongatorSmoothing, MatchesDenseDefinition) {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d27:6"));
  const NodeLayout nodes = uniform_nodes(a.rows, 1);
  const TentativeProlongator t =
      tentative_prolongator(aggregate(strength_graph(a, nodes, 0.02)), nodes, constant_near_null_space(a.rows).vectors);
  Vector inv_diag = diagonal(a);
  for (double& x : inv_diag) x = 1 / x;
  const double omega = 0.37;
  const Csr<double> p = smooth_prolongator(a, inv_diag, t.p, omega, host_reference_ops());
  const std::vector<double> ad = testing::to_dense(a), pd = testing::to_dense(t.p), sd = testing::to_dense(p);
  const std::int64_t n = a.rows, m = t.p.cols;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      double ap = 0;
      for (std::int64_t k = 0; k < n; ++k) ap += ad[i * n + k] * pd[k * m + j];
      EXPECT_NEAR(sd[i * m + j], pd[i * m + j] - omega * inv_diag[i] * ap, 1e-14) << i << "," << j;
    }
}

TEST(Hierarchy, GalerkinOperatorsAreSymmetricAndEqualPtAP) {
  const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:12"));
  AmgOptions o;
  o.coarse_size = 10;
  const Hierarchy h = setup(a, constant_near_null_space(a.rows), o);
  ASSERT_GE(h.levels.size(), 3u);
  for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
    const Csr<double>& ac = h.levels[l + 1].a;
    EXPECT_EQ(ac, ref::ptap(h.levels[l].a, h.levels[l].p)) << "level " << l + 1;
    const Csr<double> act = ref::transpose(ac);
    ASSERT_EQ(act.col_idx, ac.col_idx);
    double scale = 0;
    for (const double x : ac.values) scale = std::max(scale, std::abs(x));
    for (std::int64_t p = 0; p < ac.nnz(); ++p) EXPECT_NEAR(ac.values[p], act.values[p], 1e-13 * scale);
    EXPECT_EQ(h.levels[l].r, ref::transpose(h.levels[l].p));
  }
}

}  // namespace
}  // namespace tessera::amg
