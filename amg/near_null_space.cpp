#include "amg/near_null_space.hpp"

#include <cmath>

#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera::amg {

std::string near_null_space_problem(const NearNullSpace& b, std::int64_t rows, std::int64_t first_row) {
  const DenseMatrix& v = b.vectors;
  if (v.rows != rows || v.layout != Layout::row_major)
    return detail::concat("AMG: the near-null space is ", v.rows, " x ", v.cols,
                          v.layout == Layout::row_major ? "" : " column-major", ", the operator has ", rows,
                          " rows (", rows, " x k row-major expected)");
  if (v.cols < 1) return "AMG: the near-null space needs at least one vector";
  if (b.constant) return "";
  return host::first_failure(rows, [&](std::int64_t begin, std::int64_t end) -> std::string {
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t j = 0; j < v.cols; ++j)
        if (!std::isfinite(v.at(i, j)))
          return detail::concat("AMG: near-null vector ", j, " has a non-finite value ", v.at(i, j), " at row ",
                                first_row + i);
    return "";
  });
}

NearNullSpace constant_near_null_space(std::int64_t rows, int block_size) {
  TESSERA_REQUIRE_INPUT(block_size >= 1 && rows % block_size == 0, "AMG: block size ", block_size,
                        " does not divide the ", rows, " rows");
  NearNullSpace b{DenseMatrix(rows, block_size, Layout::row_major, 0.0), block_size, true};
  for (std::int64_t i = 0; i < rows; ++i) b.vectors.at(i, i % block_size) = 1.0;
  return b;
}

NearNullSpace rigid_body_modes(const std::vector<double>& coords, std::int64_t rows, int dim, NodeDofs dofs) {
  std::array<double, 3> centre = {0, 0, 0};
  if (static_cast<std::int64_t>(coords.size()) != 3 * rows)
    return rigid_body_modes(coords, rows, dim, centre, dofs);  // reports it
  for (std::int64_t i = 0; i < rows; ++i)
    for (int d = 0; d < 3; ++d) centre[d] += coords[3 * i + d] / static_cast<double>(rows ? rows : 1);
  return rigid_body_modes(coords, rows, dim, centre, dofs);
}

NearNullSpace rigid_body_modes(const std::vector<double>& coords, std::int64_t rows, int dim,
                               const std::array<double, 3>& centre, NodeDofs dofs) {
  TESSERA_REQUIRE_INPUT(dim == 2 || dim == 3, "rigid-body modes are made in 2 or 3 dimensions, not ", dim);
  const int per_node = node_dof_count(dim, dofs);
  TESSERA_REQUIRE_INPUT(rows % per_node == 0, "rigid-body modes in ", dim, "D need ", per_node, " dofs per node (",
                        dofs == NodeDofs::displacements ? "the displacements" : "the displacements and rotations",
                        "), got ", rows, " rows");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(coords.size()) == 3 * rows, "rigid-body modes: ", coords.size(),
                        " coordinates given, expected 3 per row (", 3 * rows, ")");
  NearNullSpace b{DenseMatrix(rows, rigid_body_mode_count(dim), Layout::row_major, 0.0), per_node};
  // The modes' columns: the dim translations, then the rotations about z (the only one in 2D),
  // x and y; a rotation dof's column is the rotation about its axis.
  const int rotation_column[3] = {4, 5, dim};  // of the rotation about x, y, z
  for (std::int64_t i = 0; i < rows; ++i) {
    const int c = static_cast<int>(i % per_node);
    if (c >= dim) {  // a rotation dof: about x, y, z in 3D; about z in 2D
      b.vectors.at(i, rotation_column[dim == 3 ? c - 3 : 2]) = 1.0;
      continue;
    }
    const double x = coords[3 * i] - centre[0], y = coords[3 * i + 1] - centre[1], z = coords[3 * i + 2] - centre[2];
    b.vectors.at(i, c) = 1.0;  // translation along c
    // Displacement component c of the rotations about z, x, y: (-y, x, 0), (0, -z, y), (z, 0, -x).
    const double rot_z[3] = {-y, x, 0}, rot_x[3] = {0, -z, y}, rot_y[3] = {z, 0, -x};
    b.vectors.at(i, dim) = rot_z[c];
    if (dim == 2) continue;
    b.vectors.at(i, 4) = rot_x[c];
    b.vectors.at(i, 5) = rot_y[c];
  }
  return b;
}

}  // namespace tessera::amg
