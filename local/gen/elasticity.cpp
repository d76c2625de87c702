// 3D linear elasticity: trilinear (Q1) hexahedra on the unit-spaced n^3 node grid, so the
// mesh has (n-1)^3 unit cubes; isotropic material E = 1, nu = 0.3; 3 dofs per node
// (dof = 3 * node + component, nodes numbered x fastest).
//
// Boundary: the x = 0 face is clamped. Its dofs keep identity rows and columns (diagonal 1,
// every coupling to or from them dropped), which removes the six rigid-body modes and leaves
// an SPD matrix whose unknowns on that face are trivially zero for a zero right-hand side.
//
// Pattern: a node couples with its 26 neighbours through full 3x3 blocks (up to 81 entries
// per row), the structure an FE assembler produces. Some entries inside those blocks cancel
// to zero (or to roundoff) by symmetry; they are kept, since the pattern is structural.
//
// Row-range assembly: a row sums the contributions of the (up to 8) elements that touch its
// node, always in increasing element order. The element matrix is exactly symmetric, so the
// entries (i, j) and (j, i) are sums of the same terms in the same order: A == A^T bitwise.
#include <array>
#include <cmath>

#include "local/gen/kinds.hpp"

namespace tessera::gen::detail {
namespace {

constexpr int kNodes = 8, kDofs = 24;
using ElementMatrix = std::array<std::array<double, kDofs>, kDofs>;

/// Isotropic elasticity in Voigt order (xx, yy, zz, xy, yz, xz), engineering shear strains.
std::array<std::array<double, 6>, 6> material_matrix(double young, double poisson) {
  const double lambda = young * poisson / ((1 + poisson) * (1 - 2 * poisson));
  const double mu = young / (2 * (1 + poisson));
  std::array<std::array<double, 6>, 6> d{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) d[i][j] = lambda;
    d[i][i] = lambda + 2 * mu;
    d[i + 3][i + 3] = mu;
  }
  return d;
}

/// Strain-displacement matrix B (6 x 24) of the unit cube at reference point (x, y, z) in
/// [0,1]^3. Local node a = i + 2j + 4k sits at (i, j, k); the Jacobian is the identity.
std::array<std::array<double, kDofs>, 6> strain_matrix(double x, double y, double z) {
  std::array<std::array<double, kDofs>, 6> b{};
  for (int a = 0; a < kNodes; ++a) {
    const int i = a & 1, j = (a >> 1) & 1, k = (a >> 2) & 1;
    const double fx = i ? x : 1 - x, fy = j ? y : 1 - y, fz = k ? z : 1 - z;
    const double gx = (i ? 1 : -1) * fy * fz, gy = (j ? 1 : -1) * fx * fz, gz = (k ? 1 : -1) * fx * fy;
    const int u = 3 * a, v = u + 1, w = u + 2;
    b[0][u] = gx;
    b[1][v] = gy;
    b[2][w] = gz;
    b[3][u] = gy, b[3][v] = gx;
    b[4][v] = gz, b[4][w] = gy;
    b[5][u] = gz, b[5][w] = gx;
  }
  return b;
}

/// K_e = sum over the 2x2x2 Gauss points of w B^T D B (exact for the trilinear element).
/// Computed on and above the diagonal and mirrored, so K_e is exactly symmetric.
ElementMatrix element_stiffness() {
  const auto d = material_matrix(1.0, 0.3);
  const double g[2] = {0.5 - 0.5 / std::sqrt(3.0), 0.5 + 0.5 / std::sqrt(3.0)};
  const double weight = 1.0 / 8.0;  // Gauss weights on [0,1]^3
  ElementMatrix k{};
  for (double gz : g)
    for (double gy : g)
      for (double gx : g) {
        const auto b = strain_matrix(gx, gy, gz);
        std::array<std::array<double, kDofs>, 6> db{};  // D B
        for (int r = 0; r < 6; ++r)
          for (int s = 0; s < 6; ++s)
            for (int c = 0; c < kDofs; ++c) db[r][c] += d[r][s] * b[s][c];
        for (int p = 0; p < kDofs; ++p)
          for (int q = p; q < kDofs; ++q) {
            double sum = 0;
            for (int r = 0; r < 6; ++r) sum += b[r][p] * db[r][q];
            k[p][q] += weight * sum;
          }
      }
  for (int p = 0; p < kDofs; ++p)
    for (int q = 0; q < p; ++q) k[p][q] = k[q][p];
  return k;
}

struct Node {
  std::int64_t x, y, z;
};

/// One dof row: the 27 neighbour blocks (index (dx+1) + 3(dy+1) + 9(dz+1)), 3 columns each.
struct RowAccumulator {
  std::array<std::array<double, 3>, 27> value;
  std::array<bool, 27> touched;
};

void assemble_row(const ElementMatrix& ke, std::int64_t n, Node p, int component, RowAccumulator& acc) {
  acc.value = {};
  acc.touched = {};
  const auto first = [](std::int64_t v) { return v > 0 ? v - 1 : 0; };
  const auto last = [n](std::int64_t v) { return v < n - 1 ? v : n - 2; };  // elements are 0..n-2
  for (std::int64_t ez = first(p.z); ez <= last(p.z); ++ez)
    for (std::int64_t ey = first(p.y); ey <= last(p.y); ++ey)
      for (std::int64_t ex = first(p.x); ex <= last(p.x); ++ex) {
        const int a = static_cast<int>((p.x - ex) + 2 * (p.y - ey) + 4 * (p.z - ez));
        const auto& krow = ke[3 * a + component];
        for (int bn = 0; bn < kNodes; ++bn) {
          const int i = bn & 1, j = (bn >> 1) & 1, k = (bn >> 2) & 1;
          const int slot = static_cast<int>((ex + i - p.x + 1) + 3 * (ey + j - p.y + 1) + 9 * (ez + k - p.z + 1));
          acc.touched[slot] = true;
          for (int d = 0; d < 3; ++d) acc.value[slot][d] += krow[3 * bn + d];
        }
      }
}

}  // namespace

RowBlock elasticity_rows(std::int64_t n, std::int64_t begin, std::int64_t end) {
  static const ElementMatrix ke = element_stiffness();
  const std::int64_t plane = n * n;
  RowBlock b = start_block(3 * plane * n, begin, end, 81);
  RowAccumulator acc;
  for (std::int64_t row = begin; row < end; ++row) {
    const std::int64_t node = row / 3;
    const int component = static_cast<int>(row % 3);
    const Node p{node % n, (node / n) % n, node / plane};
    if (p.x == 0) {  // clamped dof: identity row
      b.col.push_back(row);
      b.values.push_back(1.0);
    } else {
      assemble_row(ke, n, p, component, acc);
      for (int slot = 0; slot < 27; ++slot) {
        const int dx = slot % 3 - 1, dy = (slot / 3) % 3 - 1, dz = slot / 9 - 1;
        if (!acc.touched[slot] || p.x + dx == 0) continue;  // no shared element, or clamped column
        const std::int64_t neighbour = node + dx + dy * n + dz * plane;
        for (int d = 0; d < 3; ++d) {
          b.col.push_back(3 * neighbour + d);
          b.values.push_back(acc.value[slot][d]);
        }
      }
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
  }
  return b;
}

}  // namespace tessera::gen::detail
