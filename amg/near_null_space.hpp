#pragma once
// The near-null space B (rows x k, row-major) the tentative prolongator interpolates exactly:
// the constant vector for scalar problems, one constant per component for block systems
// (GAMG's default), the 6 rigid-body modes for 3D elasticity.
#include <array>
#include <cstdint>
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

/// k = block_size vectors: vector c is 1 on the dofs of component c, 0 elsewhere.
NearNullSpace constant_near_null_space(std::int64_t rows, int block_size = 1);

/// 3 translations and 3 rotations (as PETSc's MatNullSpaceCreateRigidBody) from the node
/// coordinates, 3 doubles per row (dof = 3*node + component, every dof of a node carrying the
/// node's coordinates, as gen::coordinates gives them). Coordinates are shifted to their
/// centroid first, which leaves the span unchanged and keeps the rotations well scaled
/// against the translations. InputError unless coords has 3*rows entries and rows % 3 == 0.
NearNullSpace rigid_body_modes(const std::vector<double>& coords, std::int64_t rows);

/// The same, shifted to a given centre. A distributed caller passes the GLOBAL centroid, so
/// every rank's rows belong to the same six global vectors (a per-rank centroid would shift
/// each rank's rotations by a different translation and break aggregates spanning ranks).
NearNullSpace rigid_body_modes(const std::vector<double>& coords, std::int64_t rows, const std::array<double, 3>& centre);

}  // namespace tessera::amg
