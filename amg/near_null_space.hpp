#pragma once
// The near-null space B (rows x k, row-major) the tentative prolongator interpolates exactly:
// the constant vector for scalar problems, one constant per component for block systems
// (GAMG's default), the rigid-body modes of elasticity (3 in 2D, 6 in 3D; of solids, and of
// frames and shells, whose nodes also rotate).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "local/formats/dense.hpp"

namespace tessera::amg {

struct NearNullSpace {
  DenseMatrix vectors;  // rows x k, row-major
  int block_size = 1;   // dofs per node of the fine level
  /// Made by constant_near_null_space (a device setup then makes the vectors on the device
  /// instead of uploading them). Clear it when changing `vectors` or `block_size` of such a
  /// space, or the device setup builds the constant vectors instead of yours.
  bool constant = false;
};

/// "" when `b` can be the near-null space of an operator with `rows` rows (a rank's own rows in
/// a distributed setup, the first of them global row `first_row`): rows x k, row-major, k >= 1,
/// every value finite. Otherwise what is wrong, naming the first non-finite value's global row
/// and vector: a NaN there would reach every coarse level through P. Every setup checks it (a
/// space made by constant_near_null_space is finite by construction and is not scanned).
std::string near_null_space_problem(const NearNullSpace& b, std::int64_t rows, std::int64_t first_row = 0);

/// k = block_size vectors: vector c is 1 on the dofs of component c, 0 elsewhere.
NearNullSpace constant_near_null_space(std::int64_t rows, int block_size = 1);

/// What a node's dofs are: its displacements (a solid: dim a node), or its displacements and then
/// its rotations (frames, plates and shells: ux uy uz rx ry rz in 3D, ux uy rz in 2D, the small
/// rotations about the global axes; what GAMG's PCSetCoordinates takes for a block size of
/// rigid_body_mode_count(dim)).
enum class NodeDofs { displacements, with_rotations };

/// How many rigid-body modes `dim` dimensions have: 3 in 2D, 6 in 3D.
inline int rigid_body_mode_count(int dim) { return dim * (dim + 1) / 2; }

/// Dofs a node: dim, or rigid_body_mode_count(dim) with the rotations.
inline int node_dof_count(int dim, NodeDofs dofs) {
  return dofs == NodeDofs::displacements ? dim : rigid_body_mode_count(dim);
}

/// The rigid-body modes of elasticity in `dim` = 2 or 3 dimensions (as PETSc's
/// MatNullSpaceCreateRigidBody) from the node coordinates: in 3D 3 translations and 3 rotations,
/// in 2D 2 translations and the rotation in the plane. A rotation w moves a node at x by w x x;
/// with rotation dofs it also turns them by w (1 on the rotation about its axis). `coords` holds
/// 3 doubles per row (dof = node_dof_count * node + component, every dof of a node carrying the
/// node's x y z, as gen::coordinates gives them; z is not read in 2D). Coordinates are shifted to
/// their centroid first, which leaves the span unchanged and keeps the rotations well scaled
/// against the translations. InputError unless dim is 2 or 3, coords has 3*rows entries and rows
/// are whole nodes.
NearNullSpace rigid_body_modes(const std::vector<double>& coords, std::int64_t rows, int dim,
                               NodeDofs dofs = NodeDofs::displacements);

/// The same, shifted to a given centre. A distributed caller passes the GLOBAL centroid, so
/// every rank's rows belong to the same global vectors (a per-rank centroid would shift each
/// rank's rotations by a different translation and break aggregates spanning ranks).
NearNullSpace rigid_body_modes(const std::vector<double>& coords, std::int64_t rows, int dim,
                               const std::array<double, 3>& centre, NodeDofs dofs = NodeDofs::displacements);

}  // namespace tessera::amg
