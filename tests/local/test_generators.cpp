// Generated problems: hand-written small matrices, symmetry, elasticity and frame rigid-body
// modes and definiteness, row-range consistency for every kind, seeded reproducibility, R-MAT skew,
// and spec parsing errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using gen::generate;
using gen::generate_rows;
using gen::parse_spec;

Csr<double> generate(const std::string& spec) { return gen::generate(parse_spec(spec)); }

/// Transpose by triplets: an independent oracle for symmetry. Entry (r, c) of A becomes
/// (c, r): rows_t holds c, cols_t holds r.
Csr<double> transpose(const Csr<double>& a) {
  std::vector<std::int64_t> rows_t, cols_t;
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      rows_t.push_back(a.col_idx[k]);
      cols_t.push_back(r);
    }
  return csr_from_triplets<double>(a.cols, a.rows, rows_t, cols_t, {a.values.begin(), a.values.end()});
}

std::vector<double> multiply(const Csr<double>& a, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(a.rows), 0.0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) y[r] += a.values[k] * x[a.col_idx[k]];
  return y;
}

/// Dense Cholesky: true iff every pivot is positive, i.e. the matrix is SPD (for symmetric input).
bool cholesky_succeeds(std::vector<double> m, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    double pivot = m[j * n + j];
    for (std::int64_t k = 0; k < j; ++k) pivot -= m[j * n + k] * m[j * n + k];
    if (!(pivot > 0)) return false;
    const double d = std::sqrt(pivot);
    m[j * n + j] = d;
    for (std::int64_t i = j + 1; i < n; ++i) {
      double s = m[i * n + j];
      for (std::int64_t k = 0; k < j; ++k) s -= m[i * n + k] * m[j * n + k];
      m[i * n + j] = s / d;
    }
  }
  return true;
}

std::int64_t count_nonzeros(const std::vector<double>& dense) {
  return std::count_if(dense.begin(), dense.end(), [](double v) { return v != 0.0; });
}

TEST(Generators, Poisson2dOf3IsTheHandWrittenMatrix) {
  // Nodes numbered x fastest: node (x, y) is row x + 3y.
  const std::vector<double> expect = {
      4, -1, 0, -1, 0, 0, 0, 0, 0,   //
      -1, 4, -1, 0, -1, 0, 0, 0, 0,  //
      0, -1, 4, 0, 0, -1, 0, 0, 0,   //
      -1, 0, 0, 4, -1, 0, -1, 0, 0,  //
      0, -1, 0, -1, 4, -1, 0, -1, 0, //
      0, 0, -1, 0, -1, 4, 0, 0, -1,  //
      0, 0, 0, -1, 0, 0, 4, -1, 0,   //
      0, 0, 0, 0, -1, 0, -1, 4, -1,  //
      0, 0, 0, 0, 0, -1, 0, -1, 4};
  const Csr<double> a = generate("poisson2d:3");
  validate(a);
  EXPECT_EQ(testing::to_dense(a), expect);
  EXPECT_EQ(a.nnz(), count_nonzeros(expect));  // no stored zeros
}

TEST(Generators, Poisson3dOf2IsTheHandWrittenMatrix) {
  // The 2x2x2 cube: node (x, y, z) = x + 2y + 4z; each node has 3 neighbours.
  const std::vector<double> expect = {
      6, -1, -1, 0, -1, 0, 0, 0,  //
      -1, 6, 0, -1, 0, -1, 0, 0,  //
      -1, 0, 6, -1, 0, 0, -1, 0,  //
      0, -1, -1, 6, 0, 0, 0, -1,  //
      -1, 0, 0, 0, 6, -1, -1, 0,  //
      0, -1, 0, 0, -1, 6, 0, -1,  //
      0, 0, -1, 0, -1, 0, 6, -1,  //
      0, 0, 0, -1, 0, -1, -1, 6};
  const Csr<double> a = generate("poisson3d:2");
  validate(a);
  EXPECT_EQ(testing::to_dense(a), expect);
  EXPECT_EQ(a.nnz(), count_nonzeros(expect));
}

TEST(Generators, StencilCountsAndRowSums) {
  for (std::int64_t n : {1, 2, 5}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    EXPECT_EQ(generate("poisson2d:" + std::to_string(n)).nnz(), 5 * n * n - 4 * n);
    EXPECT_EQ(generate("poisson3d:" + std::to_string(n)).nnz(), 7 * n * n * n - 6 * n * n);
    EXPECT_EQ(generate("poisson3d27:" + std::to_string(n)).nnz(), (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
  }
  const Csr<double> a = generate("poisson3d27:3");
  const std::int64_t centre = 1 + 3 * 1 + 9 * 1;
  ASSERT_EQ(a.row_length(centre), 27);
  double sum = 0;
  for (std::int64_t k = a.row_ptr[centre]; k < a.row_ptr[centre + 1]; ++k) {
    sum += a.values[k];
    EXPECT_EQ(a.values[k], a.col_idx[k] == centre ? 26.0 : -1.0);
  }
  EXPECT_EQ(sum, 0.0);
  EXPECT_EQ(a.row_length(0), 8);  // a corner touches a 2x2x2 block
}

TEST(Generators, GridProblemsAreSymmetricAndPositiveDefinite) {
  for (const char* spec : {"poisson2d:7", "poisson3d:5", "poisson3d27:4", "elasticity2d:1", "elasticity2d:2",
                           "elasticity2d:6", "elasticity3d:1", "elasticity3d:2", "elasticity3d:4", "frame2d:1",
                           "frame2d:2", "frame2d:6", "frame3d:1", "frame3d:2", "frame3d:4", "frame2d:4:1",
                           "frame3d:3:30"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = generate(spec);
    validate(a);
    EXPECT_EQ(transpose(a), a);  // bitwise
    const std::vector<double> dense = testing::to_dense(a);
    for (std::int64_t r = 0; r < a.rows; ++r) EXPECT_GT(dense[r * a.rows + r], 0.0) << "row " << r;
  }
  for (const char* spec : {"poisson3d27:3", "elasticity2d:5", "elasticity3d:3", "frame2d:5", "frame3d:3", "frame2d:4:1",
                           "frame3d:3:30"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = generate(spec);
    EXPECT_TRUE(cholesky_succeeds(testing::to_dense(a), a.rows));
  }
  // A singular symmetric matrix must fail the check: it is not vacuous.
  EXPECT_FALSE(cholesky_succeeds({1, 1, 1, 1}, 2));
}

TEST(Generators, ConvectionDiffusionIsPoissonPlusUpwindConvection) {
  // convdiff3d:N = poisson3d:N + c on the diagonal - c towards the x - 1 neighbour (c = 2),
  // built here from the dense Laplacian, entry by entry.
  for (std::int64_t n : {1, 2, 4}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const Csr<double> a = generate("convdiff3d:" + std::to_string(n));
    validate(a);
    std::vector<double> expect = testing::to_dense(generate("poisson3d:" + std::to_string(n)));
    const std::int64_t rows = n * n * n;
    for (std::int64_t i = 0; i < rows; ++i) {
      expect[i * rows + i] += 2.0;
      if (i % n != 0) expect[i * rows + i - 1] -= 2.0;
    }
    EXPECT_EQ(testing::to_dense(a), expect);
    EXPECT_EQ(a.nnz(), 7 * n * n * n - 6 * n * n);  // the Laplacian's pattern: symmetric
    if (n > 1) EXPECT_FALSE(transpose(a) == a) << "convdiff3d must not be symmetric";
    // An M-matrix row by row: positive diagonal, non-positive off-diagonals, row sums >= 0.
    for (std::int64_t i = 0; i < rows; ++i) {
      double sum = 0;
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        sum += a.values[k];
        if (a.col_idx[k] == i) EXPECT_GT(a.values[k], 0.0);
        else EXPECT_LT(a.values[k], 0.0);
      }
      EXPECT_GE(sum, 0.0) << "row " << i;
    }
  }
}

TEST(Generators, IsSymmetricSaysWhatTheMatrixIs) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::string s = ":seed=" + std::to_string(seed);
  for (const std::string& text : {std::string("poisson2d:6"), std::string("poisson3d:5"), std::string("poisson3d27:4"),
                                  std::string("elasticity2d:4"), std::string("elasticity3d:3"),
                                  std::string("frame2d:4"), std::string("frame3d:3"), std::string("convdiff3d:5"),
                                  "rmat:8:4" + s,
                                  "random:60:6" + s}) {
    SCOPED_TRACE(text);
    const gen::ProblemSpec spec = parse_spec(text);
    const Csr<double> a = gen::generate(spec);
    EXPECT_EQ(gen::is_symmetric(spec), transpose(a) == a);
  }
}

// The elasticity generators, 3D (elasticity3d:5, 3 dofs a node) and plane strain
// (elasticity2d:6, 2 dofs a node): the clamp, the element's diagonal, the rigid-body modes.
struct ElasticityGenerator : ::testing::TestWithParam<const char*> {
  gen::ProblemSpec spec = parse_spec(GetParam());
  int dim = gen::dimension(spec);
  std::int64_t n = spec.params[0];
  Csr<double> a = gen::generate(spec);
  std::vector<double> xyz = gen::coordinates(spec, 0, a.rows);

  double node_x(std::int64_t row) const { return xyz[3 * row]; }
  /// n^k
  std::int64_t power(int k) const { return k == 0 ? 1 : n * power(k - 1); }

  /// Every dof of an x = 0 node keeps an identity row, and no other row couples with one.
  void expect_clamped_rows_identity_and_decoupled() const {
    for (std::int64_t r = 0; r < a.rows; ++r) {
      if (node_x(r) == 0) {
        ASSERT_EQ(a.row_length(r), 1) << "row " << r;
        EXPECT_EQ(a.col_idx[a.row_ptr[r]], r);
        EXPECT_EQ(a.values[a.row_ptr[r]], 1.0);
        continue;
      }
      for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
        ASSERT_NE(node_x(a.col_idx[k]), 0.0) << "row " << r << " couples with clamped dof " << a.col_idx[k];
    }
  }
};

TEST_P(ElasticityGenerator, ClampedBoundaryIsIdentityAndDecoupled) {
  ASSERT_EQ(a.rows, dim * power(dim));
  EXPECT_EQ(gen::block_size(spec), dim);
  expect_clamped_rows_identity_and_decoupled();
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max(longest, a.row_length(r));
  EXPECT_EQ(longest, dim == 3 ? 81 : 18);  // 3^dim nodes x dim dofs
}

TEST_P(ElasticityGenerator, DiagonalMatchesClosedForm) {
  // Unit Q1 element: K_aa for one component = (lambda + 2 mu) I + (dim - 1) mu I, where
  // I = 3^(1 - dim) is the integral of a squared shape-function derivative: (lambda + 4 mu) / 9
  // in 3D, (lambda + 3 mu) / 3 in plane strain. An interior node collects it from 2^dim elements.
  const double nu = 0.3, lambda = nu / ((1 + nu) * (1 - 2 * nu)), mu = 1 / (2 * (1 + nu));
  const double element_diag = (lambda + (dim + 1) * mu) / (dim == 3 ? 9 : 3);
  const std::vector<double> dense = testing::to_dense(a);
  std::int64_t interior = 0;  // the node (2, 2[, 2])
  for (int d = 0; d < dim; ++d) interior += 2 * power(d);
  const std::int64_t corner = n - 1;  // (n - 1, 0[, 0]) touches one element
  for (int c = 0; c < dim; ++c) {
    const std::int64_t ri = dim * interior + c, rc = dim * corner + c;
    EXPECT_NEAR(dense[ri * a.rows + ri], (1 << dim) * element_diag, 1e-14);
    EXPECT_NEAR(dense[rc * a.rows + rc], element_diag, 1e-14);
  }
}

TEST_P(ElasticityGenerator, RigidBodyModesAreInTheKernelAwayFromTheClamp) {
  // Written out here, apart from amg::rigid_body_modes: dim translations, then the rotations
  // about z (-y, x, 0) and, in 3D, about x (0, -z, y) and y (z, 0, -x).
  const int count = dim == 3 ? 6 : 3;
  std::vector<std::vector<double>> modes(count, std::vector<double>(static_cast<std::size_t>(a.rows), 0.0));
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const int c = static_cast<int>(r % dim);
    const double x = xyz[3 * r], y = xyz[3 * r + 1], z = xyz[3 * r + 2];
    const double rot_z[3] = {-y, x, 0}, rot_x[3] = {0, -z, y}, rot_y[3] = {z, 0, -x};
    modes[c][r] = 1.0;
    modes[dim][r] = rot_z[c];
    if (dim == 3) modes[4][r] = rot_x[c], modes[5][r] = rot_y[c];
  }
  for (int m = 0; m < count; ++m) {
    SCOPED_TRACE("mode " + std::to_string(m));
    const std::vector<double> y = multiply(a, modes[m]);
    double next_to_clamp = 0;
    for (std::int64_t r = 0; r < a.rows; ++r) {
      if (node_x(r) >= 2) {
        EXPECT_NEAR(y[r], 0.0, 1e-13 * n) << "row " << r;
      } else if (node_x(r) == 1) {
        next_to_clamp = std::max(next_to_clamp, std::abs(y[r]));
      }
    }
    EXPECT_GT(next_to_clamp, 1e-3);  // the dropped clamp couplings must show next to the boundary
  }
}

INSTANTIATE_TEST_SUITE_P(ThreeAndTwoDimensions, ElasticityGenerator,
                         ::testing::Values("elasticity3d:5", "elasticity2d:6"));

// The frame generators: beams along the grid edges, nodes that carry rotations (frame3d:5: ux uy
// uz rx ry rz; frame2d:6: ux uy rz). The clamp, closed-form diagonals, and the rigid-body modes
// with their rotation dofs in the kernel (without them, the rotations are not).
struct FrameGenerator : ElasticityGenerator {
  int dofs = gen::block_size(spec);
  double side = 1.0 / static_cast<double>(spec.params[1]);  // of the beams' square section
  double bending = side * side * side * side;  // 12 EI: the scale of the smallest couplings
  /// The 3D component of a row's dof: 0-2 the displacements, 3-5 the rotations about x y z.
  int component(std::int64_t row) const {
    const int c = static_cast<int>(row % dofs);
    return dim == 3 ? c : (c == 2 ? 5 : c);
  }
};

TEST_P(FrameGenerator, ClampedBoundaryIsIdentityAndDecoupled) {
  ASSERT_EQ(a.rows, dofs * power(dim));
  ASSERT_EQ(dofs, dim == 3 ? 6 : 3);
  expect_clamped_rows_identity_and_decoupled();
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max(longest, a.row_length(r));
  // The couplings a beam has, not full node blocks: in 3D a dof meets 3 of its node's dofs, 1 of
  // each neighbour's along one axis and 2 along the others (13); in 2D rz meets ux uy rz and 2 of
  // each neighbour's (11).
  EXPECT_EQ(longest, dim == 3 ? 13 : 11);
}

TEST_P(FrameGenerator, DiagonalMatchesClosedForm) {
  // A beam of length 1 adds EA to its axial displacement, 12 EI to a transverse one, GJ to the
  // rotation about it and 4 EI to a rotation across it, at each end. An interior node has two
  // beams along each axis. The section is a square of side 1 / slenderness.
  const double area = side * side, inertia = area * area / 12;
  const double torsion = 2.25 * std::pow(side / 2, 4), shear = 1 / (2 * 1.3);
  const double displacement = 2 * area + 2 * (dim - 1) * 12 * inertia;
  // A rotation: the four beams across its axis bend it; in 3D the two along it also twist it.
  const double rotation = 4 * 4 * inertia + (dim == 3 ? 2 * shear * torsion : 0);
  std::int64_t interior = 0;  // the node (2, 2[, 2])
  for (int d = 0; d < dim; ++d) interior += 2 * power(d);
  const std::vector<double> dense = testing::to_dense(a);
  for (int c = 0; c < dofs; ++c) {
    const std::int64_t r = dofs * interior + c;
    const int comp = component(r);
    const double expect = comp < 3 ? displacement : rotation;
    EXPECT_NEAR(dense[r * a.rows + r], expect, 1e-14 * expect) << "component " << comp;
  }
}

TEST_P(FrameGenerator, RigidBodyModesWithRotationsAreInTheKernelAwayFromTheClamp) {
  // Written out here, apart from amg::rigid_body_modes: a translation moves the displacements; a
  // rotation w moves a node by w x (x y z) and turns its rotation about w's axis by 1.
  const int count = dim == 3 ? 6 : 3;
  std::vector<std::vector<double>> modes(count, std::vector<double>(static_cast<std::size_t>(a.rows), 0.0));
  std::vector<std::vector<double>> without_rotation_dofs = modes;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const int c = component(r);
    const double x = xyz[3 * r], y = xyz[3 * r + 1], z = xyz[3 * r + 2];
    const double about[3][3] = {{0, -z, y}, {z, 0, -x}, {-y, x, 0}};  // w x (x y z) for w = e_x, e_y, e_z
    for (int m = 0; m < count; ++m) {
      const int axis = dim == 3 ? m - 3 : 2;  // the rotation modes' axes: x y z in 3D, z in 2D
      if (m < dim) modes[m][r] = c == m ? 1.0 : 0.0;
      else if (c < 3) modes[m][r] = without_rotation_dofs[m][r] = about[axis][c];
      else modes[m][r] = c - 3 == axis ? 1.0 : 0.0;
    }
  }
  for (int m = 0; m < count; ++m) {
    SCOPED_TRACE("mode " + std::to_string(m));
    const std::vector<double> y = multiply(a, modes[m]), y_without = multiply(a, without_rotation_dofs[m]);
    double next_to_clamp = 0, without = 0;
    for (std::int64_t r = 0; r < a.rows; ++r) {
      if (node_x(r) >= 2) {
        EXPECT_NEAR(y[r], 0.0, 1e-13 * side * side * n) << "row " << r;  // EA = side^2, the largest
        without = std::max(without, std::abs(y_without[r]));
      } else if (node_x(r) == 1) {
        next_to_clamp = std::max(next_to_clamp, std::abs(y[r]));
      }
    }
    EXPECT_GT(next_to_clamp, 1e-2 * bending);  // the dropped clamp couplings must show next to the boundary
    if (m >= dim) EXPECT_GT(without, 1e-2 * bending);  // a rotation that leaves the rotation dofs is not rigid
  }
}

// frame3d:5 and frame2d:6 are slender (the default 10); the others are stubby (1) and very
// slender (30).
INSTANTIATE_TEST_SUITE_P(ThreeAndTwoDimensions, FrameGenerator,
                         ::testing::Values("frame3d:5", "frame2d:6", "frame3d:4:1", "frame2d:5:30"));

/// Rows [0, n) through an uneven split with an empty range, concatenated.
Csr<double> concatenate_split(const gen::ProblemSpec& spec) {
  const std::int64_t n = gen::num_rows(spec);
  const std::int64_t cuts[] = {0, n / 5, n / 5, (3 * n) / 4, n};
  RowBlock whole;
  whole.global_rows = whole.global_cols = n;
  whole.row_end = n;
  for (int i = 0; i + 1 < 5; ++i) {
    const RowBlock part = generate_rows(spec, cuts[i], cuts[i + 1]);
    EXPECT_EQ(part.row_begin, cuts[i]);
    EXPECT_EQ(part.row_end, cuts[i + 1]);
    EXPECT_EQ(part.global_rows, n);
    EXPECT_EQ(part.global_cols, n);
    EXPECT_EQ(static_cast<std::int64_t>(part.row_ptr.size()), part.local_rows() + 1);
    const std::int64_t offset = whole.nnz();
    for (std::int64_t r = 1; r <= part.local_rows(); ++r) whole.row_ptr.push_back(offset + part.row_ptr[r]);
    whole.col.insert(whole.col.end(), part.col.begin(), part.col.end());
    whole.values.insert(whole.values.end(), part.values.begin(), part.values.end());
  }
  return to_csr(whole);
}

TEST(Generators, UnevenRowRangesConcatenateToTheWholeMatrix) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::string s = ":seed=" + std::to_string(seed);
  const std::vector<std::string> specs = {
      "poisson2d:1", "poisson2d:7",      "poisson3d:5",  "poisson3d27:4",   "convdiff3d:6",     "elasticity2d:1",
      "elasticity2d:7", "elasticity3d:1", "elasticity3d:4", "frame2d:1", "frame2d:5", "frame3d:1", "frame3d:3",
      "frame2d:5:1", "frame3d:3:30", "rmat:1:3" + s, "rmat:8:4" + s, "random:1:1" + s, "random:53:6" + s,
      "random:40:40" + s, "random:300:90" + s};
  for (const std::string& text : specs) {
    SCOPED_TRACE(text);
    const gen::ProblemSpec spec = parse_spec(text);
    const Csr<double> whole = gen::generate(spec);
    validate(whole);
    EXPECT_EQ(whole.rows, gen::num_rows(spec));
    EXPECT_EQ(concatenate_split(spec), whole);
  }
}

TEST(Generators, CoordinatesFollowTheNodeNumbering) {
  const gen::ProblemSpec p2 = parse_spec("poisson2d:4");
  EXPECT_EQ(gen::coordinates(p2, 6, 8), (std::vector<double>{2, 1, 0, 3, 1, 0}));
  const gen::ProblemSpec el = parse_spec("elasticity3d:3");
  // Rows 3*22 .. 3*22+2 are node 22 = (1, 1, 2); row 69 starts node 23 = (2, 1, 2).
  EXPECT_EQ(gen::coordinates(el, 66, 70), (std::vector<double>{1, 1, 2, 1, 1, 2, 1, 1, 2, 2, 1, 2}));
  const gen::ProblemSpec el2 = parse_spec("elasticity2d:3");
  // Rows 8, 9 are node 4 = (1, 1); row 10 starts node 5 = (2, 1). z is 0 on the plane.
  EXPECT_EQ(gen::coordinates(el2, 8, 11), (std::vector<double>{1, 1, 0, 1, 1, 0, 2, 1, 0}));
  EXPECT_EQ(gen::block_size(p2), 1);
  EXPECT_EQ(gen::block_size(el2), 2);
  EXPECT_EQ(gen::block_size(el), 3);
  EXPECT_EQ(gen::dimension(p2), 2);
  EXPECT_EQ(gen::dimension(el2), 2);
  EXPECT_EQ(gen::dimension(el), 3);
  EXPECT_EQ(gen::dimension(parse_spec("rmat:3:2")), 0);
  // A frame's node carries its rotations too: 6 rows a node in 3D, 3 in the plane.
  const gen::ProblemSpec f3 = parse_spec("frame3d:3"), f2 = parse_spec("frame2d:3");
  EXPECT_EQ(gen::coordinates(f3, 6 * 22 + 5, 6 * 22 + 7), (std::vector<double>{1, 1, 2, 2, 1, 2}));
  EXPECT_EQ(gen::coordinates(f2, 3 * 4 + 2, 3 * 4 + 4), (std::vector<double>{1, 1, 0, 2, 1, 0}));
  EXPECT_EQ(gen::block_size(f3), 6);
  EXPECT_EQ(gen::block_size(f2), 3);
  EXPECT_EQ(gen::dimension(f3), 3);
  EXPECT_EQ(gen::dimension(f2), 2);
  EXPECT_THROW(gen::coordinates(parse_spec("rmat:3:2"), 0, 1), InputError);
  EXPECT_THROW(gen::coordinates(p2, 0, 17), InputError);
}

TEST(Generators, SeededKindsAreReproducibleAndSeedDependent) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const std::string kind : {"rmat:7:8", "random:200:5"}) {
    SCOPED_TRACE(kind);
    const std::string a = kind + ":seed=" + std::to_string(seed), b = kind + ":seed=" + std::to_string(seed + 1);
    EXPECT_EQ(generate(a), generate(a));
    EXPECT_FALSE(generate(a) == generate(b));
    EXPECT_EQ(generate(kind), generate(kind + ":seed=1"));  // the default seed
  }
}

TEST(Generators, RmatIsSkewedAndKeepsEveryEdge) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = generate("rmat:10:8:seed=" + std::to_string(seed));
  ASSERT_EQ(a.rows, 1024);
  validate(a);
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max(longest, a.row_length(r));
  const double mean = static_cast<double>(a.nnz()) / static_cast<double>(a.rows);
  EXPECT_GT(static_cast<double>(longest), 10 * mean) << "longest " << longest << ", mean " << mean;
  // Each of the 8192 edges brings a value in [0.5, 1.5): the total bounds the edge count.
  const double total = std::accumulate(a.values.begin(), a.values.end(), 0.0);
  EXPECT_GE(total, 0.5 * 8192);
  EXPECT_LT(total, 1.5 * 8192);
  EXPECT_LT(a.nnz(), 8192);  // duplicates were merged
  for (double v : a.values) ASSERT_GE(v, 0.5);
}

TEST(Generators, RandomRowsHaveTheRequestedMeanAndValueRange) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    std::int64_t n, d;
    double tolerance;  // ~6 standard deviations of the mean row count
  };
  for (const Case c : {Case{3000, 7, 0.3}, Case{1000, 100, 2.0}}) {
    const Csr<double> a =
        generate("random:" + std::to_string(c.n) + ":" + std::to_string(c.d) + ":seed=" + std::to_string(seed));
    validate(a);
    EXPECT_NEAR(static_cast<double>(a.nnz()) / static_cast<double>(c.n), static_cast<double>(c.d), c.tolerance);
    for (double v : a.values) {
      ASSERT_GE(v, -1.0);
      ASSERT_LE(v, 1.0);
      ASSERT_NE(v, 0.0);
    }
  }
}

TEST(Generators, ParsesSpecs) {
  const gen::ProblemSpec r = parse_spec("rmat:5:4:seed=7");
  EXPECT_EQ(r.kind, "rmat");
  EXPECT_EQ(r.params, (std::vector<std::int64_t>{5, 4}));
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.text, "rmat:5:4:seed=7");
  EXPECT_EQ(parse_spec("random:9:2").seed, 1u);
  EXPECT_EQ(gen::num_rows(parse_spec("elasticity2d:4")), 32);
  EXPECT_EQ(gen::num_rows(parse_spec("elasticity3d:4")), 192);
  EXPECT_EQ(gen::num_rows(parse_spec("frame2d:4")), 48);
  EXPECT_EQ(gen::num_rows(parse_spec("frame3d:4")), 384);
  EXPECT_EQ(parse_spec("frame3d:4").params, (std::vector<std::int64_t>{4, 10}));  // the default slenderness
  EXPECT_EQ(parse_spec("frame2d:4:30").params, (std::vector<std::int64_t>{4, 30}));
  EXPECT_EQ(gen::num_rows(parse_spec("frame2d:4:30")), 48);
  EXPECT_EQ(gen::num_rows(parse_spec("rmat:5:4")), 32);
  EXPECT_EQ(gen::num_rows(parse_spec("poisson3d:2097151")), 2097151LL * 2097151 * 2097151);  // largest N
}

TEST(Generators, RejectsBadSpecsWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "unknown kind ''"},
      {"poisson4d:3", "unknown kind 'poisson4d'"},
      {"poisson3d", "takes 1 size parameter(s), got 0"},
      {"poisson3d:3:4", "takes 1 size parameter(s), got 2"},
      {"rmat:5", "takes 2 size parameter(s), got 1"},
      {"frame3d", "takes 2 size parameter(s) (the last one optional), got 0"},
      {"frame2d:4:10:2", "takes 2 size parameter(s) (the last one optional), got 3"},
      {"frame3d:4:0", "'0' is not positive"},
      {"frame2d:4:", "'' is not an integer"},
      {"poisson3d:abc", "'abc' is not an integer"},
      {"poisson3d:3x", "'3x' is not an integer"},
      {"poisson3d:", "'' is not an integer"},
      {"poisson3d:0", "'0' is not positive"},
      {"random:-4:2", "'-4' is not positive"},
      {"poisson2d:99999999999999999999", "does not fit in 64 bits"},
      {"poisson2d:3037000500", "N^2 overflows int64"},
      {"poisson3d:2097152", "N^3 overflows int64"},
      {"elasticity2d:2147483648", "2 N^2 overflows int64"},
      {"elasticity3d:1500000", "3 N^3 overflows int64"},
      {"frame3d:1500000", "6 N^3 overflows int64"},
      {"rmat:63:1", "2^S overflows int64"},
      {"rmat:40:8388608", "E * 2^S overflows int64"},
      {"random:10:11", "D <= N"},
      {"poisson3d:4:seed=3", "takes no seed"},
      {"rmat:5:4:seed=x", "seed 'x' is not"},
      {"rmat:5:4:seed=-1", "seed '-1' is not"},
  };
  for (const auto& [text, reason] : cases) {
    SCOPED_TRACE(text);
    try {
      parse_spec(text);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(reason), std::string::npos) << message;
      EXPECT_NE(message.find("accepted forms: poisson2d:N"), std::string::npos) << message;
    }
  }
  EXPECT_NO_THROW(parse_spec("poisson2d:3037000499"));
  EXPECT_NO_THROW(parse_spec("rmat:40:8388607"));
}

TEST(Generators, RejectsRowRangesOutsideTheMatrix) {
  const gen::ProblemSpec spec = parse_spec("poisson2d:3");
  EXPECT_THROW(generate_rows(spec, -1, 2), InputError);
  EXPECT_THROW(generate_rows(spec, 3, 2), InputError);
  EXPECT_THROW(generate_rows(spec, 0, 10), InputError);
  EXPECT_EQ(generate_rows(spec, 9, 9).nnz(), 0);
  gen::ProblemSpec hand_made;
  hand_made.kind = "poisson3d";  // no parameters
  EXPECT_THROW(generate_rows(hand_made, 0, 0), InputError);
}

}  // namespace
}  // namespace tessera
