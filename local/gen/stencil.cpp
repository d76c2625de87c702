// Finite-difference Laplacians on N^d grids (5-, 7- and 27-point), Dirichlet boundary:
// neighbours outside the grid are dropped, so each matrix is SPD (irreducibly diagonally
// dominant). Nodes are numbered lexicographically, x fastest. The 7-point one optionally adds
// first-order upwind convection along +x (convdiff3d): non-symmetric, still an M-matrix.
#include <vector>

#include "local/gen/kinds.hpp"

namespace tessera::gen::detail {
namespace {

struct Offset {
  int dx, dy, dz;
  double value;
};

/// The stencil's offsets in (dz, dy, dx) lexicographic order, which is increasing column
/// order for x-fastest numbering: rows come out sorted without a sort.
std::vector<Offset> stencil_offsets(int dim, int points, double convection) {
  std::vector<Offset> offsets;
  const int zr = dim == 3 ? 1 : 0;
  for (int dz = -zr; dz <= zr; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int distance = (dx != 0) + (dy != 0) + (dz != 0);
        const bool centre = distance == 0;
        if (points != 27 && distance > 1) continue;  // 5- and 7-point: axis neighbours only
        // Upwind convection c d/dx with unit spacing: c (u_i - u_{i-1}), so the centre gains c
        // and the west neighbour loses c.
        const double value = centre ? static_cast<double>(points - 1) + convection : -1.0 - (dx == -1 ? convection : 0.0);
        offsets.push_back({dx, dy, dz, value});
      }
  return offsets;
}

}  // namespace

RowBlock stencil_rows(int dim, int points, std::int64_t n, std::int64_t begin, std::int64_t end, double convection) {
  const std::int64_t plane = n * n, rows = dim == 3 ? plane * n : plane;
  const std::vector<Offset> offsets = stencil_offsets(dim, points, convection);
  RowBlock b = start_block(rows, begin, end, points);
  const auto inside = [n](std::int64_t v) { return 0 <= v && v < n; };
  for (std::int64_t row = begin; row < end; ++row) {
    const std::int64_t x = row % n, y = (row / n) % n, z = row / plane;
    for (const Offset& o : offsets) {
      if (!inside(x + o.dx) || !inside(y + o.dy) || !inside(z + o.dz)) continue;
      b.col.push_back(row + o.dx + o.dy * n + o.dz * plane);
      b.values.push_back(o.value);
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
  }
  return b;
}

}  // namespace tessera::gen::detail
