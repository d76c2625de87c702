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
// (docs/performance.md, sixty-third session). The Krylov method still iterates on A. PCTESSERA's
// -pc_tessera_separate_kinds builds the same preconditioner from A itself.
// With -resolve_scaled, A (and the Pmat) are then scaled symmetrically by a diagonal, which
// changes the values and not the pattern, and solved again twice: by the same KSP (a numeric
// re-setup, which keeps the aggregates) and by a fresh one (a full setup). For a hierarchy of
// block size 1 (the separated kinds) both must take the same iterations: a re-setup that kept
// stale values, or separated the kinds differently, would not. (With the rigid-body modes the
// node blocks' norms do not scale alike, so a fresh setup may aggregate differently.)
#include <petscksp.h>

#include <string>
#include <vector>

#include "local/gen/generators.hpp"

static const char help[] =
    "A generated frame solved by PETSc: -spec frame3d:N[:L]|frame2d:N[:L] [-use_coordinates | -pmat_separate_kinds] "
    "[-resolve_scaled]\n";

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

/// A KSP on (a, p) as the options say, with the coordinates if asked for.
PetscErrorCode create_solver(const tessera::gen::ProblemSpec& spec, const PetscInt range[2], Mat a, Mat p,
                             PetscBool use_coordinates, KSP* ksp) {
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOperators(*ksp, a, p));
  PetscCall(KSPSetFromOptions(*ksp));
  if (use_coordinates) PetscCall(set_coordinates(spec, range, *ksp));
  PetscFunctionReturn(0);
}

/// A x = 1 from x = 0; the iterations taken.
PetscErrorCode solve(KSP ksp, Mat a, PetscInt* iterations) {
  Vec x, b;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(a, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, iterations));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/// m = D m D with d_i = 2^(i % 3): still SPD, the same pattern, other values and, the tentative
/// prolongator staying the constant's or the modes', another hierarchy. Powers of two scale
/// exactly, so every scalar strength-of-connection test |a_ij| >= theta sqrt(|a_ii a_jj|) decides
/// as before: a scalar hierarchy's kept aggregates are the ones a fresh setup finds.
PetscErrorCode scale_symmetrically(Mat m) {
  Vec d;
  PetscInt begin, end;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(m, &d, nullptr));
  PetscCall(VecGetOwnershipRange(d, &begin, &end));
  for (PetscInt i = begin; i < end; ++i) PetscCall(VecSetValue(d, i, static_cast<double>(1 << (i % 3)), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(d));
  PetscCall(VecAssemblyEnd(d));
  PetscCall(MatDiagonalScale(m, d, d));
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

}  // namespace

int main(int argc, char** argv) {
  char text[64] = "frame3d:6";
  PetscBool use_coordinates = PETSC_FALSE, separate_kinds = PETSC_FALSE, resolve_scaled = PETSC_FALSE;
  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-spec", text, sizeof(text), nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-use_coordinates", &use_coordinates, nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-pmat_separate_kinds", &separate_kinds, nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-resolve_scaled", &resolve_scaled, nullptr));
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
  KSP ksp;
  PetscInt iterations = 0;
  PetscCall(assemble(rows, range, bs, [](PetscInt, PetscInt) { return true; }, &a));
  if (separate_kinds)
    PetscCall(assemble(rows, range, 1, [bs](PetscInt row, PetscInt col) { return row % bs == col % bs; }, &p));
  else
    PetscCall(PetscObjectReference(reinterpret_cast<PetscObject>(p = a)));
  PetscCall(create_solver(spec, range, a, p, use_coordinates, &ksp));
  PetscCall(solve(ksp, a, &iterations));
  if (resolve_scaled) {
    PetscInt resetup = 0, fresh = 0;
    KSP fresh_ksp;
    PetscCall(scale_symmetrically(a));
    if (p != a) PetscCall(scale_symmetrically(p));
    PetscCall(solve(ksp, a, &resetup));
    PetscCall(create_solver(spec, range, a, p, use_coordinates, &fresh_ksp));
    PetscCall(solve(fresh_ksp, a, &fresh));
    PetscCall(KSPDestroy(&fresh_ksp));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "scaled A: %" PetscInt_FMT " iterations after the numeric re-setup, %" PetscInt_FMT
                          " after a fresh setup\n",
                          resetup, fresh));
    PetscCheck(resetup == fresh, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
               "the numeric re-setup took %" PetscInt_FMT " iterations where a fresh setup took %" PetscInt_FMT,
               resetup, fresh);
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&p));
  PetscCall(MatDestroy(&a));
  PetscCall(PetscFinalize());
  return 0;
}
