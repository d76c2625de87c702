// GAMG-CG through PETSc's MPIAIJ: each rank hands PETSc its own rows, preallocated exactly.
#include "drivers/baselines/petsc_gamg.hpp"

#include <petscksp.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "local/core/error.hpp"

namespace tessera::baselines {
namespace {

/// PETSc reports an error through the handler chain (innermost call first), then returns the
/// code up the stack. The handler keeps the innermost message; check_petsc throws it.
std::string innermost_petsc_error;

PetscErrorCode capture_petsc_error(MPI_Comm, int line, const char* function, const char* file, PetscErrorCode code,
                                   PetscErrorType type, const char* message, void*) {
  if (type == PETSC_ERROR_INITIAL)
    innermost_petsc_error = detail::concat(file, ":", line, " in ", function, ": ", message ? message : "");
  return code;
}

void check_petsc(PetscErrorCode code, const char* call) {
  if (code == 0) return;
  const char* text = nullptr;
  PetscErrorMessage(code, &text, nullptr);
  throw Error(detail::concat("PETSc: ", call, " failed: ", text ? text : "error", " (", code, "): ", innermost_petsc_error));
}
#define TESSERA_PETSC(call) check_petsc((call), #call)

/// Routes PETSc's errors into exceptions for the duration of one solve (PETSc's default
/// handler would print a traceback to stderr and leave the caller an integer).
struct ErrorCapture {
  ErrorCapture() {
    innermost_petsc_error.clear();
    TESSERA_PETSC(PetscPushErrorHandler(capture_petsc_error, nullptr));
  }
  ~ErrorCapture() { PetscPopErrorHandler(); }
};

/// Owns every PETSc object of one solve.
struct PetscObjects {
  Mat a = nullptr;
  Vec b = nullptr, x = nullptr, coordinates = nullptr;
  std::vector<Vec> near_null_vectors;  // given near-null vectors (the null space holds references)
  MatNullSpace near_null_space = nullptr;  // the near-null space: rigid-body modes or the given vectors
  KSP ksp = nullptr;
  ~PetscObjects() {
    KSPDestroy(&ksp);
    MatNullSpaceDestroy(&near_null_space);
    for (Vec& v : near_null_vectors) VecDestroy(&v);
    VecDestroy(&coordinates);
    VecDestroy(&x);
    VecDestroy(&b);
    MatDestroy(&a);
  }
};

/// MATAIJ (SeqAIJ on one rank, MPIAIJ on several) preallocated with the exact number of
/// entries in the diagonal and off-diagonal blocks of every row, so assembly never mallocs.
void assemble_matrix(MPI_Comm comm, const RowBlock& rows, int block_size, PetscObjects& p) {
  TESSERA_REQUIRE_INPUT(rows.global_rows <= std::int64_t(PETSC_MAX_INT), "PETSc: this PETSc is built with ",
                        8 * sizeof(PetscInt), "-bit indices; ", rows.global_rows, " rows do not fit");
  const PetscInt n = PetscInt(rows.local_rows());
  std::vector<PetscInt> diag(n, 0), offd(n, 0), cols(rows.col.begin(), rows.col.end());
  for (PetscInt i = 0; i < n; ++i)
    for (std::int64_t q = rows.row_ptr[i]; q < rows.row_ptr[i + 1]; ++q)
      ++((rows.col[q] >= rows.row_begin && rows.col[q] < rows.row_end) ? diag[i] : offd[i]);
  TESSERA_PETSC(MatCreate(comm, &p.a));
  TESSERA_PETSC(MatSetSizes(p.a, n, n, PetscInt(rows.global_rows), PetscInt(rows.global_cols)));
  TESSERA_PETSC(MatSetType(p.a, MATAIJ));
  TESSERA_PETSC(MatSetBlockSize(p.a, block_size));  // GAMG aggregates whole nodes
  TESSERA_PETSC(MatSeqAIJSetPreallocation(p.a, 0, diag.data()));  // whichever matches the type applies
  TESSERA_PETSC(MatMPIAIJSetPreallocation(p.a, 0, diag.data(), 0, offd.data()));
  TESSERA_PETSC(MatSetOption(p.a, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));  // the counts must be exact
  for (PetscInt i = 0; i < n; ++i) {
    const PetscInt row = PetscInt(rows.row_begin + i), begin = PetscInt(rows.row_ptr[i]);
    TESSERA_PETSC(MatSetValues(p.a, 1, &row, PetscInt(rows.row_ptr[i + 1]) - begin, cols.data() + begin,
                               rows.values.data() + begin, INSERT_VALUES));
  }
  TESSERA_PETSC(MatAssemblyBegin(p.a, MAT_FINAL_ASSEMBLY));
  TESSERA_PETSC(MatAssemblyEnd(p.a, MAT_FINAL_ASSEMBLY));
}

void make_vectors(const std::vector<double>& my_b, PetscObjects& p) {
  TESSERA_PETSC(MatCreateVecs(p.a, &p.x, &p.b));
  PetscScalar* values = nullptr;
  TESSERA_PETSC(VecGetArray(p.b, &values));
  std::copy(my_b.begin(), my_b.end(), values);
  TESSERA_PETSC(VecRestoreArray(p.b, &values));
  TESSERA_PETSC(VecSet(p.x, 0.0));
}

/// The rigid-body modes (3 in 2D, 6 in 3D) from one (x, y[, z]) per node, as GAMG expects for
/// elasticity: the block size is the dimension.
void attach_rigid_body_modes(MPI_Comm comm, const RowBlock& rows, const BaselineOptions& o, PetscObjects& p) {
  const int dim = o.block_size;
  TESSERA_REQUIRE_INPUT(dim == 2 || dim == 3,
                        "PETSc GAMG: rigid-body modes (coordinates given) need block size 2 or 3, got ", dim);
  const PetscInt n = PetscInt(rows.local_rows());  // = dim x local nodes
  TESSERA_PETSC(VecCreate(comm, &p.coordinates));
  TESSERA_PETSC(VecSetSizes(p.coordinates, n, PETSC_DECIDE));
  TESSERA_PETSC(VecSetBlockSize(p.coordinates, dim));
  TESSERA_PETSC(VecSetType(p.coordinates, VECSTANDARD));
  PetscScalar* xyz = nullptr;
  TESSERA_PETSC(VecGetArray(p.coordinates, &xyz));
  for (PetscInt node = 0; node < n / dim; ++node)  // o.coordinates holds a node's x y z on each of its rows
    for (int d = 0; d < dim; ++d) xyz[dim * node + d] = o.coordinates[3 * std::size_t(dim * node) + d];
  TESSERA_PETSC(VecRestoreArray(p.coordinates, &xyz));
  TESSERA_PETSC(MatNullSpaceCreateRigidBody(p.coordinates, &p.near_null_space));
  TESSERA_PETSC(MatSetNearNullSpace(p.a, p.near_null_space));
}

/// The given near-null vectors (orthonormal over all ranks, as MatNullSpaceCreate wants them),
/// one Vec each with A's layout.
void attach_near_null_vectors(const BaselineOptions& o, PetscObjects& p) {
  const PetscInt k = PetscInt(o.near_null.cols);
  p.near_null_vectors.assign(std::size_t(k), nullptr);
  for (PetscInt j = 0; j < k; ++j) {
    TESSERA_PETSC(MatCreateVecs(p.a, &p.near_null_vectors[j], nullptr));
    PetscScalar* values = nullptr;
    TESSERA_PETSC(VecGetArray(p.near_null_vectors[j], &values));
    for (std::int64_t i = 0; i < o.near_null.rows; ++i) values[i] = o.near_null.at(i, j);
    TESSERA_PETSC(VecRestoreArray(p.near_null_vectors[j], &values));
  }
  TESSERA_PETSC(MatNullSpaceCreate(PetscObjectComm(PetscObject(p.a)), PETSC_FALSE, k, p.near_null_vectors.data(),
                                   &p.near_null_space));
  TESSERA_PETSC(MatSetNearNullSpace(p.a, p.near_null_space));
}

/// Options a non-symmetric A's levels get unless PETSC_OPTIONS names them: one Richardson
/// sweep of SOR (PETSc's processor-local symmetric SOR). GAMG's default Chebyshev/Jacobi
/// assumes a real spectrum: on convdiff3d:32 (2 ranks) GAMG-FGMRES stalls at a relative
/// residual of 0.8 after 500 iterations with it, with or without -pc_gamg_sym_graph and GMRES
/// eigenvalue estimates, and converges in 8 with SOR (13 with GMRES(2) smoothing, 22 with plain
/// aggregation; docs/performance.md, thirty-first session).
/// They live in the global options database from configure_solver until KSPSetUp has created
/// and configured the levels (the levels read them there), then are removed: a later symmetric
/// solve in the same process keeps PETSc's defaults.
class NonSymmetricLevelOptions {
 public:
  explicit NonSymmetricLevelOptions(bool apply) {
    if (!apply) return;
    for (const auto& [name, value] : {std::pair{"-mg_levels_ksp_type", "richardson"}, {"-mg_levels_pc_type", "sor"}}) {
      PetscBool user_set = PETSC_FALSE;
      TESSERA_PETSC(PetscOptionsHasName(nullptr, nullptr, name, &user_set));
      if (user_set) continue;
      TESSERA_PETSC(PetscOptionsSetValue(nullptr, name, value));
      set_.push_back(name);
    }
  }
  ~NonSymmetricLevelOptions() {
    for (const char* name : set_) PetscOptionsClearValue(nullptr, name);
  }
  NonSymmetricLevelOptions(const NonSymmetricLevelOptions&) = delete;
  NonSymmetricLevelOptions& operator=(const NonSymmetricLevelOptions&) = delete;

 private:
  std::vector<const char*> set_;
};

/// CG (FGMRES for a non-symmetric A, its defaults: classical Gram-Schmidt without refinement)
/// stopping on ||r||_2 <= rtol ||b||_2 (KSP_NORM_UNPRECONDITIONED: Tessera's criterion; CG's
/// default is the preconditioned norm), preconditioned by GAMG's smoothed aggregation with
/// PETSc 3.18's defaults: graph threshold -1 (keep every edge), one level of squared-graph
/// aggressive coarsening, Chebyshev(2)/Jacobi smoothing (Richardson/SOR for a non-symmetric A:
/// NonSymmetricLevelOptions), LU on the coarsest level (checked with -ksp_view).
/// KSPSetFromOptions is needed for those defaults: GAMG sets some of them (the squared graph)
/// only there; without it the operator complexity on poisson3d:32 is 3.6 instead of 1.8. It
/// also lets PETSC_OPTIONS override any of them, as in any PETSc program.
void configure_solver(MPI_Comm comm, const BaselineOptions& o, PetscObjects& p) {
  TESSERA_PETSC(KSPCreate(comm, &p.ksp));
  TESSERA_PETSC(KSPSetOperators(p.ksp, p.a, p.a));
  TESSERA_PETSC(KSPSetType(p.ksp, o.gmres ? KSPFGMRES : KSPCG));
  if (o.gmres) TESSERA_PETSC(KSPGMRESSetRestart(p.ksp, o.restart));  // right preconditioning, PETSc's orthogonalisation
  TESSERA_PETSC(KSPSetNormType(p.ksp, KSP_NORM_UNPRECONDITIONED));
  TESSERA_PETSC(KSPSetTolerances(p.ksp, o.rtol, 0.0, PETSC_DEFAULT, o.max_iterations));
  TESSERA_PETSC(KSPSetInitialGuessNonzero(p.ksp, PETSC_FALSE));
  PC pc = nullptr;
  TESSERA_PETSC(KSPGetPC(p.ksp, &pc));
  TESSERA_PETSC(PCSetType(pc, PCGAMG));
  TESSERA_PETSC(PCGAMGSetType(pc, PCGAMGAGG));
  TESSERA_PETSC(KSPSetFromOptions(p.ksp));
}

/// Operator and grid complexity from GAMG's levels: sum of nnz (rows) over all levels' operators
/// divided by the finest level's (PCMG numbers levels from the coarsest, 0).
void read_complexities(PetscObjects& p, BaselineResult& result) {
  PC pc = nullptr;
  TESSERA_PETSC(KSPGetPC(p.ksp, &pc));
  PetscInt levels = 0;
  TESSERA_PETSC(PCMGGetLevels(pc, &levels));
  double nnz = 0, rows = 0, finest_nnz = 0, finest_rows = 0;
  for (PetscInt l = 0; l < levels; ++l) {
    KSP smoother = nullptr;
    Mat op = nullptr;
    TESSERA_PETSC(PCMGGetSmoother(pc, l, &smoother));
    TESSERA_PETSC(KSPGetOperators(smoother, &op, nullptr));
    MatInfo info;
    PetscInt global_rows = 0;
    TESSERA_PETSC(MatGetInfo(op, MAT_GLOBAL_SUM, &info));
    TESSERA_PETSC(MatGetSize(op, &global_rows, nullptr));
    nnz += info.nz_used;
    rows += double(global_rows);
    if (l == levels - 1) finest_nnz = info.nz_used, finest_rows = double(global_rows);
  }
  result.levels = int(levels);
  if (finest_nnz > 0) result.operator_complexity = nnz / finest_nnz;
  if (finest_rows > 0) result.grid_complexity = rows / finest_rows;
}

std::vector<double> solution(const PetscObjects& p, std::size_t n) {
  const PetscScalar* values = nullptr;
  TESSERA_PETSC(VecGetArrayRead(p.x, &values));
  std::vector<double> x(values, values + n);
  TESSERA_PETSC(VecRestoreArrayRead(p.x, &values));
  return x;
}

std::string configuration(const BaselineOptions& o) {
  return detail::concat(o.gmres ? detail::concat("FGMRES(", o.restart, ", classical Gram-Schmidt, no refinement)")
                                : "CG (unpreconditioned 2-norm)",
                        " + GAMG agg, PETSc 3.18 defaults (threshold -1, square graph 1 level, ",
                        o.gmres ? "Richardson/SOR for a non-symmetric A" : "Chebyshev(2)/Jacobi",
                        ", coarse LU), block size ", o.block_size,
                        !o.coordinates.empty()   ? ", rigid-body near-null space"
                        : o.near_null.cols > 0   ? detail::concat(", ", o.near_null.cols, " given near-null vectors")
                                                 : ", constant near-null space");
}

}  // namespace

bool have_gamg() { return true; }

PetscSession::PetscSession() {
  int mpi_initialized = 0;
  MPI_Initialized(&mpi_initialized);
  TESSERA_ASSERT(mpi_initialized, "PetscSession needs MPI initialised first (PETSc would otherwise own MPI)");
  PetscBool petsc_initialized = PETSC_FALSE;
  TESSERA_PETSC(PetscInitialized(&petsc_initialized));
  if (petsc_initialized) return;
  static char program[] = "tessera", skip_rc[] = "-skip_petscrc";
  static char* arguments[] = {program, skip_rc, nullptr};
  int argc = 2;
  char** argv = arguments;
  TESSERA_PETSC(PetscInitialize(&argc, &argv, nullptr, nullptr));
  owns_ = true;
  TESSERA_PETSC(PetscPopSignalHandler());
}

PetscSession::~PetscSession() {
  if (owns_) PetscFinalize();
}

BaselineResult solve_with_gamg(MPI_Comm comm, const RowBlock& my_rows, const std::vector<double>& my_b,
                               const BaselineOptions& options) {
  PetscBool petsc_initialized = PETSC_FALSE;
  PetscInitialized(&petsc_initialized);
  TESSERA_ASSERT(petsc_initialized, "solve_with_gamg needs a live PetscSession");
  check_distribution(comm, my_rows, my_b, options);
  ErrorCapture errors;
  PetscObjects p;
  BaselineResult result;
  result.solver = options.gmres ? "PETSc GAMG-FGMRES" : "PETSc GAMG-CG";
  result.runs_on = cpu_ranks(comm);
  result.configuration = configuration(options);

  result.assembly_seconds = timed_on_slowest_rank(comm, [&] {
    assemble_matrix(comm, my_rows, options.block_size, p);
    make_vectors(my_b, p);
    if (!options.coordinates.empty()) attach_rigid_body_modes(comm, my_rows, options, p);
    if (options.near_null.cols > 0) attach_near_null_vectors(options, p);
  });
  {
    const NonSymmetricLevelOptions level_options(options.gmres);
    configure_solver(comm, options, p);
    result.setup_seconds = timed_on_slowest_rank(comm, [&] { TESSERA_PETSC(KSPSetUp(p.ksp)); });
  }
  result.solve_seconds = timed_on_slowest_rank(comm, [&] { TESSERA_PETSC(KSPSolve(p.ksp, p.b, p.x)); });

  PetscInt iterations = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  TESSERA_PETSC(KSPGetIterationNumber(p.ksp, &iterations));
  TESSERA_PETSC(KSPGetConvergedReason(p.ksp, &reason));
  result.iterations = int(iterations);
  result.converged = reason > 0;  // by PETSc's criterion; the true residual is reported beside it
  read_complexities(p, result);
  result.x = solution(p, my_b.size());
  result.relative_residual = true_relative_residual(comm, my_rows, my_b, result.x);
  return result;
}

}  // namespace tessera::baselines
