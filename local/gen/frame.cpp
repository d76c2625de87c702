// A frame of Euler-Bernoulli beams on the unit-spaced node grid: every grid edge is a beam of
// length 1 (E = 1, nu = 0.3) with a square section of side 1 / L, L the slenderness (the spec's
// frame3d:N:L; 10 by default). Stretching a beam costs EA = 1 / L^2 and bending it 12 EI = 1 / L^4
// per unit of end displacement, so bending is L^2 times softer: a node's ux is stiff along x (its
// beams stretch) and soft across x (they bend), uy the other way round. That is an anisotropy of
// L^2 whose direction depends on the dof (L = 1: none). The nodes carry displacements and the
// small rotations about the global axes: ux uy uz rx ry rz in 3D, ux uy rz in the plane (the dofs
// of frames, plates and shells, the problems whose rigid-body modes also turn the rotations:
// amg::NodeDofs::with_rotations). dof = dofs_per_node * node + component, nodes numbered x fastest.
//
// Boundary: the x = 0 edge or face is clamped, as in elasticity.cpp: identity rows and columns.
//
// Pattern: only the couplings a beam has (stretching, twisting, bending in its two planes), not
// full node blocks. Row-range assembly sums a row over the beams at its node in increasing beam
// order (lower node, then axis); the beam matrices are exactly symmetric, so A == A^T bitwise.
#include <array>

#include "local/gen/kinds.hpp"

namespace tessera::gen::detail {
namespace {

constexpr double kYoung = 1.0, kPoisson = 0.3;
constexpr double kShear = kYoung / (2 * (1 + kPoisson));

/// The stiffnesses of a square section of side 1 / slenderness.
struct Section {
  double area, inertia, torsion;
  explicit Section(std::int64_t slenderness) {
    const double side = 1.0 / static_cast<double>(slenderness), half = side / 2;
    area = side * side;
    inertia = side * side * side * side / 12;  // in this order: frame3d:N is bitwise what it was before L
    torsion = 2.25 * half * half * half * half;  // a square's (Roark)
  }
};

/// 12 x 12 over the 3D dofs of a beam's two nodes (ux uy uz rx ry rz of its lower node, then of
/// its upper one).
using BeamMatrix = std::array<std::array<double, 12>, 12>;

/// The beam along `axis`. In its own axes (1 along the beam, 2 and 3 the next axes in cyclic
/// order, so right-handed like x y z) the classic matrix of length 1: stretching EA on u1,
/// twisting GJ on r1, bending EI in plane 1-2 on (u2, r3) and in plane 1-3 on (u3, r2), whose
/// couplings change sign (r2 turns u3 the other way). Global dof of local dof l: component
/// (axis + l) % 3 of the displacement (l < 3) or rotation (l >= 3).
BeamMatrix beam_matrix(int axis, const Section& section) {
  BeamMatrix local{};
  const auto pair = [&](int i, int j, double stiffness) {  // the two nodes' dofs i (i + 6) and j (j + 6)
    local[i][j] += stiffness, local[i + 6][j + 6] += stiffness;
    local[i][j + 6] -= stiffness, local[i + 6][j] -= stiffness;
  };
  pair(0, 0, kYoung * section.area);     // stretching
  pair(3, 3, kShear * section.torsion);  // twisting
  const double ei = kYoung * section.inertia;
  const auto bend = [&](int u, int r, double sign) {  // the bending of displacement u and rotation r
    const int ui = u, ri = r, uj = u + 6, rj = r + 6;
    const double k[4][4] = {{12, 6 * sign, -12, 6 * sign},
                            {6 * sign, 4, -6 * sign, 2},
                            {-12, -6 * sign, 12, -6 * sign},
                            {6 * sign, 2, -6 * sign, 4}};
    const int dof[4] = {ui, ri, uj, rj};
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) local[dof[a]][dof[b]] += ei * k[a][b];
  };
  bend(1, 5, +1.0);  // u2 with r3
  bend(2, 4, -1.0);  // u3 with r2
  const auto global = [&](int l) { return (l % 6 < 3 ? 0 : 3) + (axis + l % 3) % 3 + (l >= 6 ? 6 : 0); };
  BeamMatrix k{};
  for (int a = 0; a < 12; ++a)
    for (int b = 0; b < 12; ++b) k[global(a)][global(b)] = local[a][b];
  return k;
}

/// A frame's dofs among the 6 of 3D: all of them, or ux uy rz in the plane (where a plane beam's
/// other dofs, uz rx ry, are uncoupled from these).
constexpr std::array<int, 3> kPlaneFrameDofs = {0, 1, 5};
constexpr std::array<int, 6> kSpaceFrameDofs = {0, 1, 2, 3, 4, 5};
template <int Dim>
constexpr const auto& frame_dofs() {
  if constexpr (Dim == 2)
    return kPlaneFrameDofs;
  else
    return kSpaceFrameDofs;
}

template <int Dim>
RowBlock frame_rows(std::int64_t n, std::int64_t slenderness, std::int64_t begin, std::int64_t end) {
  constexpr int kDofs = static_cast<int>(frame_dofs<Dim>().size());
  constexpr int kSlots = 2 * Dim + 1;  // the node and its neighbours, in increasing node order
  const Section section(slenderness);
  std::array<BeamMatrix, Dim> beams{};
  for (int axis = 0; axis < Dim; ++axis) beams[axis] = beam_matrix(axis, section);
  std::int64_t nodes = 1;
  std::array<std::int64_t, Dim> stride{};
  for (int d = 0; d < Dim; ++d) stride[d] = nodes, nodes *= n;
  RowBlock b = start_block(kDofs * nodes, begin, end, 4 * Dim + 2);
  for (std::int64_t row = begin; row < end; ++row) {
    const std::int64_t node = row / kDofs;
    const int component = frame_dofs<Dim>()[row % kDofs];
    std::array<std::int64_t, Dim> p{};
    for (std::int64_t d = 0, rest = node; d < Dim; ++d, rest /= n) p[d] = rest % n;
    if (p[0] == 0) {  // clamped dof: identity row
      b.col.push_back(row);
      b.values.push_back(1.0);
      b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
      continue;
    }
    // Slot Dim is the node; Dim - 1 - d and Dim + 1 + d its neighbours below and above along d.
    std::array<std::array<double, kDofs>, kSlots> value{};
    std::array<std::array<bool, kDofs>, kSlots> coupled{};
    const auto add_beam = [&](int axis, bool upper_end) {  // the beam along axis with the node at that end
      const auto& k = beams[axis][(upper_end ? 6 : 0) + component];
      for (int end_node = 0; end_node < 2; ++end_node) {
        const int slot = end_node == (upper_end ? 1 : 0) ? Dim : (upper_end ? Dim - 1 - axis : Dim + 1 + axis);
        for (int c = 0; c < kDofs; ++c) {
          const double v = k[6 * end_node + frame_dofs<Dim>()[c]];
          if (v == 0) continue;  // no coupling in this beam
          value[slot][c] += v;
          coupled[slot][c] = true;
        }
      }
    };
    // Increasing beam order: the beams below the node (lower node node - stride[axis]) by
    // decreasing axis, then the node's own beams by increasing axis.
    for (int axis = Dim - 1; axis >= 0; --axis)
      if (p[axis] > 0) add_beam(axis, true);
    for (int axis = 0; axis < Dim; ++axis)
      if (p[axis] < n - 1) add_beam(axis, false);
    for (int slot = 0; slot < kSlots; ++slot) {
      const int axis = slot < Dim ? Dim - 1 - slot : slot - Dim - 1;
      const std::int64_t neighbour = slot == Dim ? node : node + (slot < Dim ? -1 : 1) * stride[axis];
      if (slot == Dim - 1 && p[0] == 1) continue;  // the clamped node below along x
      for (int c = 0; c < kDofs; ++c)
        if (coupled[slot][c]) {
          b.col.push_back(kDofs * neighbour + c);
          b.values.push_back(value[slot][c]);
        }
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
  }
  return b;
}

}  // namespace

RowBlock frame_rows(int dim, std::int64_t n, std::int64_t slenderness, std::int64_t begin, std::int64_t end) {
  return dim == 2 ? frame_rows<2>(n, slenderness, begin, end) : frame_rows<3>(n, slenderness, begin, end);
}

}  // namespace tessera::gen::detail
