#pragma once
// The near-null space the tests give a generated problem: the rigid-body modes of the
// elasticity and frame kinds (3 in 2D, 6 in 3D, from the grid's coordinates; a frame's turn its
// nodes' rotations too), the constant for the scalar ones, as tessera-amg chooses by default.
#include "amg/near_null_space.hpp"
#include "local/gen/generators.hpp"

namespace tessera::testing {

inline amg::NearNullSpace generated_near_null_space(const gen::ProblemSpec& spec) {
  const std::int64_t rows = gen::num_rows(spec);
  if (gen::block_size(spec) == 1) return amg::constant_near_null_space(rows, 1);
  const int dim = gen::dimension(spec);
  return amg::rigid_body_modes(gen::coordinates(spec, 0, rows), rows, dim,
                               gen::block_size(spec) == dim ? amg::NodeDofs::displacements
                                                            : amg::NodeDofs::with_rotations);
}

}  // namespace tessera::testing
