// A PETSc application with nodes that rotate, as a shell or frame code would be: Tessera's
// generated frame (tessera::gen, -spec frame3d:N or frame2d:N: beams along the grid edges, 6 dofs
// a node in 3D, ux uy uz rx ry rz, 3 in the plane) assembled into an AIJ matrix of that block
// size, each rank its whole nodes, and solved once with b = 1 by whatever -ksp_type and -pc_type
// say. With -use_coordinates the nodes' x y (z) go to PCSetCoordinates, GAMG's interface for the
// rigid-body modes, which GAMG and PCTESSERA both read with the rotations when the block size is
// 6 (3 in 2D). The matrix takes -mat_type (MatSetFromOptions), so Tessera's matrix type runs it too.
// With -pmat_separate_kinds the preconditioner is built from a second matrix, A without the
// couplings between different kinds of dof (ux with uy, a displacement with a rotation), of block
// size 1 ("separate displacement components"): a scalar AMG of it coarsens each kind by its own
// couplings, which follows a slender frame's anisotropy where aggregates of whole nodes cannot
// (docs/performance.md, sixty-third session). The Krylov method still iterates on A.
#include <petscksp.h>

#include <string>
#include <vector>

#include "local/gen/generators.hpp"

static const char help[] =
    "A generated frame solved by PETSc: -spec frame3d:N[:L]|frame2d:N[:L] [-use_coordinates | -pmat_separate_kinds]\n";

namespace {

/// The rank's rows [range[0], range[1]) (whole nodes) as an AIJ matrix of block size `bs`, the
/// entries `keep(row, col)` accepts.
template <class Keep>
PetscErrorCode assemble(const tessera::RowBlock& rows, const PetscInt range[2], PetscInt bs, Keep&& keep, Mat* a) {
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, a));
  PetscCall(MatSetSizes(*a, range[1] - range[0], range[1] - range[0], PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetBlockSize(*a, bs));
  PetscCall(MatSetFromOptions(*a));
  std::vector<PetscInt> diagonal(rows.local_rows(), 0), off_diagonal(rows.local_rows(), 0);  // preallocation
  std::vector<std::vector<PetscInt>> cols(rows.local_rows());
  std::vector<std::vector<PetscScalar>> values(rows.local_rows());
  for (PetscInt i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
      if (!keep(range[0] + i, rows.col[k])) continue;
      cols[i].push_back(rows.col[k]);
      values[i].push_back(rows.values[k]);
      ++(range[0] <= rows.col[k] && rows.col[k] < range[1] ? diagonal : off_diagonal)[i];
    }
  PetscCall(MatSeqAIJSetPreallocation(*a, 0, diagonal.data()));  // whichever the type is; the other does nothing
  PetscCall(MatMPIAIJSetPreallocation(*a, 0, diagonal.data(), 0, off_diagonal.data()));
  for (PetscInt i = 0; i < rows.local_rows(); ++i) {
    const PetscInt row = range[0] + i, count = static_cast<PetscInt>(cols[i].size());
    PetscCall(MatSetValues(*a, 1, &row, count, cols[i].data(), values[i].data(), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*a, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/// PCSetCoordinates with the rank's nodes: dim numbers each.
PetscErrorCode set_coordinates(const tessera::gen::ProblemSpec& spec, const PetscInt range[2], KSP ksp) {
  PetscFunctionBeginUser;
  const int bs = tessera::gen::block_size(spec), dim = tessera::gen::dimension(spec);
  const std::vector<double> xyz = tessera::gen::coordinates(spec, range[0], range[1]);  // 3 a row
  std::vector<PetscReal> nodes;
  for (PetscInt row = 0; row < range[1] - range[0]; row += bs)
    for (int d = 0; d < dim; ++d) nodes.push_back(xyz[3 * row + d]);
  PC pc;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetCoordinates(pc, dim, (range[1] - range[0]) / bs, nodes.data()));
  PetscFunctionReturn(0);
}

}  // namespace

int main(int argc, char** argv) {
  char text[64] = "frame3d:6";
  PetscBool use_coordinates = PETSC_FALSE, separate_kinds = PETSC_FALSE;
  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-spec", text, sizeof(text), nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-use_coordinates", &use_coordinates, nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-pmat_separate_kinds", &separate_kinds, nullptr));
  if (use_coordinates && separate_kinds)  // the coordinates describe nodes of the block size, which P has not
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-use_coordinates and -pmat_separate_kinds exclude each other");
  tessera::gen::ProblemSpec spec;
  try {
    spec = tessera::gen::parse_spec(text);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s", e.what());
  }
  const PetscInt bs = tessera::gen::block_size(spec), nodes = tessera::gen::num_rows(spec) / bs;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  const PetscInt range[2] = {bs * (nodes * rank / size), bs * (nodes * (rank + 1) / size)};  // whole nodes a rank
  const tessera::RowBlock rows = tessera::gen::generate_rows(spec, range[0], range[1]);
  Mat a, p;
  Vec x, b;
  KSP ksp;
  PetscCall(assemble(rows, range, bs, [](PetscInt, PetscInt) { return true; }, &a));
  if (separate_kinds)
    PetscCall(assemble(rows, range, 1, [bs](PetscInt row, PetscInt col) { return row % bs == col % bs; }, &p));
  else
    PetscCall(PetscObjectReference(reinterpret_cast<PetscObject>(p = a)));
  PetscCall(MatCreateVecs(a, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, a, p));
  PetscCall(KSPSetFromOptions(ksp));
  if (use_coordinates) PetscCall(set_coordinates(spec, range, ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&p));
  PetscCall(MatDestroy(&a));
  PetscCall(PetscFinalize());
  return 0;
}
