#pragma once
// tessera-amg's near-null space options, checked against A and each other: the dofs per node,
// and whether the space is the rigid-body modes of elasticity (3 in 2D, 6 in 3D), which are
// built from node coordinates. Those come from a grid generator (--gen elasticity2d:N or
// elasticity3d:N) or, for a matrix read from a file, from --coordinates FILE: a Matrix Market
// array with one row a node and two columns x y or three x y z (the layout of SuiteSparse's
// *_coord.mtx files and of PETSc's PCSetCoordinates, which GAMG builds the same modes from).
// Without them an elasticity matrix read from a file gets one constant a component, which
// coarsens the rotations badly.
#include <cstdint>
#include <string>
#include <vector>

#include "drivers/common/matrix_source.hpp"
#include "local/formats/dense.hpp"

namespace tessera::driver {

/// What the command line asked for.
struct NearNullChoice {
  std::string null_space = "auto";  // auto (rigid-body where nodes have coordinates) | constant | rigid-body
  int block_size = 0;               // --block-size; 0: from --coordinates, else the generator, else 1
  std::string coordinates;          // --coordinates FILE (with --A)
};

class NodeGeometry {
 public:
  /// Every rank may build it: the coordinates file holds 2 or 3 doubles a node and is read
  /// whole. InputError where the options contradict each other or A (`rows` rows): coordinates
  /// for a generated A, a file that is not n x 2 or n x 3, rows not a whole number of its
  /// nodes, a --block-size other than rows / nodes, --null-space constant beside coordinates,
  /// rigid-body modes without coordinates or with other than one dof a dimension a node.
  NodeGeometry(const MatrixSource& a, const NearNullChoice& choice, std::int64_t rows);

  int block_size() const { return block_size_; }
  bool rigid_body() const { return rigid_body_; }
  /// The nodes' spatial dimension (2 or 3; the block size when rigid_body()), 0 without them.
  int dimension() const { return dimension_; }

  /// x y z of each dof's node for dofs [begin, end), 3 a dof as gen::coordinates gives them,
  /// z = 0 in 2D (the input of amg::rigid_body_modes and of GAMG's coordinates). Only when
  /// rigid_body().
  std::vector<double> dof_coordinates(std::int64_t begin, std::int64_t end) const;

 private:
  MatrixSource a_;
  std::int64_t rows_ = 0;
  int block_size_ = 1;
  bool rigid_body_ = false;
  int dimension_ = 0;
  DenseMatrix nodes_;  // --coordinates: nodes x 2 or 3, as read (column-major)
};

}  // namespace tessera::driver
