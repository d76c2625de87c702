// Linear elasticity on the unit-spaced node grid, in 2D (plane strain, bilinear Q1 squares on
// n^2 nodes) or 3D (trilinear Q1 hexahedra on n^3 nodes); isotropic material E = 1, nu = 0.3;
// Dim dofs per node (dof = Dim * node + component, nodes numbered x fastest).
//
// Boundary: the x = 0 edge (2D) or face (3D) is clamped. Its dofs keep identity rows and
// columns (diagonal 1, every coupling to or from them dropped), which removes the rigid-body
// modes (3 in 2D, 6 in 3D) and leaves an SPD matrix whose unknowns there are trivially zero for
// a zero right-hand side.
//
// Pattern: a node couples with its 3^Dim - 1 neighbours through full Dim x Dim blocks (up to 18
// entries a row in 2D, 81 in 3D), the structure an FE assembler produces. Some entries inside
// those blocks cancel to zero (or to roundoff) by symmetry; they are kept, since the pattern is
// structural.
//
// Row-range assembly: a row sums the contributions of the (up to 2^Dim) elements that touch its
// node, always in increasing element order. The element matrix is exactly symmetric, so the
// entries (i, j) and (j, i) are sums of the same terms in the same order: A == A^T bitwise.
#include <algorithm>
#include <array>
#include <cmath>

#include "local/gen/kinds.hpp"

namespace tessera::gen::detail {
namespace {

/// The Q1 element of dimension Dim on the unit square or cube: local node a has the bits
/// (i, j[, k]) of a as its corner, shape function prod_d (bit_d ? x_d : 1 - x_d).
template <int Dim>
struct Q1 {
  static constexpr int kNodes = 1 << Dim, kDofs = Dim * kNodes;
  static constexpr int kShears = Dim == 3 ? 3 : 1, kStrains = Dim + kShears;  // Voigt size
  static constexpr int kNeighbours = Dim == 3 ? 27 : 9;                       // 3^Dim blocks a row
  /// The component pairs of the engineering shear strains, in Voigt order (xy[, yz, xz]).
  static constexpr std::array<std::array<int, 2>, 3> kShearPairs = {{{0, 1}, {1, 2}, {0, 2}}};
  using Strain = std::array<std::array<double, kDofs>, kStrains>;
  using Material = std::array<std::array<double, kStrains>, kStrains>;
  using Matrix = std::array<std::array<double, kDofs>, kDofs>;
};

/// Isotropic elasticity in Voigt order: lambda + 2 mu on the normal strains, mu on the shears
/// (plane strain in 2D).
template <int Dim>
typename Q1<Dim>::Material material_matrix(double young, double poisson) {
  const double lambda = young * poisson / ((1 + poisson) * (1 - 2 * poisson));
  const double mu = young / (2 * (1 + poisson));
  typename Q1<Dim>::Material d{};
  for (int i = 0; i < Dim; ++i) {
    for (int j = 0; j < Dim; ++j) d[i][j] = lambda;
    d[i][i] = lambda + 2 * mu;
  }
  for (int s = Dim; s < Q1<Dim>::kStrains; ++s) d[s][s] = mu;
  return d;
}

/// Strain-displacement matrix B (strains x dofs) at reference point `x`; the Jacobian is the
/// identity.
template <int Dim>
typename Q1<Dim>::Strain strain_matrix(const std::array<double, Dim>& x) {
  typename Q1<Dim>::Strain b{};
  for (int a = 0; a < Q1<Dim>::kNodes; ++a) {
    std::array<double, Dim> f{}, g{};  // the 1D factors and the shape function's gradient
    for (int d = 0; d < Dim; ++d) f[d] = (a >> d & 1) ? x[d] : 1 - x[d];
    for (int d = 0; d < Dim; ++d) {
      g[d] = (a >> d & 1) ? 1 : -1;
      for (int e = 0; e < Dim; ++e)
        if (e != d) g[d] *= f[e];
    }
    for (int d = 0; d < Dim; ++d) b[d][Dim * a + d] = g[d];
    for (int s = 0; s < Q1<Dim>::kShears; ++s) {
      const auto [p, q] = Q1<Dim>::kShearPairs[s];
      b[Dim + s][Dim * a + p] = g[q];
      b[Dim + s][Dim * a + q] = g[p];
    }
  }
  return b;
}

/// K_e = sum over the 2^Dim Gauss points of w B^T D B (exact for the Q1 element). Computed on
/// and above the diagonal and mirrored, so K_e is exactly symmetric.
template <int Dim>
typename Q1<Dim>::Matrix element_stiffness() {
  using E = Q1<Dim>;
  const auto d = material_matrix<Dim>(1.0, 0.3);
  const double g[2] = {0.5 - 0.5 / std::sqrt(3.0), 0.5 + 0.5 / std::sqrt(3.0)};
  const double weight = 1.0 / E::kNodes;  // Gauss weights on [0,1]^Dim
  typename E::Matrix k{};
  for (int point = 0; point < E::kNodes; ++point) {  // x fastest
    std::array<double, Dim> x{};
    for (int dim = 0; dim < Dim; ++dim) x[dim] = g[point >> dim & 1];
    const auto b = strain_matrix<Dim>(x);
    typename E::Strain db{};  // D B
    for (int r = 0; r < E::kStrains; ++r)
      for (int s = 0; s < E::kStrains; ++s)
        for (int c = 0; c < E::kDofs; ++c) db[r][c] += d[r][s] * b[s][c];
    for (int p = 0; p < E::kDofs; ++p)
      for (int q = p; q < E::kDofs; ++q) {
        double sum = 0;
        for (int r = 0; r < E::kStrains; ++r) sum += b[r][p] * db[r][q];
        k[p][q] += weight * sum;
      }
  }
  for (int p = 0; p < E::kDofs; ++p)
    for (int q = 0; q < p; ++q) k[p][q] = k[q][p];
  return k;
}

/// One dof row: the 3^Dim neighbour blocks (slot sum_d (offset_d + 1) 3^d), Dim columns each.
template <int Dim>
struct RowAccumulator {
  std::array<std::array<double, Dim>, Q1<Dim>::kNeighbours> value;
  std::array<bool, Q1<Dim>::kNeighbours> touched;
};

template <int Dim>
void assemble_row(const typename Q1<Dim>::Matrix& ke, std::int64_t n, const std::array<std::int64_t, Dim>& p,
                  int component, RowAccumulator<Dim>& acc) {
  acc.value = {};
  acc.touched = {};
  // The elements touching p are e_d in {p_d - 1, p_d} within 0..n-2; `corner`'s bits pick one
  // of the two along each axis, in increasing element order (x fastest).
  for (int corner = 0; corner < Q1<Dim>::kNodes; ++corner) {
    std::array<std::int64_t, Dim> e{};
    bool inside = true;
    for (int d = 0; d < Dim; ++d) {
      e[d] = (p[d] > 0 ? p[d] - 1 : 0) + (corner >> d & 1);
      inside = inside && e[d] <= std::min(p[d], n - 2);
    }
    if (!inside) continue;
    int a = 0;  // p's local node in element e
    for (int d = 0; d < Dim; ++d) a += static_cast<int>(p[d] - e[d]) << d;
    const auto& krow = ke[Dim * a + component];
    for (int bn = 0; bn < Q1<Dim>::kNodes; ++bn) {
      int slot = 0;
      for (int d = 0, stride = 1; d < Dim; ++d, stride *= 3)
        slot += static_cast<int>(e[d] + (bn >> d & 1) - p[d] + 1) * stride;
      acc.touched[slot] = true;
      for (int d = 0; d < Dim; ++d) acc.value[slot][d] += krow[Dim * bn + d];
    }
  }
}

template <int Dim>
RowBlock elasticity_rows(std::int64_t n, std::int64_t begin, std::int64_t end) {
  static const typename Q1<Dim>::Matrix ke = element_stiffness<Dim>();
  std::int64_t nodes = 1;
  for (int d = 0; d < Dim; ++d) nodes *= n;
  RowBlock b = start_block(Dim * nodes, begin, end, Dim * Q1<Dim>::kNeighbours);
  RowAccumulator<Dim> acc;
  for (std::int64_t row = begin; row < end; ++row) {
    const std::int64_t node = row / Dim;
    const int component = static_cast<int>(row % Dim);
    std::array<std::int64_t, Dim> p{};
    for (std::int64_t d = 0, rest = node; d < Dim; ++d, rest /= n) p[d] = rest % n;
    if (p[0] == 0) {  // clamped dof: identity row
      b.col.push_back(row);
      b.values.push_back(1.0);
    } else {
      assemble_row<Dim>(ke, n, p, component, acc);
      for (int slot = 0; slot < Q1<Dim>::kNeighbours; ++slot) {
        const int dx = slot % 3 - 1;
        if (!acc.touched[slot] || p[0] + dx == 0) continue;  // no shared element, or clamped column
        std::int64_t neighbour = node;
        for (std::int64_t d = 0, s = slot, stride = 1; d < Dim; ++d, s /= 3, stride *= n)
          neighbour += (s % 3 - 1) * stride;
        for (int d = 0; d < Dim; ++d) {
          b.col.push_back(Dim * neighbour + d);
          b.values.push_back(acc.value[slot][d]);
        }
      }
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
  }
  return b;
}

}  // namespace

RowBlock elasticity_rows(int dim, std::int64_t n, std::int64_t begin, std::int64_t end) {
  return dim == 2 ? elasticity_rows<2>(n, begin, end) : elasticity_rows<3>(n, begin, end);
}

}  // namespace tessera::gen::detail
