// tessera-amg: smoothed-aggregation AMG as the preconditioner of CG (SPD) or FGMRES.
//   tessera-amg --gen poisson3d:64 --tol 1e-8 --json out.json
//   tessera-amg --gen elasticity3d:16                      (rigid-body modes from the grid; 2D: elasticity2d:N)
//   tessera-amg --gen frame3d:16                           (a frame of beams: nodes that rotate, 6 dofs)
//   tessera-amg --A elastic.mtx --coordinates xyz.mtx      (rigid-body modes from node coordinates)
//   tessera-amg --A shell.mtx --near-null modes.mtx --block-size 6   (any near-null vectors)
//   tessera-amg --A matrix.mtx.gz [--b rhs.mtx] --smoother l1-jacobi --cycle W --history
//   tessera-amg --gen frame2d:256:30 --pmat separate-kinds   (the hierarchy from A without the
//                                                             couplings between kinds of dof)
//   mpirun -np 4 tessera-amg --gen poisson3d:64 --compare hypre,gamg   (baselines side by side)
// One rank: the serial reference hierarchy (CG or FGMRES). Several ranks (or --distributed):
// each rank generates/reads its rows and the distributed AMG (amg::DistAmg) preconditions PCG,
// or FGMRES when A is not symmetric (--solver auto: by the generator's kind, or A against A^T).
// One rank with --backend gpu (auto: when a GPU is present): the whole setup on the device
// (--setup device, the default: amg::gpu::device_setup, the hierarchy stays on the GPU) or the
// host setup with its products offloaded (--setup host); the SpGEMM engine picked from a
// work estimate (--spgemm auto, the default: tile SpGEMM where tiles are well filled, the
// row-wise hash SpGEMM elsewhere, cuSPARSE for power-law rows; once for the hierarchy, from
// the finest level, on the device setup, per product on the offloaded host setup; --spgemm
// tile|hash|cusparse force one, the ablation); the cycle and CG (or FGMRES) on the device.
// Several ranks with --backend gpu (auto: when every rank has a GPU of its own): the distributed
// setup with its numeric steps on the GPUs (products, graph phases, eigenvalue estimates, QR,
// merges, transposes; --setup host keeps only the products there) and its symbolic steps on the
// host, then the cycle and CG (or FGMRES) on the GPUs (NCCL or peer halo exchanges). Prints the
// level table, the setup phases, iterations, the true final relative residual, setup and solve
// times, complexities and AMG2023's figures of merit.
// Exit codes: 0 converged, 1 not converged, 2 bad input.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <optional>

#include "amg/cycle.hpp"
#include "amg/hierarchy_stats.hpp"
#include "amg/krylov.hpp"
#include "amg/separate_kinds.hpp"
#include "dist/backend_choice.hpp"
#include "dist/communicator.hpp"
#include "drivers/amg_distributed.hpp"
#include "drivers/amg_near_null.hpp"
#include "drivers/amg_pmat.hpp"
#include "drivers/amg_result_row.hpp"
#include "drivers/amg_single_gpu.hpp"
#include "drivers/baselines/compare.hpp"
#include "drivers/common/driver_main.hpp"
#include "drivers/common/matrix_source.hpp"
#include "local/core/error.hpp"
#include "local/core/backend.hpp"
#include "local/io/matrix_market.hpp"
#include "local/reference/kernels.hpp"


namespace tessera::driver {
namespace {

struct Options {
  MatrixSource a;
  std::string b_file, json, compare, smoother = "chebyshev", cycle = "V", solver = "auto";
  NearNullChoice near_null;
  std::string backend = "auto", spgemm = "auto", setup = "auto";
  std::string pmat = "a";  // the matrix the hierarchy is built from: "a" or "separate-kinds"
  amg::KrylovOptions krylov;
  std::string gram_schmidt = "cgs2";
  int setups = 1, solves = 1, resetups = 0;
  bool resetup = false, distributed = false;
  std::int64_t replicate_nnz = -1;  // distributed GPU solve (-1: the library default)
  bool no_cuda_graph = false, timeline = false, trace = false;
  std::string halo = "auto";
  std::string resetup_transfer = "host";
  std::string tentative = "auto";
  std::string merge = "auto";
  std::string transpose_p = "auto";
  std::string galerkin_operands = "auto";
  std::string solve_operands = "auto";
  amg::AmgOptions amg;
};

bool is_symmetric(const Csr<double>& a) {
  if (a.rows != a.cols) return false;
  const Csr<double> t = ref::transpose(a);
  if (t.row_ptr != a.row_ptr || t.col_idx != a.col_idx) return false;
  for (std::int64_t p = 0; p < a.nnz(); ++p)
    if (std::abs(a.values[p] - t.values[p]) > 1e-12 * (std::abs(a.values[p]) + std::abs(t.values[p]))) return false;
  return true;
}

amg::Vector right_hand_side(const Options& opt, const Csr<double>& a) {
  if (opt.b_file.empty()) return amg::Vector(static_cast<std::size_t>(a.rows), 1.0);
  const DenseMatrix b = io::read_matrix_market_dense(opt.b_file);
  TESSERA_REQUIRE_INPUT(b.rows == a.rows && b.cols == 1, "--b: expected a ", a.rows, " x 1 vector, got ", b.rows, " x ",
                        b.cols);
  return b.data;
}

void add_options(CLI::App& app, Options& opt) {
  app.add_option("--gen", opt.a.spec,
                 "generate A: poisson3d:N poisson3d27:N elasticity3d:N poisson2d:N elasticity2d:N "
                 "frame3d:N[:L] frame2d:N[:L] (L: the beams' slenderness, 10 if left out) convdiff3d:N "
                 "(non-symmetric: FGMRES)");
  app.add_option("--A", opt.a.file, "Matrix Market file for A (.mtx or .mtx.gz)");
  app.add_option("--b", opt.b_file, "right-hand side (Matrix Market array); default all ones");
  app.add_option("--tol", opt.krylov.rtol, "relative residual tolerance")->check(CLI::PositiveNumber);
  app.add_option("--max-it", opt.krylov.max_iterations, "iteration limit")->check(CLI::NonNegativeNumber);
  app.add_option("--solver", opt.solver, "auto (CG if A is symmetric, else FGMRES), cg, gmres")
      ->check(CLI::IsMember({"auto", "cg", "gmres"}));
  app.add_option("--restart", opt.krylov.restart, "FGMRES: basis vectors before a restart (default 30)")
      ->check(CLI::PositiveNumber);
  app.add_option("--gram-schmidt", opt.gram_schmidt,
                 "FGMRES's Arnoldi: cgs2 (classical Gram-Schmidt twice, the default: two batched reductions an "
                 "iteration), cgs-ifneeded (the second pass only where the first cancelled more than 1 - 1/sqrt(2) of "
                 "the vector's norm), cgs (one pass, PETSc's default) or mgs (modified Gram-Schmidt: one reduction per "
                 "basis vector)")
      ->check(CLI::IsMember({"cgs2", "cgs-ifneeded", "cgs", "mgs"}));
  app.add_option("--smoother", opt.smoother, "chebyshev | l1-jacobi")->check(CLI::IsMember({"chebyshev", "l1-jacobi"}));
  app.add_option("--degree", opt.amg.chebyshev_degree, "Chebyshev degree")->check(CLI::PositiveNumber);
  app.add_option("--sweeps", opt.amg.jacobi_sweeps, "l1-Jacobi sweeps")->check(CLI::PositiveNumber);
  app.add_option("--cycle", opt.cycle, "V | W")->check(CLI::IsMember({"V", "W", "v", "w"}));
  app.add_option("--threshold", opt.amg.strength_threshold, "strength threshold (default 0.02)");
  app.add_flag("--filtered-smoothing", opt.amg.filtered_smoothing,
               "smooth the tentative prolongator with A's filtered operator (its strong couplings, the others "
               "added to the diagonal) instead of A: sparser P and coarse operators where the strength graph drops "
               "many entries (anisotropy, --pmat separate-kinds)");
  app.add_option("--coarse-size", opt.amg.coarse_size, "rows of the coarsest level (default 2000)");
  app.add_option("--max-levels", opt.amg.max_levels, "maximum number of levels");
  app.add_option("--null-space", opt.near_null.null_space,
                 "auto (rigid-body for generated elasticity and frames, and with --coordinates), constant, rigid-body")
      ->check(CLI::IsMember({"auto", "constant", "rigid-body"}));
  app.add_option("--coordinates", opt.near_null.coordinates,
                 "node coordinates of an elasticity A read with --A, for its rigid-body modes: a Matrix Market array, "
                 "one row a node, columns x y (2D) or x y z (3D); A's rows / nodes = one dof a dimension a node, or "
                 "3 in 2D and 6 in 3D for nodes that rotate (frames, shells: the displacements, then the rotations)");
  app.add_option("--near-null", opt.near_null.vectors,
                 "the near-null vectors themselves (as MatSetNearNullSpace gives them to GAMG): a Matrix Market array "
                 "of A's rows, one column a vector, linearly independent; with --block-size for nodes of several dofs");
  app.add_option("--block-size", opt.near_null.block_size,
                 "dofs per node (default: rows / nodes of --coordinates, else from the generator, else 1)");
  app.add_option("--pmat", opt.pmat,
                 "the matrix the hierarchy is built from (PETSc's Pmat): a (the default) or separate-kinds (A "
                 "without the couplings between different kinds of dof, block size 1 and the constant: each kind "
                 "coarsened by its own couplings, for systems such as slender frames whose kinds are stiff in "
                 "different directions); CG or FGMRES iterates on A either way, and --compare's baselines get A")
      ->check(CLI::IsMember({"a", "separate-kinds"}));
  app.add_option("--stagnation-window", opt.krylov.stagnation_window, "stop after this many iterations without a new smallest residual")
      ->check(CLI::PositiveNumber);
  app.add_option("--backend", opt.backend, "auto (GPU when present; several ranks: when each has its own), host, gpu (ranks sharing a GPU exchange through host memory: slower)")
      ->check(CLI::IsMember({"auto", "host", "gpu"}));
  app.add_option("--spgemm", opt.spgemm,
                 "GPU setup products: auto (from a work estimate: once for the hierarchy, from the finest level, "
                 "on the one-GPU device setup; once a level, from its first product, on the distributed setup; per "
                 "product with --setup host), "
                 "tile (tensor-core tile SpGEMM), hash (row-wise hash SpGEMM) or cusparse (ablation)")
      ->check(CLI::IsMember({"auto", "tile", "hash", "cusparse"}));
  app.add_option("--setup", opt.setup,
                 "where one GPU builds the hierarchy: device (the whole setup on the GPU, the hierarchy stays "
                 "there; the default with --backend gpu) or host (host phases, products offloaded); "
                 "--distributed on GPUs: where the setup's numeric steps run (graph phases, lambda_max "
                 "estimates, QR, merge, P^T), device (the default) or host (only the products stay on the GPUs)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  app.add_flag("--resetup", opt.resetup, "also time a re-setup with the same pattern (the repeated setup); the device setup keeps its "
                 "re-setup plans (device memory) only with this flag; distributed: --resetups 1");
  app.add_flag("--history", opt.krylov.history, "print the residual of every iteration");
  app.add_option("--replicate-nnz", opt.replicate_nnz,
                 "distributed GPU solve: coarse levels of at most this many nonzeros are replicated on every GPU "
                 "instead of cycled across ranks (default 4000000 on more than one rank, 0 on one; 0: never; "
                 "V-cycles only)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-cuda-graph", opt.no_cuda_graph,
               "GPU solve (one GPU or distributed): launch every step of the cycle from the host instead of "
               "replaying a CUDA graph");
  app.add_option("--setups", opt.setups,
                 "distributed AMG: whole setups from scratch, each after the previous hierarchy is freed; the first "
                 "is setup_seconds, the median of the others repeated_setup_seconds (what "
                 "a rebuild costs once the process has touched its memory)")
      ->check(CLI::PositiveNumber);
  app.add_option("--resetups", opt.resetups,
                 "distributed AMG: re-setups with the same pattern after the setup (--resetup is one); the first "
                 "is resetup_seconds and records where P's values come from, the median of the others "
                 "repeated_resetup_seconds (they replay that record); with --backend gpu each is followed by "
                 "the refresh of the hierarchy uploaded after the setup, timed apart (resetup_refresh_seconds)")
      ->check(CLI::PositiveNumber);
  app.add_option("--resetup-transfer", opt.resetup_transfer,
                 "distributed AMG with --backend gpu (graph phases on the GPUs): where the re-setups from the "
                 "second on recompute each level's P, R and A_c: host (the default: host-driven products, as "
                 "the first re-setup) or device (from the levels' device copies of A, values copied back; the "
                 "first re-setup then also plans it, on the GPUs, and the plans hold device memory: about 4x the "
                 "hierarchy's at poisson3d:192)")
      ->check(CLI::IsMember({"device", "host"}));
  app.add_option("--tentative", opt.tentative,
                 "distributed AMG with --backend gpu (graph phases on the GPUs): where each level's tentative "
                 "prolongator groups and factors the aggregates: auto (the default: device), device, or host "
                 "(the ablation; the same P_tent bit for bit)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  app.add_option("--merge", opt.merge,
                 "distributed AMG with --backend gpu (graph phases on the GPUs): where each level's first "
                 "P = P_tent - omega D^-1 A P_tent is merged: auto (the default: device, next to the product A P_tent), "
                 "device, or host (the ablation: A P_tent downloaded; the same P bit for bit)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  app.add_option("--transpose-p", opt.transpose_p,
                 "distributed AMG with --backend gpu (graph phases and merge on the GPUs): where each level's first "
                 "Galerkin product gets P^T: auto (the default: device, made where the merge made P and downloaded "
                 "with it), device, or host (the ablation: transposed on the host; the same P^T bit for bit)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  app.add_option("--galerkin-operands", opt.galerkin_operands,
                 "distributed AMG with --backend gpu (graph phases, merge and P^T on the GPUs): where each level's "
                 "first Galerkin products read P and P^T: auto (the default: device, where the merge made them), "
                 "device, or host (the ablation: uploaded from the host's copies; the same product bit for bit)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  app.add_option("--solve-operands", opt.solve_operands,
                 "distributed AMG with --backend gpu (the Galerkin operands on the GPUs): where the device solve's P "
                 "and R come from: auto (the default: device, copies of the merge's P and P^T the setup kept on the "
                 "GPU), device, or host (the ablation: uploaded from the host's copies after the setup; the same "
                 "operators bit for bit)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  app.add_option("--solves", opt.solves,
                 "GPU solves (one GPU or distributed): timed solves from the same initial guess; the first is "
                 "solve_seconds, the median of the others repeated_solve_seconds (the steady state: the first "
                 "solve also captures the cycle's CUDA graph)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--trace", opt.trace,
               "distributed AMG: print the host wall-clock time of the setup's steps on every rank (the last of "
               "--setups, and the last of --resetups; MPI waits appear as mpi.* steps)");
  app.add_flag("--timeline", opt.timeline,
               "distributed GPU solve: time each level's products (A, R, P) and the replicated levels with CUDA "
               "events and print the device time per iteration of each (runs the cycle without a CUDA graph)");
  app.add_option("--halo", opt.halo,
                 "distributed GPU solve: halo exchange route, auto (peer within a node, else nccl), nccl, peer, or "
                 "both (also times the repeated solves through each route side by side)")
      ->check(CLI::IsMember({"auto", "nccl", "peer", "both"}));
  app.add_flag("--distributed", opt.distributed, "run the distributed AMG even on one rank (always on several)");
  app.add_option("--compare", opt.compare,
                 "also solve with these baselines in the same run and print them side by side: hypre, gamg "
                 "(comma-separated; Debian's builds run on the CPU over the MPI ranks)");
  app.add_option("--json", opt.json, "write the results as one JSON object to this file");
}

/// Tessera's row of the --compare table.
baselines::BaselineResult tessera_row(const Options& opt, Backend backend, bool use_cg, const amg::SolveResult& res,
                                      const amg::HierarchyStats& stats, double setup_s, double solve_s) {
  baselines::BaselineResult r = amg_result_row(res, stats, setup_s, solve_s);
  r.solver = "Tessera SA-AMG-" + krylov_method(use_cg, opt.krylov);
  r.runs_on = backend == Backend::gpu ? "one GPU (cycle and Krylov solver on the device)" : "host reference, serial";
  r.configuration = detail::concat(krylov_method(use_cg, opt.krylov), " + smoothed aggregation ", opt.cycle, "-cycle, ",
                                   opt.smoother, ", threshold ", opt.amg.strength_threshold,
                                   opt.amg.filtered_smoothing ? ", filtered prolongator smoothing" : "", ", ",
                                   stats.levels.size(), " levels, coarsest ", stats.coarse_method,
                                   opt.pmat == "separate-kinds" ? kSeparateKindsConfiguration : "");
  return r;
}

/// A, its near-null space, b, and the Krylov method: what every path solves.
struct Problem {
  Csr<double> a;
  amg::NearNullSpace nns;
  std::string nns_description;      // NearNullSource::describe()
  std::vector<double> coordinates;  // 3 a row where nns holds the rigid-body modes, else empty
  DenseMatrix orthonormal_nns;      // --near-null, modes with rotations: nns orthonormalised, for GAMG
  amg::Vector b;
  bool use_cg = true;
  // --pmat separate-kinds: the matrix the hierarchy is built from, and its near-null space (the
  // constant); nns above stays the baselines'.
  std::optional<Csr<double>> pmat;
  amg::NearNullSpace pmat_nns;

  const Csr<double>& setup_matrix() const { return pmat ? *pmat : a; }
  const amg::NearNullSpace& setup_nns() const { return pmat ? pmat_nns : nns; }
};

/// Runs the --compare baselines on the same A and b; rank 0 prints the table.
nlohmann::json compare_with_baselines(const Options& opt, const std::vector<baselines::Baseline>& which,
                                      const Problem& p, const baselines::BaselineResult& tessera) {
  baselines::BaselineOptions bo;
  match_krylov(bo, p.use_cg, opt.krylov);
  bo.block_size = p.nns.block_size;
  bo.coordinates = p.coordinates;     // rigid-body modes: GAMG gets the same geometry
  bo.near_null = p.orthonormal_nns;  // --near-null, modes with rotations: the same vectors
  const std::vector<baselines::BaselineResult> results = baselines::run_baselines(MPI_COMM_WORLD, which, p.a, p.b, bo);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) baselines::print_comparison(stdout, opt.krylov.rtol, tessera, results);
  return baselines::comparison_json(tessera, results);
}

nlohmann::json levels_json(const amg::HierarchyStats& s) {
  nlohmann::json levels = nlohmann::json::array();
  for (const amg::LevelStats& l : s.levels)
    levels.push_back({{"rows", l.rows}, {"nnz", l.nnz}, {"nnz_per_row", l.nnz_per_row}, {"p_nnz", l.p_nnz},
                      {"lambda_max", l.lambda_max}, {"omega", l.omega}, {"setup_seconds", l.times.total()}});
  return levels;
}

nlohmann::json phases_json(const amg::SetupTimes& t) {
  return {{"strength", t.strength}, {"aggregation", t.aggregation}, {"p_tentative", t.tentative},
          {"p_smoothing", t.smoothing}, {"ptap", t.galerkin}, {"smoother", t.smoother}, {"coarse_factor", t.coarse}};
}

int run_distributed(const dist::Communicator& comm, const Options& opt, const std::vector<baselines::Baseline>& compare) {
  DistributedAmgOptions d;
  d.solver = opt.solver;
  d.pmat = opt.pmat;
  d.a = opt.a;
  d.b_file = opt.b_file;
  d.near_null = opt.near_null;
  d.krylov = opt.krylov;
  d.resetups = opt.resetups > 0 ? opt.resetups : opt.resetup ? 1 : 0;
  d.amg = opt.amg;
  d.compare = compare;
  d.backend = dist::resolve_distributed_backend(comm, opt.backend);
  d.spgemm = opt.spgemm;
  d.setup = opt.setup;
  d.replicate_nnz = opt.replicate_nnz;
  d.cuda_graph = !opt.no_cuda_graph;
  d.setups = opt.setups;
  d.solves = opt.solves;
  d.timeline = opt.timeline;
  d.trace = opt.trace;
  d.halo = opt.halo;
  d.resetup_transfer = opt.resetup_transfer;
  d.tentative = opt.tentative;
  d.merge = opt.merge;
  d.transpose_p = opt.transpose_p;
  d.galerkin_operands = opt.galerkin_operands;
  d.solve_operands = opt.solve_operands;
  nlohmann::json out;
  const int status = run_distributed_amg(comm, d, out);
  out["smoother"] = opt.smoother;
  out["cycle"] = opt.cycle;
  if (comm.rank() == 0 && !opt.json.empty()) write_json(opt.json, out);
  return status;
}

Problem load_problem(const dist::Communicator& comm, const Options& opt) {
  Problem p;
  p.a = load_matrix(opt.a, "A (--A or --gen)");
  TESSERA_REQUIRE_INPUT(p.a.rows == p.a.cols, "A must be square, it is ", p.a.rows, "x", p.a.cols);
  // Constant (per component) by default; the rigid-body modes where nodes have coordinates.
  const NearNullSource source(opt.a, opt.near_null, p.a.rows);
  OwnedNearNull near_null = owned_near_null(comm, source, 0, p.a.rows);
  p.nns = std::move(near_null.space);
  p.nns_description = source.describe();
  p.coordinates = std::move(near_null.coordinates);
  p.orthonormal_nns = std::move(near_null.orthonormal);
  p.b = right_hand_side(opt, p.a);
  p.use_cg = opt.solver == "cg" || (opt.solver == "auto" && is_symmetric(p.a));
  if (opt.pmat == "separate-kinds") {
    require_kinds_to_separate(p.nns.block_size);
    p.pmat = amg::without_cross_kind_couplings(p.a, p.nns.block_size);
    p.pmat_nns = amg::constant_near_null_space(p.a.rows, 1);
  }
  return p;
}

/// --backend resolved, and the GPU-only options checked against it.
Backend choose_backend(const Options& opt) {
  const Backend backend = resolve_backend(opt.backend);
  TESSERA_REQUIRE_INPUT(backend == Backend::gpu || (opt.spgemm != "cusparse" && opt.spgemm != "hash"), "--spgemm ",
                        opt.spgemm,
                        " selects the GPU setup products: it needs --backend gpu");
  TESSERA_REQUIRE_INPUT(backend == Backend::gpu || opt.setup != "device",
                        "--setup device builds the hierarchy on the GPU: it needs --backend gpu");
  return backend;
}

void print_problem(const Options& opt, const Problem& p, Backend backend) {
  std::printf("backend %s\n", to_string(backend));
  std::printf("A: %s, %lld rows, %lld nnz; near-null space %lld vector(s) (%s), block size %d; %s + AMG (%s-cycle, "
              "%s)\n",
              opt.a.describe().c_str(), (long long)p.a.rows, (long long)p.a.nnz(), (long long)p.nns.vectors.cols,
              p.nns_description.c_str(), p.nns.block_size, krylov_method(p.use_cg, opt.krylov).c_str(),
              opt.cycle.c_str(), opt.smoother.c_str());
  if (p.pmat)
    std::printf("%s\n", separate_kinds_line(p.nns.block_size, p.pmat->nnz()).c_str());
}

/// The serial reference: host setup (optionally a re-setup), then CG or FGMRES on the host.
AmgRun run_on_host(const Options& opt, const Problem& p, amg::Vector& x, const amg::KrylovOptions& ko) {
  AmgRun run;
  const amg::LevelOps ops = amg::host_reference_ops();
  Stopwatch setup_clock;
  amg::Hierarchy h = amg::setup(p.setup_matrix(), p.setup_nns(), opt.amg, ops);
  run.setup_s = setup_clock.seconds();
  run.stats = amg::statistics(h);  // of the first setup
  amg::print(stdout, run.stats);
  if (opt.resetup) {
    Stopwatch clock;
    amg::resetup(h, p.setup_matrix(), ops);
    run.resetup_s = clock.seconds();
    std::printf("re-setup (same pattern, values only): %.4f s, phases summed %.4f s\n", run.resetup_s,
                amg::statistics(h).times.total());
  }
  amg::AmgPreconditioner m(h);
  Stopwatch solve_clock;
  const amg::Preconditioner apply = [&](const amg::Vector& r, amg::Vector& z) { m.apply(r, z); };
  run.res = p.use_cg ? amg::pcg(p.a, p.b, x, apply, ko) : amg::fgmres(p.a, p.b, x, apply, ko);
  run.solve_s = solve_clock.seconds();
  run.extra = {{"setup_location", "host"}};
  return run;
}

/// Setup and solve on the path the backend and --setup select.
AmgRun setup_and_solve(const Options& opt, const Problem& p, Backend backend, amg::Vector& x) {
  const amg::KrylovOptions& ko = opt.krylov;
  if (backend == Backend::host) return run_on_host(opt, p, x, ko);
#if TESSERA_HAVE_CUDA
  SingleGpuProblem gpu{p.a, p.setup_matrix(), p.setup_nns(), p.b, opt.amg, opt.spgemm, opt.resetup, p.use_cg};
  gpu.cuda_graph = !opt.no_cuda_graph;
  gpu.solves = opt.solves;
  return opt.setup == "host" ? run_host_setup_on_gpu(gpu, x, ko) : run_device_setup(gpu, x, ko);
#else
  TESSERA_REQUIRE_INPUT(false, "--backend gpu: this build has no CUDA backend");
  return {};
#endif
}

/// Prints the solve and its figures of merit, writes the JSON (with the keys of the setup path
/// taken), runs the --compare baselines. Every single-process path shares it.
int report(const Options& opt, const std::vector<baselines::Baseline>& compare, const Problem& p, Backend backend,
           const AmgRun& run) {
  const amg::SolveResult& res = run.res;
  const amg::HierarchyStats& stats = run.stats;
  if (opt.krylov.history)
    for (std::size_t i = 0; i < res.history.size(); ++i) std::printf("  it %4zu  %.3e\n", i + 1, res.history[i]);
  const double nnz_ap = double(stats.nnz_ap);
  const double setup_fom = run.setup_s > 0 ? nnz_ap / run.setup_s : 0;
  const double solve_fom = run.solve_s > 0 ? nnz_ap * res.iterations / run.solve_s : 0;
  std::printf("%s: %s\n", res.converged() ? "converged" : "NOT converged", res.message.c_str());
  std::printf("iterations %d, true relative residual %.3e%s\n", res.iterations, res.relative_residual,
              second_pass_count(p.use_cg, opt.krylov, res).c_str());
  std::printf("setup %.4f s%s, solve %.4f s (%.2f ms/iteration)\n", run.setup_s,
              opt.resetup ? (" (re-setup " + std::to_string(run.resetup_s) + " s)").c_str() : "", run.solve_s,
              res.iterations ? 1e3 * run.solve_s / res.iterations : 0.0);
  const double repeated_ms = median_ms_per_iteration(run.repeated_solve_s, run.repeated_iterations);
  if (!run.repeated_solve_s.empty())
    std::printf("repeated solves (%zu, same initial guess): median %.4f s, %.3f ms/iteration, iterations %s\n",
                run.repeated_solve_s.size(), median(run.repeated_solve_s), repeated_ms,
                nlohmann::json(run.repeated_iterations).dump().c_str());
  std::printf("FOM: setup %.4e nnz/s, solve %.4e nnz*it/s\n", setup_fom, solve_fom);

  nlohmann::json out = {
      {"driver", "tessera-amg"}, {"tol", opt.krylov.rtol}, {"ranks", 1},
      {"matrix", opt.a.describe()}, {"rows", p.a.rows}, {"nnz", p.a.nnz()},
      {"near_null_vectors", p.nns.vectors.cols}, {"near_null", p.nns_description}, {"block_size", p.nns.block_size},
      {"smoother", opt.smoother}, {"cycle", opt.cycle}, {"pmat", opt.pmat}, {"backend", to_string(backend)},
      {"converged", res.converged()},
      {"status", amg::to_string(res.status)}, {"message", res.message}, {"iterations", res.iterations},
      {"relative_residual", res.relative_residual}, {"setup_seconds", run.setup_s}, {"solve_seconds", run.solve_s},
      {"operator_complexity", stats.operator_complexity}, {"grid_complexity", stats.grid_complexity},
      {"nnz_ap", stats.nnz_ap}, {"setup_fom", setup_fom}, {"solve_fom", solve_fom}, {"levels", levels_json(stats)},
      {"setup_phases", phases_json(stats.times)}, {"coarse_solver", stats.coarse_method}};
  add_krylov_keys(out, p.use_cg, opt.krylov, res);
  out["filtered_smoothing"] = opt.amg.filtered_smoothing;
  if (p.pmat) out["operator_complexity_over_a"] = operator_complexity_over_a(stats, p.a.nnz());
  if (opt.resetup) out["resetup_seconds"] = run.resetup_s;
  if (!run.repeated_solve_s.empty()) {
    out["repeated_solve_seconds"] = median(run.repeated_solve_s);
    out["repeated_ms_per_iteration"] = repeated_ms;
    out["repeated_solves"] = {{"seconds", run.repeated_solve_s}, {"iterations", run.repeated_iterations}};
  }
  out.update(run.extra);
  if (run.resetup_phases) out["resetup_phases"] = phases_json(*run.resetup_phases);
  if (opt.krylov.history) out["history"] = res.history;
  if (!compare.empty())
    out["compare"] = compare_with_baselines(opt, compare, p,
                                            tessera_row(opt, backend, p.use_cg, res, stats, run.setup_s, run.solve_s));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!opt.json.empty() && rank == 0) write_json(opt.json, out);  // one writer: ranks share the path
  return res.converged() ? 0 : kExitCheckFailed;
}

/// Parses the command line into `opt`; an exit code when the run ends here (--help, a bad option).
std::optional<int> parse_options(int argc, char** argv, Options& opt) {
  CLI::App app{"Tessera AMG: smoothed-aggregation AMG preconditioned CG / FGMRES (host, one GPU, or MPI ranks with a "
                "GPU each)"};
  add_options(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  opt.amg.smoother = amg::parse_smoother(opt.smoother);
  opt.amg.cycle = amg::parse_cycle(opt.cycle);
  opt.krylov.gram_schmidt = amg::parse_gram_schmidt(opt.gram_schmidt);
  return std::nullopt;
}

int run(int argc, char** argv) {
  Options opt;
  if (const std::optional<int> exit_code = parse_options(argc, argv, opt)) return *exit_code;
  const std::vector<baselines::Baseline> compare = baselines::parse_baseline_list(opt.compare);  // fail fast
  const dist::Communicator comm;
  if (comm.size() > 1 || opt.distributed) return run_distributed(comm, opt, compare);
  TESSERA_REQUIRE_INPUT(opt.setups == 1 && opt.resetups == 0 && !opt.timeline && !opt.trace &&
                            opt.tentative == "auto" && opt.merge == "auto" && opt.transpose_p == "auto" &&
                            opt.galerkin_operands == "auto" && opt.solve_operands == "auto",
                        "--setups, --resetups, --timeline, --trace, --tentative, --merge, --transpose-p, "
                        "--galerkin-operands and --solve-operands apply to the distributed AMG "
                        "(--distributed or several ranks)");
  TESSERA_REQUIRE_INPUT(opt.halo == "auto", "--halo ", opt.halo,
                        " chooses how GPUs exchange halos in the distributed AMG (--distributed or several ranks)");

  const Problem p = load_problem(comm, opt);
  const Backend backend = choose_backend(opt);
  TESSERA_REQUIRE_INPUT(opt.solves == 1 || backend == Backend::gpu,
                        "--solves repeats the GPU solves (--backend gpu, one GPU or distributed): this run is on the "
                        "host backend");
  print_problem(opt, p, backend);
  amg::Vector x(p.b.size(), 0.0);
  const AmgRun run = setup_and_solve(opt, p, backend, x);
  return report(opt, compare, p, backend, run);
}

}  // namespace
}  // namespace tessera::driver

int main(int argc, char** argv) { return tessera::driver::run_driver(argc, argv, "tessera-amg", tessera::driver::run); }
