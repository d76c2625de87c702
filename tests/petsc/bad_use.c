/* PCTESSERA misused, one case per run (-case NAME), each expected to end either in a correct
   solution (checked against a known x*) or in a PETSc error naming the problem:

     ok          SPD tridiagonal AIJ, solved, then solved again after MatScale (numeric re-setup)
     resetups    four solves, the diagonal shifted before each of the last three: three numeric
                 re-setups with P changing (with -pc_tessera_resetup_transfer device and the gpu
                 backend, the last two recompute P, R and A_c on the GPUs)
     nonsquare   an n x (n+3) AIJ operator                  -> "PCTESSERA needs a square operator"
     dense       MATDENSE operator                          -> "PCTESSERA needs an AIJ operator"
     baij        MATBAIJ operator                           -> "PCTESSERA needs an AIJ operator"
     pattern     new nonzeros inserted between two solves (MAT_NEW_NONZERO_ALLOCATION_ERR off):
                 PETSc's nonzero state moves, so PCSetUp is told DIFFERENT_NONZERO_PATTERN and
                 PCTESSERA must rebuild (-ksp_view: "2 full, 0 numeric") and solve correctly
     zerorows    rows emptied by MatZeroRows (pattern shrinks) between two solves: whatever
                 PETSc tells the PC, the second solution must be right
     hidden      a new nonzero in row 0 only (one rank) whose nonzero state is then wound back,
                 as a matrix implementation that forgets to bump it would leave it: PCSetUp
                 says SAME_NONZERO_PATTERN, and PCTESSERA must notice the pattern change on
                 every rank -> "nonzero pattern changed but PCSetUp was told SAME_NONZERO_PATTERN"
     hidden_separate    the same with block size 3 and -pc_tessera_separate_kinds, the entry
                        coupling row 0 within its kind (column n - 3), so that the separated
                        operator changes pattern too -> the same error
     hidden_cross_kind  the same with the entry between two kinds (column n - 1): the separated
                        operator keeps its pattern, so the numeric re-setup is right and the
                        second solution must be too
     nonfinite   an off-diagonal entry of the middle row set to NaN between two solves (same
                 pattern, so a numeric re-setup)              -> "non-finite"
     near_null_nan  MatSetNearNullSpace with one vector holding a NaN in the middle row (a
                 release build of PETSc does not look inside; a debug one refuses its norm first)
                                                    -> "near-null vector 0 has a non-finite value"
     coordinates_1d     block size 3, PCSetCoordinates with 1 number a node (2 would be a plane
                        frame's nodes: ux uy rz, accepted)
                                                    -> "makes the rigid-body modes of 2D or 3D elasticity"
     coordinates_count  block size 3, PCSetCoordinates with one node too few on rank 0
                                                    -> "PCSetCoordinates gave ... nodes on rank 0"

   Wrong solutions end in SETERRQ too, so a silent wrong answer fails the test like a crash. */
#include <petsc/private/matimpl.h> /* hidden case: winds back A->nonzerostate */
#include <math.h> /* NAN */
#include <petscksp.h>
#include <string.h>
#include <time.h>

#include "amg/petsc/tessera_petsc.h"

static const char help[] =
    "PCTESSERA bad-use cases: -case ok|resetups|nonsquare|dense|baij|pattern|zerorows|hidden|hidden_separate|"
    "hidden_cross_kind|nonfinite|coordinates_1d|coordinates_count -n N\n";

/* Rows [rstart, rend) of the tridiagonal 1D Laplacian with a diagonal shift (SPD), into a
   matrix that may have more columns than rows (nonsquare case). */
static PetscErrorCode fill_laplacian(Mat a, PetscInt n) {
  PetscInt rstart, rend;
  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(a, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; ++i) {
    if (i > 0) PetscCall(MatSetValue(a, i, i - 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(a, i, i, 2.5, INSERT_VALUES));
    if (i + 1 < n) PetscCall(MatSetValue(a, i, i + 1, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode create_operator(MatType type, PetscInt rows, PetscInt cols, PetscInt block_size, Mat *a) {
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, a));
  PetscCall(MatSetSizes(*a, PETSC_DECIDE, PETSC_DECIDE, rows, cols));
  PetscCall(MatSetBlockSize(*a, block_size));
  PetscCall(MatSetType(*a, type));
  PetscCall(MatSetUp(*a));
  PetscCall(fill_laplacian(*a, rows));
  PetscFunctionReturn(0);
}

/* Solves A x = A x* from x = 0 and fails unless ||x - x*|| <= 1e-6 ||x*||. */
static PetscErrorCode solve_and_check(KSP ksp, Mat a, Vec exact, const char *what) {
  Vec b, x;
  PetscReal error, norm;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(a, &x, &b));
  PetscCall(MatMult(a, exact, b));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(VecAXPY(x, -1.0, exact));
  PetscCall(VecNorm(x, NORM_2, &error));
  PetscCall(VecNorm(exact, NORM_2, &norm));
  PetscCheck(error <= 1e-6 * norm, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
             "%s: wrong solution, ||x - x*|| / ||x*|| = %g", what, (double)(error / norm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ||x - x*|| / ||x*|| = %.3g\n", what, (double)(error / norm)));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

static PetscErrorCode random_exact(Mat a, Vec *exact) {
  PetscRandom rng;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(a, exact, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rng));
  PetscCall(PetscRandomSetInterval(rng, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rng, (unsigned long)time(NULL)));
  PetscCall(PetscRandomSeed(rng));
  PetscCall(VecSetRandom(*exact, rng));
  PetscCall(PetscRandomDestroy(&rng));
  PetscFunctionReturn(0);
}

/* Couples the first and last rows (a periodic wrap-around) at locations never preallocated;
   the added diagonal keeps the matrix SPD. */
static PetscErrorCode add_wraparound(Mat a, PetscInt n) {
  PetscInt rstart, rend;
  PetscFunctionBeginUser;
  PetscCall(MatSetOption(a, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(a, &rstart, &rend));
  if (rstart <= 0 && 0 < rend) PetscCall(MatSetValue(a, 0, n - 1, -1.0, INSERT_VALUES));
  if (rstart <= n - 1 && n - 1 < rend) PetscCall(MatSetValue(a, n - 1, 0, -1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Row 0 gains a coupling to column `col`, but A's nonzero state is restored afterwards. */
static PetscErrorCode add_hidden_nonzero_at(Mat a, PetscInt col) {
  PetscObjectState before;
  PetscInt rstart, rend;
  PetscFunctionBeginUser;
  PetscCall(MatGetNonzeroState(a, &before));
  PetscCall(MatSetOption(a, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(a, &rstart, &rend));
  if (rstart == 0 && rend > 0) PetscCall(MatSetValue(a, 0, col, -0.5, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
  a->nonzerostate = before;
  PetscFunctionReturn(0);
}

/* At the last column: with 3 kinds of dof a node (n a multiple of 3), a coupling between kinds. */
static PetscErrorCode add_hidden_nonzero(Mat a, PetscInt n) { return add_hidden_nonzero_at(a, n - 1); }

/* At column n - 3: with 3 kinds a node, a coupling within row 0's kind. */
static PetscErrorCode add_hidden_same_kind_nonzero(Mat a, PetscInt n) { return add_hidden_nonzero_at(a, n - 3); }

/* Two solves with a change of `a` in between (applied by `change`, NULL = MatScale by 2). */
static PetscErrorCode two_solves(KSP ksp, Mat a, PetscInt n, PetscErrorCode (*change)(Mat, PetscInt)) {
  Vec exact;
  PetscFunctionBeginUser;
  PetscCall(random_exact(a, &exact));
  PetscCall(solve_and_check(ksp, a, exact, "first solve"));
  if (change) PetscCall(change(a, n));
  else PetscCall(MatScale(a, 2.0));
  PetscCall(KSPSetOperators(ksp, a, a));
  PetscCall(solve_and_check(ksp, a, exact, "second solve"));
  PetscCall(VecDestroy(&exact));
  PetscFunctionReturn(0);
}

/* Four solves; before each of the last three the diagonal grows (the pattern stays, D^-1 A and
   so P change, unlike under MatScale). */
static PetscErrorCode four_solves(KSP ksp, Mat a) {
  const char *labels[] = {"first solve", "second solve", "third solve", "fourth solve"};
  Vec exact;
  PetscFunctionBeginUser;
  PetscCall(random_exact(a, &exact));
  for (int s = 0; s < 4; ++s) {
    if (s > 0) {
      PetscCall(MatShift(a, 0.25 * s));
      PetscCall(KSPSetOperators(ksp, a, a));
    }
    PetscCall(solve_and_check(ksp, a, exact, labels[s]));
  }
  PetscCall(VecDestroy(&exact));
  PetscFunctionReturn(0);
}

static PetscErrorCode zero_middle_rows(Mat a, PetscInt n) {
  PetscInt rows[2] = {n / 3, n / 2}, rstart, rend, mine[2], k = 0;
  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(a, &rstart, &rend));
  for (int i = 0; i < 2; ++i)
    if (rstart <= rows[i] && rows[i] < rend) mine[k++] = rows[i];
  PetscCall(MatSetOption(a, MAT_KEEP_NONZERO_PATTERN, PETSC_FALSE));
  PetscCall(MatZeroRows(a, k, mine, 3.0, NULL, NULL));
  PetscFunctionReturn(0);
}

/* a(n/2, n/2 - 1) = NaN: an existing entry, so the pattern stays. */
static PetscErrorCode set_nan_entry(Mat a, PetscInt n) {
  PetscInt rstart, rend, row = n / 2;
  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(a, &rstart, &rend));
  if (rstart <= row && row < rend) PetscCall(MatSetValue(a, row, row - 1, (PetscScalar)NAN, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* A single solve on an operator PCTESSERA must refuse. */
static PetscErrorCode one_solve(KSP ksp, Mat a) {
  Vec b, x;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(a, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

/* PCSetCoordinates with `dim` numbers for each of the rank's nodes (3 rows a node), rank 0
   giving `short_by` nodes fewer. */
static PetscErrorCode set_coordinates(KSP ksp, Mat a, PetscInt dim, PetscInt short_by) {
  PC pc;
  PetscInt rstart, rend;
  PetscMPIInt rank;
  PetscReal *coords;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MatGetOwnershipRange(a, &rstart, &rend));
  const PetscInt nodes = (rend - rstart) / 3 - (rank == 0 ? short_by : 0);
  PetscCall(PetscMalloc1(dim * nodes + 1, &coords));
  for (PetscInt i = 0; i < dim * nodes; ++i) coords[i] = (PetscReal)(rstart / 3 + i / dim) + 0.25 * (i % dim);
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetCoordinates(pc, dim, nodes, coords));
  PetscCall(PetscFree(coords));
  PetscFunctionReturn(0);
}

/* The near-null space: one vector, 1 / sqrt(n) everywhere but NaN in row n / 2. */
static PetscErrorCode set_nan_near_null_space(Mat a, PetscInt n) {
  Vec v;
  MatNullSpace space;
  PetscInt rstart, rend, row = n / 2;
  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(a, &v, NULL));
  PetscCall(VecSet(v, 1.0 / PetscSqrtReal((PetscReal)n)));
  PetscCall(VecGetOwnershipRange(v, &rstart, &rend));
  if (rstart <= row && row < rend) PetscCall(VecSetValue(v, row, (PetscScalar)NAN, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(v));
  PetscCall(VecAssemblyEnd(v));
  PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_FALSE, 1, &v, &space));
  PetscCall(MatSetNearNullSpace(a, space));
  PetscCall(MatNullSpaceDestroy(&space));
  PetscCall(VecDestroy(&v));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  char name[32] = "ok";
  PetscInt n = 37;
  Mat a;
  KSP ksp;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(TesseraPetscRegisterAll());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", name, sizeof(name), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));

  const int nonsquare = !strcmp(name, "nonsquare");
  const int coordinates = !strncmp(name, "coordinates", 11);
  const int kinds = !strcmp(name, "hidden_separate") || !strcmp(name, "hidden_cross_kind");
  const MatType type = !strcmp(name, "dense") ? MATDENSE : !strcmp(name, "baij") ? MATBAIJ : MATAIJ;
  if (coordinates || kinds) n = 3 * (n / 3); /* whole nodes of 3 dofs */
  PetscCall(create_operator(type, n, nonsquare ? n + 3 : n, coordinates || kinds ? 3 : 1, &a));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, a, a));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 200));
  {
    PC pc;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCTESSERA));
  }
  PetscCall(KSPSetFromOptions(ksp));

  if (!strcmp(name, "ok")) PetscCall(two_solves(ksp, a, n, NULL));
  else if (!strcmp(name, "resetups")) PetscCall(four_solves(ksp, a));
  else if (!strcmp(name, "pattern")) PetscCall(two_solves(ksp, a, n, add_wraparound));
  else if (!strcmp(name, "hidden") || !strcmp(name, "hidden_cross_kind"))
    PetscCall(two_solves(ksp, a, n, add_hidden_nonzero));
  else if (!strcmp(name, "hidden_separate")) PetscCall(two_solves(ksp, a, n, add_hidden_same_kind_nonzero));
  else if (!strcmp(name, "zerorows")) PetscCall(two_solves(ksp, a, n, zero_middle_rows));
  else if (!strcmp(name, "nonfinite")) PetscCall(two_solves(ksp, a, n, set_nan_entry));
  else if (!strcmp(name, "near_null_nan")) {
    PetscCall(set_nan_near_null_space(a, n));
    PetscCall(one_solve(ksp, a));
  }
  else if (coordinates) {
    PetscCall(set_coordinates(ksp, a, !strcmp(name, "coordinates_1d") ? 1 : 3, !strcmp(name, "coordinates_count")));
    PetscCall(one_solve(ksp, a));
  }
  else if (nonsquare || type != MATAIJ) PetscCall(one_solve(ksp, a));
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown -case %s", name);

  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&a));
  PetscCall(PetscFinalize());
  return 0;
}
