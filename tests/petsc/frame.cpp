// A PETSc application with nodes that rotate, as a shell or frame code would be: Tessera's
// generated frame (tessera::gen, -spec frame3d:N or frame2d:N: beams along the grid edges, 6 dofs
// a node in 3D, ux uy uz rx ry rz, 3 in the plane) assembled into an AIJ matrix of that block
// size, each rank its whole nodes, and solved once with b = 1 by whatever -ksp_type and -pc_type
// say. With -use_coordinates the nodes' x y (z) go to PCSetCoordinates, GAMG's interface for the
// rigid-body modes, which GAMG and PCTESSERA both read with the rotations when the block size is
// 6 (3 in 2D). The matrix takes -mat_type (MatSetFromOptions), so Tessera's matrix type runs it too.
#include <petscksp.h>

#include <string>
#include <vector>

#include "local/gen/generators.hpp"

static const char help[] = "A generated frame solved by PETSc: -spec frame3d:N[:L]|frame2d:N[:L] [-use_coordinates]\n";

namespace {

/// The rank's rows as an AIJ matrix of the frame's block size; its first and last row in `range`.
PetscErrorCode assemble(const tessera::gen::ProblemSpec& spec, Mat* a, PetscInt range[2]) {
  PetscFunctionBeginUser;
  const PetscInt bs = tessera::gen::block_size(spec), nodes = tessera::gen::num_rows(spec) / bs;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  range[0] = bs * (nodes * rank / size);  // whole nodes a rank
  range[1] = bs * (nodes * (rank + 1) / size);
  const tessera::RowBlock rows = tessera::gen::generate_rows(spec, range[0], range[1]);
  PetscCall(MatCreate(PETSC_COMM_WORLD, a));
  PetscCall(MatSetSizes(*a, range[1] - range[0], range[1] - range[0], PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetBlockSize(*a, bs));
  PetscCall(MatSetFromOptions(*a));
  std::vector<PetscInt> diagonal(rows.local_rows(), 0), off_diagonal(rows.local_rows(), 0);  // preallocation
  for (PetscInt i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
      ++(range[0] <= rows.col[k] && rows.col[k] < range[1] ? diagonal : off_diagonal)[i];
  PetscCall(MatSeqAIJSetPreallocation(*a, 0, diagonal.data()));  // whichever the type is; the other does nothing
  PetscCall(MatMPIAIJSetPreallocation(*a, 0, diagonal.data(), 0, off_diagonal.data()));
  for (PetscInt i = 0; i < rows.local_rows(); ++i) {
    const PetscInt row = range[0] + i, first = rows.row_ptr[i], count = rows.row_ptr[i + 1] - first;
    const std::vector<PetscInt> cols(rows.col.begin() + first, rows.col.begin() + first + count);
    PetscCall(MatSetValues(*a, 1, &row, count, cols.data(), rows.values.data() + first, INSERT_VALUES));
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
  PetscBool use_coordinates = PETSC_FALSE;
  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-spec", text, sizeof(text), nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-use_coordinates", &use_coordinates, nullptr));
  tessera::gen::ProblemSpec spec;
  try {
    spec = tessera::gen::parse_spec(text);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s", e.what());
  }
  Mat a;
  Vec x, b;
  KSP ksp;
  PetscInt range[2];
  PetscCall(assemble(spec, &a, range));
  PetscCall(MatCreateVecs(a, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, a, a));
  PetscCall(KSPSetFromOptions(ksp));
  if (use_coordinates) PetscCall(set_coordinates(spec, range, ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&a));
  PetscCall(PetscFinalize());
  return 0;
}
