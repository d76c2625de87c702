#pragma once
// tessera-amg --pmat: the matrix the hierarchy is built from (PETSc's Pmat), A or A without the
// couplings between its kinds of dof (amg/separate_kinds.hpp), what the serial and the
// distributed paths both print and check about it.
#include <string>

#include "local/core/error.hpp"

namespace tessera::driver {

/// --pmat separate-kinds needs kinds to separate: `block_size` dofs a node, more than one.
inline void require_kinds_to_separate(int block_size) {
  TESSERA_REQUIRE_INPUT(block_size > 1, "--pmat separate-kinds: A has one kind of dof (block size 1); give "
                        "--block-size, or generate a problem whose nodes have several dofs");
}

/// The line printed under "A:" with --pmat separate-kinds.
inline std::string separate_kinds_line(int kinds, long long pmat_nnz) {
  return "preconditioner built from A without the couplings between its " + std::to_string(kinds) +
         " kinds of dof (" + std::to_string(pmat_nnz) + " nnz; block size 1, the constant); the Krylov method "
         "iterates on A";
}

/// What the --compare row's configuration adds with --pmat separate-kinds.
inline constexpr const char* kSeparateKindsConfiguration = ", built from A without its cross-kind couplings";

}  // namespace tessera::driver
