// tessera-amg: smoothed-aggregation AMG as the preconditioner of CG (SPD) or FGMRES.
//   tessera-amg --gen poisson3d:64 --tol 1e-8 --json out.json
//   tessera-amg --gen elasticity3d:16                      (rigid-body modes from the grid)
//   tessera-amg --A matrix.mtx.gz [--b rhs.mtx] --smoother l1-jacobi --cycle W --history
//   mpirun -np 4 tessera-amg --gen poisson3d:64 --compare hypre,gamg   (baselines side by side)
// One rank: the serial reference hierarchy (CG or FGMRES). Several ranks (or --distributed):
// each rank generates/reads its rows and the distributed AMG (amg::DistAmg) runs PCG.
// One rank with --backend gpu (auto: when a GPU is present): the whole setup on the device
// (--setup device, the default: amg::gpu::device_setup, the hierarchy stays on the GPU) or the
// host setup with its products offloaded (--setup host); products on the tile SpGEMM
// (--spgemm cusparse: cuSPARSE, the ablation); the cycle and CG on the device. Several
// ranks with --backend gpu (auto: when every rank has a GPU of its own): the distributed setup
// on the host, then the cycle and CG on the GPUs (NCCL halo exchanges). Prints the level table, the setup phases, iterations, the true final
// relative residual, setup and solve times, complexities and AMG2023's figures of merit.
// Exit codes: 0 converged, 1 not converged, 2 bad input.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "amg/cycle.hpp"
#include "amg/hierarchy_stats.hpp"
#include "amg/krylov.hpp"
#include "dist/backend_choice.hpp"
#include "dist/communicator.hpp"
#include "drivers/amg_distributed.hpp"
#include "drivers/amg_result_row.hpp"
#include "drivers/baselines/compare.hpp"
#include "drivers/common/driver_main.hpp"
#include "drivers/common/matrix_source.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "local/core/backend.hpp"
#include "local/reference/kernels.hpp"

#if TESSERA_HAVE_CUDA
#include "amg/cuda/device_cycle.hpp"
#include "amg/cuda/device_hierarchy.hpp"
#include "amg/cuda/device_level_ops.hpp"
#include "amg/cuda/device_pcg.hpp"
#include "local/cuda/spmv_plan.hpp"
#endif

namespace tessera::driver {
namespace {

struct Options {
  MatrixSource a;
  std::string b_file, json, compare, smoother = "chebyshev", cycle = "V", null_space = "auto", solver = "auto";
  std::string backend = "auto", spgemm = "tile", setup = "auto";
  double tol = 1e-8;
  int max_it = 500, block_size = 0, stagnation = 0;
  bool history = false, resetup = false, distributed = false;
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

/// Constant (per component) by default; the rigid-body modes for generated elasticity.
amg::NearNullSpace near_null_space(const Options& opt, const Csr<double>& a) {
  const bool generated = !opt.a.spec.empty();
  const gen::ProblemSpec spec = generated ? gen::parse_spec(opt.a.spec) : gen::ProblemSpec{};
  const int block = opt.block_size ? opt.block_size : generated ? gen::block_size(spec) : 1;
  const bool rigid = opt.null_space == "rigid-body" || (opt.null_space == "auto" && generated && block == 3);
  if (!rigid) return amg::constant_near_null_space(a.rows, block);
  TESSERA_REQUIRE_INPUT(generated, "--null-space rigid-body needs coordinates: use --gen with a grid problem");
  return amg::rigid_body_modes(gen::coordinates(spec, 0, a.rows), a.rows);
}

amg::Vector right_hand_side(const Options& opt, const Csr<double>& a) {
  if (opt.b_file.empty()) return amg::Vector(static_cast<std::size_t>(a.rows), 1.0);
  const DenseMatrix b = io::read_matrix_market_dense(opt.b_file);
  TESSERA_REQUIRE_INPUT(b.rows == a.rows && b.cols == 1, "--b: expected a ", a.rows, " x 1 vector, got ", b.rows, " x ",
                        b.cols);
  return b.data;
}

void add_options(CLI::App& app, Options& opt) {
  app.add_option("--gen", opt.a.spec, "generate A: poisson3d:N poisson3d27:N elasticity3d:N poisson2d:N");
  app.add_option("--A", opt.a.file, "Matrix Market file for A (.mtx or .mtx.gz)");
  app.add_option("--b", opt.b_file, "right-hand side (Matrix Market array); default all ones");
  app.add_option("--tol", opt.tol, "relative residual tolerance")->check(CLI::PositiveNumber);
  app.add_option("--max-it", opt.max_it, "iteration limit")->check(CLI::NonNegativeNumber);
  app.add_option("--solver", opt.solver, "auto (CG if A is symmetric, else FGMRES), cg, gmres")
      ->check(CLI::IsMember({"auto", "cg", "gmres"}));
  app.add_option("--smoother", opt.smoother, "chebyshev | l1-jacobi")->check(CLI::IsMember({"chebyshev", "l1-jacobi"}));
  app.add_option("--degree", opt.amg.chebyshev_degree, "Chebyshev degree")->check(CLI::PositiveNumber);
  app.add_option("--sweeps", opt.amg.jacobi_sweeps, "l1-Jacobi sweeps")->check(CLI::PositiveNumber);
  app.add_option("--cycle", opt.cycle, "V | W")->check(CLI::IsMember({"V", "W", "v", "w"}));
  app.add_option("--threshold", opt.amg.strength_threshold, "strength threshold (default 0.08)");
  app.add_option("--coarse-size", opt.amg.coarse_size, "rows of the coarsest level (default 2000)");
  app.add_option("--max-levels", opt.amg.max_levels, "maximum number of levels");
  app.add_option("--null-space", opt.null_space, "auto (rigid-body for generated elasticity), constant, rigid-body")
      ->check(CLI::IsMember({"auto", "constant", "rigid-body"}));
  app.add_option("--block-size", opt.block_size, "dofs per node (default: from the generator, else 1)");
  app.add_option("--stagnation-window", opt.stagnation, "stop after this many iterations without a new smallest residual")
      ->check(CLI::PositiveNumber);
  app.add_option("--backend", opt.backend, "auto (GPU when present; several ranks: when each has its own), host, gpu")
      ->check(CLI::IsMember({"auto", "host", "gpu"}));
  app.add_option("--spgemm", opt.spgemm, "GPU setup products: tile (tensor-core tile SpGEMM) or cusparse (ablation)")
      ->check(CLI::IsMember({"tile", "cusparse"}));
  app.add_option("--setup", opt.setup,
                 "where one GPU builds the hierarchy: device (the whole setup on the GPU, the hierarchy stays "
                 "there; the default with --backend gpu) or host (host phases, products offloaded)")
      ->check(CLI::IsMember({"auto", "device", "host"}));
  app.add_flag("--resetup", opt.resetup, "also time a re-setup with the same pattern (the repeated setup)");
  app.add_flag("--history", opt.history, "print the residual of every iteration");
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
  r.solver = use_cg ? "Tessera SA-AMG-CG" : "Tessera SA-AMG-FGMRES";
  r.runs_on = backend == Backend::gpu ? "one GPU (cycle and CG on the device)" : "host reference, serial";
  r.configuration = detail::concat(use_cg ? "CG" : "FGMRES", " + smoothed aggregation ", opt.cycle, "-cycle, ",
                                   opt.smoother, ", threshold ", opt.amg.strength_threshold, ", ",
                                   stats.levels.size(), " levels, coarsest ", stats.coarse_method);
  return r;
}

/// Runs the --compare baselines on the same A and b; rank 0 prints the table.
nlohmann::json compare_with_baselines(const Options& opt, const std::vector<baselines::Baseline>& which,
                                      const Csr<double>& a, const amg::NearNullSpace& nns, const amg::Vector& b,
                                      const baselines::BaselineResult& tessera) {
  baselines::BaselineOptions bo;
  bo.rtol = opt.tol;
  bo.max_iterations = opt.max_it;
  bo.block_size = nns.block_size;
  if (nns.vectors.cols > nns.block_size)  // rigid-body modes: hand GAMG the same geometry
    bo.coordinates = gen::coordinates(gen::parse_spec(opt.a.spec), 0, a.rows);
  const std::vector<baselines::BaselineResult> results = baselines::run_baselines(MPI_COMM_WORLD, which, a, b, bo);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) baselines::print_comparison(stdout, opt.tol, tessera, results);
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

#if TESSERA_HAVE_CUDA
/// CG with the AMG cycle, all on the device: uploads the hierarchy (timed apart: `upload_s`),
/// then times the solve alone, as the host path does; x comes back to the host.
amg::SolveResult solve_on_gpu(const amg::Hierarchy& h, const Csr<double>& a, const amg::Vector& b, amg::Vector& x,
                              const amg::KrylovOptions& ko, double& upload_s, double& solve_s) {
  Stopwatch upload_clock;
  amg::gpu::DeviceAmgPreconditioner m(h);
  const cuda::DeviceCsr<double> da = cuda::upload(a);
  const cuda::SpmvPlan plan = cuda::make_spmv_plan(da);
  cuda::DeviceBuffer<double> db, dx;
  db.upload(b);
  dx.upload(x);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  upload_s = upload_clock.seconds();
  std::printf("device hierarchy: %.1f MiB uploaded in %.4f s\n", double(m.device_bytes()) / (1 << 20), upload_s);
  Stopwatch solve_clock;
  const amg::gpu::DevicePreconditioner apply = [&](const double* r, double* z) { m.apply(r, z); };
  amg::SolveResult res = amg::gpu::device_pcg(da, plan, db.data(), dx.data(), apply, ko);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  solve_s = solve_clock.seconds();
  x = dx.download();
  return res;
}

void print_device_setup(const amg::gpu::DeviceSetupStats& s, const std::string& spgemm) {
  std::printf("device setup products (%s SpGEMM, %d products): %.4f s = product %.4f + convert %.4f + transfers %.4f "
              "(up %.4f, down %.4f)\n",
              spgemm.c_str(), s.products, s.total(), s.product, s.convert, s.transfers(), s.upload, s.download);
}

/// What the device-setup path hands back to run() for the report.
struct DeviceSetupRun {
  amg::HierarchyStats stats, resetup_stats;
  amg::SolveResult res;
  double a_upload_s = 0, setup_s = 0, resetup_s = 0, solve_s = 0, device_mib = 0;
};

/// The whole setup on the GPU (amg::gpu::device_setup), optionally a re-setup with the same
/// values, then CG with the preconditioner built on the device hierarchy in place. A's upload
/// is timed apart from the setup (the input, as hypre's setup time excludes it).
DeviceSetupRun run_device_setup(const Options& opt, const Csr<double>& a, const amg::NearNullSpace& nns,
                                const amg::Vector& b, amg::Vector& x, const amg::KrylovOptions& ko) {
  DeviceSetupRun run;
  Stopwatch upload_clock;
  const cuda::DeviceCsr<double> da = cuda::upload(a);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  run.a_upload_s = upload_clock.seconds();
  const cuda::OffloadSpgemm which = cuda::parse_offload_spgemm(opt.spgemm);
  Stopwatch setup_clock;
  amg::gpu::DeviceHierarchy h = amg::gpu::device_setup(da, nns, opt.amg, which);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  run.setup_s = setup_clock.seconds();
  run.stats = amg::gpu::statistics(h);
  amg::print(stdout, run.stats);
  run.device_mib = double(amg::gpu::device_bytes(h)) / (1 << 20);
  std::printf("device setup (%s SpGEMM): %.4f s, hierarchy %.1f MiB on the device; A uploaded in %.4f s\n",
              opt.spgemm.c_str(), run.setup_s, run.device_mib, run.a_upload_s);
  if (opt.resetup) {
    Stopwatch clock;
    amg::gpu::device_resetup(h, da.values.data());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    run.resetup_s = clock.seconds();
    run.resetup_stats = amg::gpu::statistics(h);
    std::printf("device re-setup (same pattern, values only): %.4f s, phases summed %.4f s\n", run.resetup_s,
                run.resetup_stats.times.total());
  }
  amg::gpu::DeviceAmgPreconditioner m(h);
  const cuda::SpmvPlan plan = cuda::make_spmv_plan(da);
  cuda::DeviceBuffer<double> db, dx;
  db.upload(b);
  dx.upload(x);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  Stopwatch solve_clock;
  const amg::gpu::DevicePreconditioner apply = [&](const double* r, double* z) { m.apply(r, z); };
  run.res = amg::gpu::device_pcg(da, plan, db.data(), dx.data(), apply, ko);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  run.solve_s = solve_clock.seconds();
  x = dx.download();
  return run;
}

nlohmann::json device_setup_json(const amg::gpu::DeviceSetupStats& s, const std::string& spgemm) {
  return {{"spgemm", spgemm}, {"products", s.products}, {"product_seconds", s.product}, {"convert_seconds", s.convert},
          {"upload_seconds", s.upload}, {"download_seconds", s.download}};
}
#endif

int run_distributed(const dist::Communicator& comm, const Options& opt, const std::vector<baselines::Baseline>& compare) {
  TESSERA_REQUIRE_INPUT(opt.solver != "gmres", "the distributed AMG runs CG (FGMRES is serial for now)");
  DistributedAmgOptions d;
  d.a = opt.a;
  d.b_file = opt.b_file;
  d.null_space = opt.null_space;
  d.block_size = opt.block_size;
  d.tol = opt.tol;
  d.max_iterations = opt.max_it;
  d.stagnation_window = opt.stagnation;
  d.history = opt.history;
  d.resetup = opt.resetup;
  d.amg = opt.amg;
  d.compare = compare;
  d.backend = dist::resolve_distributed_backend(comm, opt.backend);
  d.spgemm = opt.spgemm;
  nlohmann::json out;
  const int status = run_distributed_amg(comm, d, out);
  out["smoother"] = opt.smoother;
  out["cycle"] = opt.cycle;
  if (comm.rank() == 0 && !opt.json.empty()) write_json(opt.json, out);
  return status;
}

/// Prints the solve and its figures of merit, writes the JSON (`extra` adds the keys of the
/// setup path taken), runs the --compare baselines. The host and device setup paths share it.
int report(const Options& opt, const std::vector<baselines::Baseline>& compare, const Csr<double>& a,
           const amg::NearNullSpace& nns, const amg::Vector& b, Backend backend, bool use_cg,
           const amg::SolveResult& res, const amg::HierarchyStats& stats, double setup_s, double resetup_s,
           double solve_s, const std::function<void(nlohmann::json&)>& extra) {
  if (opt.history)
    for (std::size_t i = 0; i < res.history.size(); ++i) std::printf("  it %4zu  %.3e\n", i + 1, res.history[i]);
  const double nnz_ap = double(stats.nnz_ap);
  const double setup_fom = setup_s > 0 ? nnz_ap / setup_s : 0, solve_fom = solve_s > 0 ? nnz_ap * res.iterations / solve_s : 0;
  std::printf("%s: %s\n", res.converged() ? "converged" : "NOT converged", res.message.c_str());
  std::printf("iterations %d, true relative residual %.3e\n", res.iterations, res.relative_residual);
  std::printf("setup %.4f s%s, solve %.4f s (%.2f ms/iteration)\n", setup_s,
              opt.resetup ? (" (re-setup " + std::to_string(resetup_s) + " s)").c_str() : "", solve_s,
              res.iterations ? 1e3 * solve_s / res.iterations : 0.0);
  std::printf("FOM: setup %.4e nnz/s, solve %.4e nnz*it/s\n", setup_fom, solve_fom);

  nlohmann::json out = {
      {"driver", "tessera-amg"}, {"tol", opt.tol}, {"ranks", 1},
      {"matrix", opt.a.describe()}, {"rows", a.rows}, {"nnz", a.nnz()}, {"solver", use_cg ? "cg" : "fgmres"},
      {"smoother", opt.smoother}, {"cycle", opt.cycle}, {"backend", to_string(backend)}, {"converged", res.converged()},
      {"status", amg::to_string(res.status)}, {"message", res.message}, {"iterations", res.iterations},
      {"relative_residual", res.relative_residual}, {"setup_seconds", setup_s}, {"solve_seconds", solve_s},
      {"operator_complexity", stats.operator_complexity}, {"grid_complexity", stats.grid_complexity},
      {"nnz_ap", stats.nnz_ap}, {"setup_fom", setup_fom}, {"solve_fom", solve_fom}, {"levels", levels_json(stats)},
      {"setup_phases", phases_json(stats.times)}, {"coarse_solver", stats.coarse_method}};
  if (opt.resetup) out["resetup_seconds"] = resetup_s;
  extra(out);
  if (opt.history) out["history"] = res.history;
  if (!compare.empty())
    out["compare"] = compare_with_baselines(opt, compare, a, nns, b, tessera_row(opt, backend, use_cg, res, stats, setup_s, solve_s));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!opt.json.empty() && rank == 0) write_json(opt.json, out);  // one writer: ranks share the path
  return res.converged() ? 0 : kExitCheckFailed;
}

int run(int argc, char** argv) {
  Options opt;
  CLI::App app{"Tessera AMG: smoothed-aggregation AMG preconditioned CG / FGMRES (host reference backend)"};
  add_options(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  opt.amg.smoother = amg::parse_smoother(opt.smoother);
  opt.amg.cycle = amg::parse_cycle(opt.cycle);
  const std::vector<baselines::Baseline> compare = baselines::parse_baseline_list(opt.compare);  // fail fast
  const dist::Communicator comm;
  if (comm.size() > 1 || opt.distributed) return run_distributed(comm, opt, compare);

  const Csr<double> a = load_matrix(opt.a, "A (--A or --gen)");
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "A must be square, it is ", a.rows, "x", a.cols);
  const amg::NearNullSpace nns = near_null_space(opt, a);
  const amg::Vector b = right_hand_side(opt, a);
  const bool use_cg = opt.solver == "cg" || (opt.solver == "auto" && is_symmetric(a));
  TESSERA_REQUIRE_INPUT(compare.empty() || use_cg, "--compare runs CG baselines: it needs a symmetric A and CG");
  Backend backend = resolve_backend(opt.backend);
  if (backend == Backend::gpu && !use_cg) {
    TESSERA_REQUIRE_INPUT(opt.backend == "auto", "--backend gpu runs CG: A must be symmetric (FGMRES is host only)");
    backend = Backend::host;
  }
  TESSERA_REQUIRE_INPUT(backend == Backend::gpu || opt.spgemm == "tile", "--spgemm ", opt.spgemm,
                        " selects the GPU setup products: it needs --backend gpu");
  TESSERA_REQUIRE_INPUT(backend == Backend::gpu || opt.setup != "device",
                        "--setup device builds the hierarchy on the GPU: it needs --backend gpu");
  const bool device_setup = backend == Backend::gpu && opt.setup != "host";
  std::printf("backend %s\n", to_string(backend));
  std::printf("A: %s, %lld rows, %lld nnz; near-null space %lld vector(s), block size %d; %s + AMG (%s-cycle, %s)\n",
              opt.a.describe().c_str(), (long long)a.rows, (long long)a.nnz(), (long long)nns.vectors.cols,
              nns.block_size, use_cg ? "CG" : "FGMRES", opt.cycle.c_str(), opt.smoother.c_str());

  amg::KrylovOptions ko;
  ko.rtol = opt.tol;
  ko.max_iterations = opt.max_it;
  ko.history = opt.history;
  if (opt.stagnation) ko.stagnation_window = opt.stagnation;
  amg::Vector x(b.size(), 0.0);
#if TESSERA_HAVE_CUDA
  if (device_setup) {
    const DeviceSetupRun run = run_device_setup(opt, a, nns, b, x, ko);
    return report(opt, compare, a, nns, b, backend, use_cg, run.res, run.stats, run.setup_s, run.resetup_s,
                  run.solve_s, [&](nlohmann::json& out) {
                    out["setup_location"] = "device";
                    out["spgemm"] = opt.spgemm;
                    out["a_upload_seconds"] = run.a_upload_s;
                    out["device_hierarchy_mib"] = run.device_mib;
                    if (opt.resetup) out["resetup_phases"] = phases_json(run.resetup_stats.times);
                  });
  }
#endif
  amg::LevelOps setup_ops = amg::host_reference_ops();
#if TESSERA_HAVE_CUDA
  const auto device_stats = std::make_shared<amg::gpu::DeviceSetupStats>();
  if (backend == Backend::gpu) setup_ops = amg::gpu::device_setup_ops(amg::gpu::parse_setup_spgemm(opt.spgemm), device_stats);
#endif
  Stopwatch setup_clock;
  amg::Hierarchy h = amg::setup(a, nns, opt.amg, setup_ops);
  const double setup_s = setup_clock.seconds();
  const amg::HierarchyStats stats = amg::statistics(h);  // of the first setup
  amg::print(stdout, stats);
#if TESSERA_HAVE_CUDA
  if (backend == Backend::gpu) print_device_setup(*device_stats, opt.spgemm);
  const amg::gpu::DeviceSetupStats first_setup_stats = *device_stats;
#endif
  double resetup_s = 0;
  if (opt.resetup) {
    Stopwatch clock;
#if TESSERA_HAVE_CUDA
    *device_stats = {};
#endif
    amg::resetup(h, a, setup_ops);
    resetup_s = clock.seconds();
    std::printf("re-setup (same pattern, values only): %.4f s, phases summed %.4f s\n", resetup_s,
                amg::statistics(h).times.total());
#if TESSERA_HAVE_CUDA
    if (backend == Backend::gpu) print_device_setup(*device_stats, opt.spgemm);
#endif
  }

  amg::SolveResult res;
  double solve_s = 0;
  [[maybe_unused]] double upload_s = 0;
#if TESSERA_HAVE_CUDA
  if (backend == Backend::gpu) res = solve_on_gpu(h, a, b, x, ko, upload_s, solve_s);
#endif
  if (backend == Backend::host) {
    amg::AmgPreconditioner m(h);
    Stopwatch solve_clock;
    const amg::Preconditioner apply = [&](const amg::Vector& r, amg::Vector& z) { m.apply(r, z); };
    res = use_cg ? amg::pcg(a, b, x, apply, ko) : amg::fgmres(a, b, x, apply, ko);
    solve_s = solve_clock.seconds();
  }

  return report(opt, compare, a, nns, b, backend, use_cg, res, stats, setup_s, resetup_s, solve_s,
                [&](nlohmann::json& out) {
                  out["setup_location"] = "host";
#if TESSERA_HAVE_CUDA
                  if (backend == Backend::gpu) {
                    out["device_setup"] = device_setup_json(first_setup_stats, opt.spgemm);
                    if (opt.resetup) out["device_resetup"] = device_setup_json(*device_stats, opt.spgemm);
                    out["hierarchy_upload_seconds"] = upload_s;
                  }
#endif
                });
}

}  // namespace
}  // namespace tessera::driver

int main(int argc, char** argv) { return tessera::driver::run_driver(argc, argv, "tessera-amg", tessera::driver::run); }
