#pragma once
// What every baseline solver (hypre BoomerAMG, PETSc GAMG) takes and returns, so that
// `tessera-amg --compare` can run them on the same rows and right-hand side as Tessera and
// print one table. Each rank passes its own rows [row_begin, row_end) of the global matrix;
// the ranks' ranges must be contiguous and in rank order (checked, InputError otherwise).
#include <mpi.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "local/formats/dense.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::baselines {

struct BaselineOptions {
  double rtol = 1e-8;          // stop on ||b - A x||_2 <= rtol ||b||_2 (unpreconditioned 2-norm)
  int max_iterations = 500;
  /// The outer Krylov method: CG for a symmetric positive definite A; flexible GMRES, restarted
  /// every `restart` iterations, for a non-symmetric one (Tessera's FGMRES is compared with it).
  bool gmres = false;
  int restart = 30;
  int block_size = 1;          // dofs per node (2 or 3 for elasticity); rows per rank must be a multiple
  /// x, y, z of every local row (3 doubles per row, gen::coordinates' layout, z = 0 in 2D).
  /// Non-empty asks for the rigid-body near-null space of dimension block_size where the
  /// baseline supports it (GAMG does).
  std::vector<double> coordinates;
  /// The local rows of near-null vectors (rows x k, row-major), orthonormal over all ranks.
  /// Non-empty hands them to the baseline as its near-null space where it takes one (GAMG:
  /// MatSetNearNullSpace); not with coordinates.
  DenseMatrix near_null;
};

struct BaselineResult {
  std::string solver;          // "hypre BoomerAMG-PCG", "PETSc GAMG-FGMRES", "Tessera SA-AMG-CG"
  std::string runs_on;         // e.g. "CPU, 2 MPI ranks"
  std::string configuration;   // the settings, one line
  bool converged = false;
  int iterations = 0;
  double relative_residual = 0;  // ||b - A x|| / ||b|| recomputed from the returned x
  double setup_seconds = 0, solve_seconds = 0;
  double assembly_seconds = 0;   // building the library's own matrix (not in setup or solve)
  /// sum over levels of nnz (rows) / nnz (rows) of the finest level; NaN when not available.
  double operator_complexity = std::numeric_limits<double>::quiet_NaN();
  double grid_complexity = std::numeric_limits<double>::quiet_NaN();
  int levels = 0;
  std::vector<double> x;       // this rank's rows of the solution

  double total_seconds() const { return setup_seconds + solve_seconds; }
};

/// InputError on every rank unless the ranks' row ranges tile [0, global_rows) in rank order,
/// `my_b` has one entry per local row, every rank's row count is a multiple of `block_size`,
/// `coordinates` is empty or 3 per row, and every diagonal is positive. Collective: a failure
/// that only one rank saw inside hypre or PETSc would leave the others in the library's
/// collectives, so whatever can be checked beforehand is checked here.
void check_distribution(MPI_Comm comm, const RowBlock& my_rows, const std::vector<double>& my_b,
                        const BaselineOptions& options);

/// ||b - A x||_2 / ||b||_2 over all ranks, computed here from the rows (not by the library
/// under test): x is gathered whole on every rank. Collective.
double true_relative_residual(MPI_Comm comm, const RowBlock& my_rows, const std::vector<double>& my_b,
                              const std::vector<double>& my_x);

/// Rows [begin, end) of rank `rank` when `rows` rows are dealt out evenly over `ranks` ranks
/// in whole nodes of `block_size` rows (the first ranks take the remainder).
std::pair<std::int64_t, std::int64_t> node_aligned_range(std::int64_t rows, int block_size, int rank, int ranks);

/// Wall time of `work` on the slowest rank (barriers on both sides).
template <class Work>
double timed_on_slowest_rank(MPI_Comm comm, Work&& work) {
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  work();
  MPI_Barrier(comm);
  return MPI_Wtime() - start;
}

/// "CPU, N MPI rank(s)" for `comm`.
std::string cpu_ranks(MPI_Comm comm);

}  // namespace tessera::baselines
