#pragma once
// `tessera-amg --compare hypre,gamg`: runs the baselines on the same matrix and right-hand side
// as Tessera in the same process, and prints / records one side-by-side table with Tessera's
// speedup over each (baseline total time / Tessera total time, setup + solve).
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "drivers/baselines/baseline.hpp"
#include "local/formats/csr.hpp"

namespace tessera::baselines {

enum class Baseline { boomeramg, gamg };

/// "hypre,gamg" (also "boomeramg", "petsc") -> the baselines, in order; "" -> none. An unknown
/// or repeated name, or a baseline this build does not link, is an InputError.
std::vector<Baseline> parse_baseline_list(const std::string& list);

/// Runs each baseline on `a` and `b` (the whole problem, held on every rank), giving rank r of
/// `comm` the r-th node-aligned share of the rows. options.coordinates, if set, holds all rows'
/// coordinates (3 per row); each rank is handed its own. Collective.
std::vector<BaselineResult> run_baselines(MPI_Comm comm, const std::vector<Baseline>& which, const Csr<double>& a,
                                          const std::vector<double>& b, const BaselineOptions& options);

/// The same on rows already distributed: each rank passes its own rows (whole nodes,
/// contiguous in rank order), its entries of b and, in `mine`, its rows' coordinates.
std::vector<BaselineResult> run_baselines(MPI_Comm comm, const std::vector<Baseline>& which, const RowBlock& my_rows,
                                          const std::vector<double>& my_b, const BaselineOptions& mine);

/// The table: one row per solver, Tessera first, then each baseline's configuration.
void print_comparison(std::FILE* out, double rtol, const BaselineResult& tessera,
                      const std::vector<BaselineResult>& baselines);

/// The same rows as JSON objects (complexities null where not available).
nlohmann::json comparison_json(const BaselineResult& tessera, const std::vector<BaselineResult>& baselines);

}  // namespace tessera::baselines
