#pragma once
// tessera-amg's near-null space, from its options checked against A and each other. Three kinds:
//  - one constant a component (GAMG's default), for block size 1 the constant vector;
//  - the rigid-body modes of elasticity (3 in 2D, 6 in 3D), built from node coordinates: a grid
//    generator's (--gen elasticity2d:N, elasticity3d:N, frame2d:N or frame3d:N) or, for a matrix
//    read from a file, --coordinates FILE, a Matrix Market array with one row a node and two
//    columns x y or three x y z (the layout of SuiteSparse's *_coord.mtx files and of PETSc's
//    PCSetCoordinates, which GAMG builds the same modes from). A node's dofs are its
//    displacements, or (block size 3 in 2D, 6 in 3D: frames, shells) its displacements and then
//    its rotations, which the rotation modes also turn;
//  - any k vectors given whole, --near-null FILE: a Matrix Market array with A's rows and k
//    columns (what MatSetNearNullSpace hands GAMG: shells' six modes, a multiphysics block's,
//    modes of a non-standard dof ordering). Each rank reads its own rows of it.
// Without any of them an elasticity matrix read from a file gets one constant a component, which
// coarsens the rotations badly.
#include <cstdint>
#include <string>
#include <vector>

#include "amg/near_null_space.hpp"
#include "dist/communicator.hpp"
#include "drivers/common/matrix_source.hpp"
#include "local/formats/dense.hpp"

namespace tessera::driver {

/// What the command line asked for.
struct NearNullChoice {
  std::string null_space = "auto";  // auto (rigid-body where nodes have coordinates) | constant | rigid-body
  int block_size = 0;               // --block-size; 0: from --coordinates, else the generator, else 1
  std::string coordinates;          // --coordinates FILE (with --A)
  std::string vectors;              // --near-null FILE: the vectors themselves
};

class NearNullSource {
 public:
  enum class Kind { constant, rigid_body, vectors };

  /// Every rank may build it: the coordinates file holds 2 or 3 doubles a node and is read
  /// whole; of a --near-null file only the header is read here. InputError where the options
  /// contradict each other or A (`rows` rows): coordinates for a generated A, a file that is not
  /// n x 2 or n x 3, rows not a whole number of its nodes, a --block-size other than rows /
  /// nodes, --null-space constant beside coordinates, rigid-body modes without coordinates or
  /// with other than one dof a dimension a node (or, nodes that rotate, 3 in 2D and 6 in 3D);
  /// --near-null beside --coordinates or a --null-space other than auto, or not an array of A's
  /// rows.
  NearNullSource(const MatrixSource& a, const NearNullChoice& choice, std::int64_t rows);

  Kind kind() const { return kind_; }
  int block_size() const { return block_size_; }
  /// The nodes' spatial dimension (2 or 3) with rigid-body modes, else 0.
  int dimension() const { return dimension_; }
  /// With rigid-body modes: whether a node's dofs are its displacements (block size = dimension)
  /// or its displacements and rotations (block size 3 in 2D, 6 in 3D: frames, shells).
  amg::NodeDofs node_dofs() const { return node_dofs_; }
  /// What the space is, for the drivers' output: "one constant a component", "rigid-body modes of
  /// the grid's nodes, their rotations too", "the vectors of --near-null FILE", ...
  std::string describe() const;

  /// x y z of each dof's node for dofs [begin, end), 3 a dof as gen::coordinates gives them,
  /// z = 0 in 2D (the input of amg::rigid_body_modes and of GAMG's coordinates). Only for
  /// Kind::rigid_body.
  std::vector<double> dof_coordinates(std::int64_t begin, std::int64_t end) const;

  /// Rows [begin, end) of the --near-null file, row-major, its k columns. Only for Kind::vectors.
  /// Collective (the ranks read the file together: dist::read_matrix_market_dense_rows).
  DenseMatrix vectors(const dist::Communicator& comm, std::int64_t begin, std::int64_t end) const;
  const std::string& vectors_file() const { return vectors_file_; }

 private:
  MatrixSource a_;
  std::string vectors_file_;
  std::int64_t rows_ = 0;
  int block_size_ = 1;
  Kind kind_ = Kind::constant;
  int dimension_ = 0;
  amg::NodeDofs node_dofs_ = amg::NodeDofs::displacements;
  DenseMatrix nodes_;  // --coordinates: nodes x 2 or 3, as read (column-major)
};

/// A rank's rows [begin, end) of the near-null space, and what a baseline needs to build the
/// same space for itself.
struct OwnedNearNull {
  amg::NearNullSpace space;
  std::vector<double> coordinates;  // rigid-body modes: the rows' x y z, 3 a row (GAMG's coordinates)
  /// --near-null, and rigid-body modes with rotation dofs (which GAMG's MatNullSpaceCreateRigidBody
  /// does not make): the vectors orthonormalised over all ranks, for GAMG (coordinates then empty).
  DenseMatrix orthonormal;
};

/// Collective. The rigid-body modes are centred on the global centroid (one set of global
/// vectors, whatever the partition); --near-null vectors are each divided by their largest
/// magnitude (the same span, and no overflow in an aggregate's QR whatever their size), checked
/// for linear independence over all ranks (InputError naming the first vector that is zero or,
/// to 1e-5 of its norm, a combination of those before it: it would only add coarse unknowns that
/// interpolate nothing) and, for GAMG, orthonormalised (MatNullSpaceCreate wants them so).
OwnedNearNull owned_near_null(const dist::Communicator& comm, const NearNullSource& source, std::int64_t begin,
                              std::int64_t end);

}  // namespace tessera::driver
