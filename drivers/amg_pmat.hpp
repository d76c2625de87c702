#pragma once
// tessera-amg --pmat: the matrix the hierarchy is built from (PETSc's Pmat), A or A without the
// couplings between its kinds of dof (amg/separate_kinds.hpp), what the serial and the
// distributed paths both print and check about it.
#include <cstdio>
#include <string>

#include "amg/hierarchy_stats.hpp"
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

/// The hierarchy's entries over A's. The operator complexity counts over level 0, which with
/// --pmat separate-kinds is the separated matrix (about half of A's entries on a 3D frame); this
/// counts over A, as a baseline built from A does. Printed, and the JSON's
/// "operator_complexity_over_a".
inline double operator_complexity_over_a(const amg::HierarchyStats& s, long long a_nnz) {
  double entries = 0;
  for (const amg::LevelStats& level : s.levels) entries += double(level.nnz);
  const double c = a_nnz > 0 ? entries / double(a_nnz) : 0.0;
  std::printf("operator complexity over A's %lld entries: %.4f (the hierarchy's, its separated level 0 included; "
              "the Krylov method's A comes besides)\n",
              a_nnz, c);
  return c;
}

/// What the --compare row's configuration adds with --pmat separate-kinds.
inline constexpr const char* kSeparateKindsConfiguration = ", built from A without its cross-kind couplings";

}  // namespace tessera::driver
