#include "drivers/amg_distributed.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/near_null_space.hpp"
#include "amg/separate_kinds.hpp"
#include "dist/backend_choice.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/host_threads.hpp"
#include "dist/read_matrix_market.hpp"
#include "dist/transpose.hpp"
#include "drivers/amg_distributed_backend.hpp"
#include "drivers/amg_distributed_solve.hpp"
#include "drivers/amg_pmat.hpp"
#include "drivers/amg_result_row.hpp"
#include "drivers/common/dist_source.hpp"
#include "drivers/common/driver_main.hpp"
#include "drivers/common/huge_pages.hpp"
#include "drivers/common/trace_report.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/page_faults.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"

#if TESSERA_HAVE_CUDA
#include "local/cuda/host_copy.hpp"
#endif

namespace tessera::driver {
namespace {

using dist::RowPartition;
using dist_amg::Devices;
using dist_amg::SetupPlacement;
using dist_amg::SolvePhase;
using dist_amg::UploadedHierarchy;
using dist_amg::open_devices;
using dist_amg::print_device_solve;
using dist_amg::print_timeline;
using dist_amg::repeated_ms_per_iteration;
using dist_amg::slowest;
using dist_amg::solve;
using dist_amg::upload_hierarchy;

/// Rows dealt in whole units of lcm(8, block size): tile-rows for the kernels, whole nodes for
/// aggregation (a 3-dof node never spans two ranks).
RowPartition node_aligned_partition(const dist::Communicator& comm, std::int64_t rows, int block_size) {
  const std::int64_t unit = std::lcm<std::int64_t>(8, block_size);
  const std::int64_t units = (rows + unit - 1) / unit;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(comm.size()) + 1, 0);
  for (int r = 1; r <= comm.size(); ++r)
    offsets[r] = std::min(rows, unit * (units * r / comm.size()));
  return RowPartition::from_offsets(comm, rows, offsets);
}

std::vector<double> owned_right_hand_side(const dist::Communicator& comm, const DistributedAmgOptions& o,
                                          const dist::DistMatrix& a) {
  if (o.b_file.empty()) return std::vector<double>(static_cast<std::size_t>(a.owned_rows()), 1.0);
  const io::MatrixMarketHeader h = io::read_matrix_market_header(o.b_file);
  TESSERA_REQUIRE_INPUT(h.rows == a.global_rows() && h.cols == 1, "--b: expected a ", a.global_rows(),
                        " x 1 vector, got ", h.rows, " x ", h.cols);
  return dist::read_matrix_market_dense_rows(comm, o.b_file, a.row_begin(), a.row_begin() + a.owned_rows()).data;
}

/// The setup phase: the first whole setup and, with --setups N, N - 1 more from scratch.
struct SetupPhase {
  double seconds = 0;                      // the first setup, slowest rank
  std::int64_t page_faults_max = 0;        // host page faults of the first setup, largest rank
  std::int64_t page_faults_sum = 0;        // ... summed over ranks
  std::vector<double> repeated_seconds;    // setups 2..N, slowest rank each
  std::vector<std::int64_t> repeated_page_faults_max;
  std::vector<trace::StepTotal> last_trace;  // --trace: this rank's steps in the last setup
  // GPU: the hierarchy's upload for the device solve after setups 1..N-1, slowest rank each
  // (each freed before the next setup); the caller uploads after setup N and keeps that one.
  std::vector<double> earlier_upload_seconds;
};

/// Each setup plus its hierarchy's upload for the device solve (`uploads`: after setups 1..N):
/// the first, and the median over setups 2..N (0 without repeats).
struct SetupPlusUpload {
  double first = 0, repeated_median = 0;
};

SetupPlusUpload setup_plus_upload(const SetupPhase& s, const std::vector<double>& uploads) {
  TESSERA_ASSERT(uploads.size() == s.repeated_seconds.size() + 1, uploads.size(), " uploads for ",
                 s.repeated_seconds.size() + 1, " setups");
  SetupPlusUpload sum{s.seconds + uploads[0], 0};
  std::vector<double> repeated;
  for (std::size_t k = 0; k < s.repeated_seconds.size(); ++k)
    repeated.push_back(s.repeated_seconds[k] + uploads[k + 1]);
  if (!repeated.empty()) sum.repeated_median = median(repeated);
  return sum;
}

/// The figures that a deterministic setup reproduces: level sizes exactly, the eigen estimates
/// to rounding (Tessera's own device products and SpMVs repeat bit for bit, but NCCL and MPI
/// do not promise their reductions the same order on every call).
bool same_hierarchy(const amg::HierarchyStats& x, const amg::HierarchyStats& y) {
  if (x.levels.size() != y.levels.size()) return false;
  for (std::size_t l = 0; l < x.levels.size(); ++l) {
    const amg::LevelStats &a = x.levels[l], &b = y.levels[l];
    if (a.rows != b.rows || a.nnz != b.nnz || a.p_nnz != b.p_nnz) return false;
    if (!(std::abs(a.lambda_max - b.lambda_max) <= 1e-10 * std::abs(a.lambda_max))) return false;
  }
  return true;
}

/// Collective. Builds the hierarchy `setups` times from scratch, each timed from a barrier; the
/// first is reported as setup_seconds, the last is returned. Each repeat replaces the previous
/// hierarchy after it is destroyed, as an application rebuilding its preconditioner would: a
/// repeat reuses memory the process already touched, so first against repeated separates the
/// cost of fresh pages from the cost of the work. `inspect(hierarchy, k)` runs after setup k's
/// timer stops (its collectives are not timed); a repeat that builds a different hierarchy is
/// a bug, for `inspect` to throw on.
///
/// `build(a)` takes `a` over as the hierarchy's level 0 (no copy: hypre's setup, too, keeps a
/// reference to the caller's matrix); each repeat takes it back from the hierarchy it replaces.
template <class Build, class Inspect>
amg::DistAmg timed_setups(const dist::Communicator& comm, int setups, dist::DistMatrix&& a, Build&& build,
                          Inspect&& inspect, SetupPhase& s) {
  std::optional<amg::DistAmg> m;
  for (int k = 0; k < setups; ++k) {
    if (m) a = std::move(*m).release_fine_operator();
    m.reset();
    comm.barrier();
    trace::reset();
    const std::int64_t faults_before = host_page_faults();
    Stopwatch clock;
    m.emplace(build(std::move(a)));
    if (trace::enabled()) s.last_trace = trace::totals();
    const double seconds = slowest(comm, clock.seconds());
    const std::int64_t faults = host_page_faults() - faults_before;
    const std::int64_t faults_max = comm.allreduce(faults, dist::ReduceOp::max);
    inspect(*m, k);
    if (k == 0) {
      s.seconds = seconds;
      s.page_faults_max = faults_max;
      s.page_faults_sum = comm.allreduce(faults, dist::ReduceOp::sum);
      continue;
    }
    s.repeated_seconds.push_back(seconds);
    s.repeated_page_faults_max.push_back(faults_max);
  }
  return std::move(*m);
}

/// The re-setup phase: --resetups N re-setups with the same pattern and values, each followed
/// on the GPUs by the refresh of the uploaded hierarchy's values (timed apart).
struct ResetupPhase {
  double seconds = 0, refresh_seconds = 0;  // the first, slowest rank
  std::vector<double> repeated_seconds, repeated_refresh_seconds;  // re-setups 2..N, slowest rank each
  std::vector<trace::StepTotal> last_trace;  // --trace: this rank's steps in the last one
};

/// Collective. Re-sets `m` up `resetups` times on `a`, each timed from a barrier, and then runs
/// `refresh` (the device hierarchy's values; empty on the host), timed apart; --trace traces
/// both (the barrier between them shows as mpi.barrier). The first re-setup
/// also records where P's values come from; the later ones replay that record
/// (amg/dist/dist_hierarchy.hpp), so first and repeated are reported apart.
ResetupPhase timed_resetups(const dist::Communicator& comm, int resetups, amg::DistAmg& m, const dist::DistMatrix& a,
                            const std::function<void()>& refresh) {
  ResetupPhase r;
  for (int k = 0; k < resetups; ++k) {
    comm.barrier();
    trace::reset();
    Stopwatch clock;
    m.resetup(a);
    const double seconds = slowest(comm, clock.seconds());
    double refresh_seconds = 0;
    if (refresh) {
      comm.barrier();
      Stopwatch refresh_clock;
      refresh();  // traced as device_refresh
      refresh_seconds = slowest(comm, refresh_clock.seconds());
    }
    if (trace::enabled()) r.last_trace = trace::totals();
    if (k == 0) {
      r.seconds = seconds, r.refresh_seconds = refresh_seconds;
    } else {
      r.repeated_seconds.push_back(seconds);
      r.repeated_refresh_seconds.push_back(refresh_seconds);
    }
  }
  return r;
}

/// Collective: CG for a symmetric A, FGMRES otherwise (--solver auto; cg or gmres choose). A
/// generated problem is symmetric by its kind; a file's matrix is compared with its transpose.
bool uses_cg(const dist::Communicator& comm, const DistributedAmgOptions& o, const dist::DistMatrix& a) {
  const bool use_cg = o.solver == "cg" ||
                      (o.solver == "auto" && (!o.a.spec.empty() ? gen::is_symmetric(gen::parse_spec(o.a.spec))
                                                                : dist::is_symmetric(comm, a)));
  return use_cg;
}

/// Slowest rank's time in each part of the device setup products (seconds), and the most
/// products a rank ran, on tiles and on cuSPARSE (the rest on the hash SpGEMM).
nlohmann::json product_times(const dist::Communicator& comm, const cuda::OffloadStats& s) {
  const auto most = [&](int n) { return comm.allreduce(std::int64_t(n), dist::ReduceOp::max); };
  return {{"products", most(s.products)},
          {"tile_products", most(s.tile_products)},
          {"cusparse_products", most(s.cusparse_products)},
          {"product_s", slowest(comm, s.product)},
          {"convert_s", slowest(comm, s.convert)},
          {"transfer_s", slowest(comm, s.transfers())},
          {"total_s", slowest(comm, s.total())}};
}

/// The options that only the GPU solve reads, refused on the host.
void check_solve_options(const DistributedAmgOptions& o) {
  TESSERA_REQUIRE_INPUT(!o.timeline || o.backend == Backend::gpu, "--timeline times the GPU solve (--backend gpu)");
  TESSERA_REQUIRE_INPUT(o.halo == "auto" || o.backend == Backend::gpu, "--halo ", o.halo,
                        " chooses how GPUs exchange halos (--backend gpu)");
}

/// The problem as this rank holds it: its rows of A, of the near-null space and of b, and with
/// --pmat separate-kinds the hierarchy's own matrix beside A.
struct DistProblem {
  std::int64_t rows = 0, nnz = 0;  // A's, global
  int block_size = 1;
  std::string near_null_description;  // NearNullSource::describe()
  OwnedNearNull near_null;  // A's near-null space (and, for GAMG, its coordinates or orthonormal vectors)
  // The hierarchy's matrix, A or --pmat's, until the setups take it over (timed_setups).
  dist::DistMatrix hierarchy_a;
  // --pmat separate-kinds: A itself, which the Krylov method, the residual check and the
  // baselines read, and the hierarchy's near-null space (the constant, a scalar a dof).
  std::optional<dist::DistMatrix> krylov_a;
  amg::NearNullSpace scalar_near_null;
  std::vector<double> b;
  bool use_cg = true;
  std::string method;  // krylov_method()

  const amg::NearNullSpace& hierarchy_near_null() const { return krylov_a ? scalar_near_null : near_null.space; }
};

/// Collective. Each rank generates or reads its rows (whole nodes: node_aligned_partition);
/// rank 0 prints what the problem is.
DistProblem load_problem(const dist::Communicator& comm, const DistributedAmgOptions& o) {
  DistProblem p;
  const auto [rows, cols] = global_shape(o.a);
  TESSERA_REQUIRE_INPUT(rows == cols, "A must be square, it is ", rows, "x", cols);
  p.rows = rows;
  const NearNullSource near_null(o.a, o.near_null, rows);
  p.block_size = near_null.block_size();
  p.near_null_description = near_null.describe();
  const RowPartition part = node_aligned_partition(comm, rows, p.block_size);
  p.hierarchy_a = load_distributed(comm, o.a, part, part);
  const dist::DistMatrix& a = p.hierarchy_a;
  p.near_null = owned_near_null(comm, near_null, a.row_begin(), a.row_begin() + a.owned_rows());
  p.b = owned_right_hand_side(comm, o, a);
  p.nnz = comm.allreduce(a.nnz(), dist::ReduceOp::sum);
  p.use_cg = uses_cg(comm, o, a);
  p.method = krylov_method(p.use_cg, o.krylov);
  if (comm.rank() == 0)
    std::printf("A: %s, %lld rows, %lld nnz on %d rank(s); near-null space %lld vector(s) (%s), block size %d; %s + "
                "AMG\n",
                o.a.describe().c_str(), (long long)rows, (long long)p.nnz, comm.size(),
                (long long)p.near_null.space.vectors.cols, p.near_null_description.c_str(), p.block_size,
                p.method.c_str());
  if (o.pmat == "separate-kinds") {
    require_kinds_to_separate(p.block_size);
    p.krylov_a.emplace(std::move(p.hierarchy_a));
    p.hierarchy_a =
        dist::assemble(comm, amg::without_cross_kind_couplings(dist::owned_row_block(*p.krylov_a), p.block_size), part);
    p.scalar_near_null = amg::constant_near_null_space(p.hierarchy_a.owned_rows(), 1);
    const std::int64_t pmat_nnz = comm.allreduce(p.hierarchy_a.nnz(), dist::ReduceOp::sum);
    if (comm.rank() == 0) std::printf("%s\n", separate_kinds_line(p.block_size, pmat_nnz).c_str());
  }
  return p;
}

/// What a run measured, for its report and its JSON.
struct DistRun {
  SetupPhase setup;
  amg::HierarchyStats stats;       // the first setup's (global figures, alike on every rank)
  nlohmann::json setup_products;   // GPU: the first setup's products (product_stats then keeps adding up)
  std::int64_t threads_min = 0, threads_max = 0;  // host threads a rank
  nlohmann::json setup_trace, upload_trace, resetup_trace;  // --trace
  std::vector<double> uploads;     // GPU: the hierarchy's upload after setups 1..N
  ResetupPhase resetups;
  bool refreshes = false;          // the re-setups refresh the uploaded hierarchy (GPU)
  bool transfer_on_gpus = false;   // the re-setups after the first ran their transfer on the GPUs
  SolvePhase solve;
};

/// Collective. --setups N setups from scratch on the problem's hierarchy matrix (taken over:
/// the returned hierarchy holds it as level 0). Each setup but the last is uploaded as the solve
/// would upload it, timed, and freed: so the first setup's upload is timed cold and the later
/// ones in a process that has run one, as the repeated setups are (the last setup's upload is
/// the solve's, upload_for_solve).
amg::DistAmg run_setups(const dist::Communicator& comm, const DistributedAmgOptions& o, DistProblem& p,
                        const amg::DistSetupBackend& backend, Devices& devices,
                        const std::shared_ptr<cuda::OffloadStats>& product_stats, DistRun& run) {
  const auto build = [&](dist::DistMatrix&& taken) {
    return amg::DistAmg(comm, std::move(taken), p.hierarchy_near_null(), o.amg, backend);
  };
  const auto inspect = [&](const amg::DistAmg& built, int k) {
    if (k + 1 < o.setups && o.backend == Backend::gpu)
      run.setup.earlier_upload_seconds.push_back(upload_hierarchy(comm, devices, o, built).seconds);
    const amg::HierarchyStats built_stats = built.statistics();  // collective
    if (k > 0) {
      TESSERA_ASSERT(same_hierarchy(run.stats, built_stats), "a repeated setup built a different hierarchy");
      return;
    }
    run.stats = built_stats;
    if (product_stats) run.setup_products = product_times(comm, *product_stats);
  };
  return timed_setups(comm, o.setups, std::move(p.hierarchy_a), build, inspect, run.setup);
}

/// Collective; rank 0 prints. The hierarchy, where its steps ran, the host's threads and page
/// faults, the repeated setups, and --trace's steps of the last setup.
void report_setup(const dist::Communicator& comm, const DistributedAmgOptions& o, const amg::DistAmg& m,
                  const SetupPlacement& placement, bool tracing, DistRun& run) {
  const bool root = comm.rank() == 0;
  const std::vector<int> active = m.active_ranks();  // collective
  if (root) amg::print(stdout, run.stats, active);
  if (root && !run.setup_products.is_null()) dist_amg::print_placement(o, placement, run.setup_products);
  run.threads_min = comm.allreduce(std::int64_t{host::threads()}, dist::ReduceOp::min);
  run.threads_max = comm.allreduce(std::int64_t{host::threads()}, dist::ReduceOp::max);
  const SetupPhase& s = run.setup;
  if (root) {
    std::printf("host threads a rank (the setup's host loops): %lld to %lld; rank 0: %s\n", (long long)run.threads_min,
                (long long)run.threads_max, dist::host_threads_summary().c_str());
    std::printf("host page faults in the setup: %lld on the largest rank, %lld in all; host heap: %s\n",
                (long long)s.page_faults_max, (long long)s.page_faults_sum, host_heap_pages().c_str());
    if (!s.repeated_seconds.empty())
      std::printf("repeated setups (%zu, each from scratch after the previous hierarchy is freed, same hierarchy): "
                  "median %.4f s, all %s s; host page faults on the largest rank %s\n",
                  s.repeated_seconds.size(), median(s.repeated_seconds),
                  nlohmann::json(s.repeated_seconds).dump().c_str(),
                  nlohmann::json(s.repeated_page_faults_max).dump().c_str());
  }
  if (tracing)
    run.setup_trace = report_step_trace(comm, detail::concat("step trace of setup ", o.setups, " of ", o.setups),
                                        s.last_trace);
}

/// Collective. The last setup's hierarchy uploaded for the device solve (GPU; nothing on the
/// host), with --trace's steps of that upload, and every setup's upload listed.
UploadedHierarchy upload_for_solve(const dist::Communicator& comm, Devices& devices, const DistributedAmgOptions& o,
                                   const amg::DistAmg& m, bool tracing, DistRun& run) {
  if (tracing) trace::reset();
  UploadedHierarchy uploaded = upload_hierarchy(comm, devices, o, m);
  if (tracing && uploaded.on_devices())
    run.upload_trace =
        report_step_trace(comm, "step trace of the hierarchy's upload for the device solve", trace::totals());
  run.uploads = run.setup.earlier_upload_seconds;  // after setups 1..N (GPU)
  run.uploads.push_back(uploaded.seconds);
  if (comm.rank() == 0 && uploaded.on_devices() && run.uploads.size() > 1)
    std::printf("hierarchy uploads for the device solve after setups 1 to %d (each but the last freed before the next "
                "setup): %s s\n",
                o.setups, nlohmann::json(run.uploads).dump().c_str());
  return uploaded;
}

/// Collective; rank 0 prints. --resetups N re-setups of `m` with A's values (each followed on
/// the GPUs by the refresh of the uploaded hierarchy), and --trace's steps of the last.
void run_resetups(const dist::Communicator& comm, const DistributedAmgOptions& o, amg::DistAmg& m,
                  UploadedHierarchy& uploaded, bool tracing, DistRun& run) {
  const std::function<void()> refresh = uploaded.refresh();
  run.refreshes = static_cast<bool>(refresh);
  // A re-setup is handed new values in the caller's matrix, which it checks and copies into
  // level 0: a copy of A plays that matrix (made here, untimed, and only for re-setups).
  const dist::DistMatrix& fine = m.fine_operator();
  const std::optional<dist::DistMatrix> new_values =
      o.resetups > 0 ? std::optional<dist::DistMatrix>(fine) : std::nullopt;
  const ResetupPhase& r = run.resetups = timed_resetups(comm, o.resetups, m, new_values ? *new_values : fine, refresh);
  // Planned by the first re-setup where the backend has a transfer on the devices, then run.
  run.transfer_on_gpus = m.hierarchy().levels.front().transfer_plan != nullptr;
  if (comm.rank() == 0 && o.resetups > 0) {
    std::printf("re-setup (same pattern, values only; records where P's values come from%s): %.4f s\n",
                run.transfer_on_gpus ? " and plans the later ones' transfer on the GPUs" : "", r.seconds);
    if (refresh)
      std::printf("  then the uploaded hierarchy's values refreshed on the GPUs: %.4f s (its upload after the "
                  "setup: %.4f s)\n",
                  r.refresh_seconds, uploaded.seconds);
    if (!r.repeated_seconds.empty())
      std::printf("repeated re-setups (%zu, replaying that record%s): median %.4f s, all %s s\n",
                  r.repeated_seconds.size(), run.transfer_on_gpus ? "; P, R and A_c on the GPUs" : "",
                  median(r.repeated_seconds), nlohmann::json(r.repeated_seconds).dump().c_str());
    if (refresh && !r.repeated_refresh_seconds.empty())
      std::printf("  then their refreshes on the GPUs: median %.4f s, all %s s\n", median(r.repeated_refresh_seconds),
                  nlohmann::json(r.repeated_refresh_seconds).dump().c_str());
  }
  if (tracing && o.resetups > 0)
    run.resetup_trace = report_step_trace(
        comm,
        detail::concat("step trace of re-setup ", o.resetups, " of ", o.resetups,
                       refresh ? " and of its device refresh (device_refresh)" : ""),
        r.last_trace);
}

double setup_fom(const DistRun& run) {
  return run.setup.seconds > 0 ? double(run.stats.nnz_ap) / run.setup.seconds : 0;
}

double solve_fom(const DistRun& run) {
  return run.solve.seconds > 0 ? double(run.stats.nnz_ap) * run.solve.res.iterations / run.solve.seconds : 0;
}

/// Rank 0's report of the solve: history, convergence, residual, times, figures of merit.
void print_solve(const DistributedAmgOptions& o, const DistProblem& p, const DistRun& run, int ranks) {
  const amg::SolveResult& res = run.solve.res;
  const bool gpu = o.backend == Backend::gpu;
  if (o.krylov.history)
    for (std::size_t i = 0; i < res.history.size(); ++i) std::printf("  it %4zu  %.3e\n", i + 1, res.history[i]);
  std::printf("%s: %s\n", res.converged() ? "converged" : "NOT converged", res.message.c_str());
  if (gpu) print_device_solve(run.solve, ranks);
  if (!run.solve.timeline.is_null()) print_timeline(run.solve.timeline);
  std::printf("iterations %d, true relative residual %.3e%s%s\n", res.iterations, res.relative_residual,
              gpu ? " (recomputed on the host from the device solution)" : "",
              second_pass_count(p.use_cg, o.krylov, res).c_str());
  std::printf("setup %.4f s, solve %.4f s (%.2f ms/iteration), slowest rank\n", run.setup.seconds, run.solve.seconds,
              res.iterations ? 1e3 * run.solve.seconds / res.iterations : 0.0);
  // The solve on the GPUs waits for the upload too: the setup's cost to a user is the sum.
  if (gpu && o.setups > 1) {
    const SetupPlusUpload sum = setup_plus_upload(run.setup, run.uploads);
    std::printf("setup + upload of the hierarchy: first %.4f s, repeated %.4f s (median of setups 2 to %d, each with "
                "its own upload)\n",
                sum.first, sum.repeated_median, o.setups);
  } else if (gpu) {
    std::printf("setup + upload of the hierarchy: %.4f s\n", run.setup.seconds + run.solve.upload_seconds);
  }
  const SolvePhase& s = run.solve;
  if (!s.repeated_seconds.empty())
    std::printf("repeated solves (%zu, same initial guess): median %.4f s, %.3f ms/iteration, iterations %s%s\n",
                s.repeated_seconds.size(), median(s.repeated_seconds), repeated_ms_per_iteration(s),
                nlohmann::json(s.repeated_iterations).dump().c_str(),
                s.repeated_graph_captures ? " (the cycle was captured again inside them)" : "");
  std::printf("FOM: setup %.4e nnz/s, solve %.4e nnz*it/s\n", setup_fom(run), solve_fom(run));
}

/// The --json keys of the problem and the solve's result (issue 6's required keys among them).
nlohmann::json result_keys(const DistributedAmgOptions& o, const DistProblem& p, const DistRun& run, int ranks) {
  const amg::SolveResult& res = run.solve.res;
  nlohmann::json out = {
      {"driver", "tessera-amg"}, {"tol", o.krylov.rtol}, {"matrix", o.a.describe()}, {"rows", p.rows},
      {"nnz", p.nnz}, {"ranks", ranks}, {"near_null_vectors", p.near_null.space.vectors.cols},
      {"near_null", p.near_null_description}, {"block_size", p.block_size}, {"pmat", o.pmat},
      {"backend", to_string(o.backend)}, {"distributed", true}, {"converged", res.converged()},
      {"status", amg::to_string(res.status)}, {"message", res.message}, {"iterations", res.iterations},
      {"relative_residual", res.relative_residual}, {"setup_seconds", run.setup.seconds},
      {"solve_seconds", run.solve.seconds}, {"operator_complexity", run.stats.operator_complexity},
      {"grid_complexity", run.stats.grid_complexity}, {"nnz_ap", run.stats.nnz_ap}, {"setup_fom", setup_fom(run)},
      {"solve_fom", solve_fom(run)}, {"levels", static_cast<int>(run.stats.levels.size())}};
  add_krylov_keys(out, p.use_cg, o.krylov, res);
  if (p.krylov_a) out["operator_complexity_over_a"] = operator_complexity_over_a(run.stats, p.nnz);
  if (o.krylov.history) out["history"] = res.history;
  return out;
}

/// The --json keys of the setups, the hierarchy's uploads and the re-setups.
void add_setup_keys(nlohmann::json& out, const DistributedAmgOptions& o, const DistRun& run) {
  const SetupPhase& s = run.setup;
  if (!run.setup_trace.is_null()) out["setup_step_trace"] = {{"setup", o.setups}, {"steps", run.setup_trace}};
  if (!run.upload_trace.is_null()) out["upload_step_trace"] = {{"steps", run.upload_trace}};
  out["setup_page_faults"] = {{"max_rank", s.page_faults_max}, {"all_ranks", s.page_faults_sum}};
  out["host_heap"] = host_heap_pages();
  out["host_threads_per_rank"] = {{"min", run.threads_min}, {"max", run.threads_max}};
  if (!s.repeated_seconds.empty()) {
    out["repeated_setup_seconds"] = median(s.repeated_seconds);
    out["repeated_setups"] = {{"seconds", s.repeated_seconds}, {"page_faults_max_rank", s.repeated_page_faults_max}};
    if (o.backend == Backend::gpu) {
      const SetupPlusUpload sum = setup_plus_upload(s, run.uploads);
      out["setup_plus_upload_seconds"] = {{"first", sum.first}, {"repeated_median", sum.repeated_median}};
    }
  }
  const ResetupPhase& r = run.resetups;
  if (o.resetups > 0) {
    out["resetup_seconds"] = r.seconds;
    out["resetup_transfer"] = run.transfer_on_gpus ? "device" : "host";  // of the re-setups after the first
  }
  if (!r.repeated_seconds.empty()) {
    out["repeated_resetup_seconds"] = median(r.repeated_seconds);
    out["repeated_resetups"] = r.repeated_seconds;
  }
  if (run.refreshes && o.resetups > 0) {
    out["resetup_refresh_seconds"] = r.refresh_seconds;
    if (!r.repeated_refresh_seconds.empty()) {
      out["repeated_resetup_refresh_seconds"] = median(r.repeated_refresh_seconds);
      out["repeated_resetup_refreshes"] = r.repeated_refresh_seconds;
    }
  }
  if (!run.resetup_trace.is_null()) out["resetup_step_trace"] = {{"resetup", o.resetups}, {"steps", run.resetup_trace}};
  if (!run.setup_products.is_null()) out["device_setup_products"] = run.setup_products;
}

/// The --json keys of the solve's repeats, and of the GPUs: memory, uploads, CUDA graph, halo route.
void add_solve_keys(nlohmann::json& out, const DistributedAmgOptions& o, const DistRun& run, double context_seconds) {
  const SolvePhase& s = run.solve;
  if (!s.timeline.is_null()) out["timeline"] = s.timeline;
  if (!s.repeated_seconds.empty()) {
    out["repeated_solve_seconds"] = median(s.repeated_seconds);
    out["repeated_ms_per_iteration"] = repeated_ms_per_iteration(s);
    out["repeated_solves"] = {{"seconds", s.repeated_seconds}, {"iterations", s.repeated_iterations}};
  }
  if (!s.halo_routes.is_null()) out["halo_routes"] = s.halo_routes;
  if (o.backend != Backend::gpu) return;
  out["device"] = {{"context_seconds", context_seconds},
                   {"upload_seconds", s.upload_seconds},
                   {"hierarchy_upload_seconds", run.uploads},
                   {"first_cycle_seconds", s.warmup_seconds},
                   {"hierarchy_bytes_max_rank", s.hierarchy_bytes_max},
                   {"hierarchy_bytes_total", s.hierarchy_bytes_sum},
                   {"peak_bytes_max_rank", s.peak_bytes_max},
                   {"device_relative_residual", s.device_relative_residual},
                   {"coarse_method", s.coarse_method},
                   {"first_replicated_level", s.first_replicated},
                   {"cuda_graph", s.cuda_graph},
                   {"halo_route", s.halo_route},
                   {"device_transport", s.device_transport},
                   {"cuda_graph_captures", {{"first_solve", s.graph_captures},
                                            {"repeated_solves", s.repeated_graph_captures}}}};
#if TESSERA_HAVE_CUDA
  out["device"]["host_copies"] = cuda::to_string(cuda::host_copy_path_taken());  // rank 0's large copies
#endif
}

/// Collective. --compare: hypre BoomerAMG and PETSc GAMG on the same rows of A, the same b and
/// the same Krylov method and stopping test; rank 0 prints the table beside Tessera's row.
nlohmann::json compare_with_baselines(const dist::Communicator& comm, const DistributedAmgOptions& o,
                                      const DistProblem& p, const DistRun& run, const dist::DistMatrix& krylov_operator,
                                      const SetupPlacement& placement) {
  baselines::BaselineOptions bo;
  match_krylov(bo, p.use_cg, o.krylov);
  bo.block_size = p.block_size;
  bo.coordinates = p.near_null.coordinates;  // rigid-body modes: GAMG gets the same geometry
  bo.near_null = p.near_null.orthonormal;    // --near-null: and the same vectors
  const auto results = baselines::run_baselines(comm.mpi(), o.compare, dist::owned_row_block(krylov_operator), p.b, bo);
  baselines::BaselineResult mine = amg_result_row(run.solve.res, run.stats, run.setup.seconds, run.solve.seconds);
  mine.solver = "Tessera SA-AMG-" + p.method;
  mine.runs_on = dist_amg::where_tessera_ran(o, placement, comm.size());
  const std::string& coarse = run.solve.coarse_method.empty() ? run.stats.coarse_method : run.solve.coarse_method;
  mine.configuration = detail::concat(p.method, " + smoothed aggregation, ", run.stats.levels.size(),
                                      " levels, coarsest ", coarse, p.krylov_a ? kSeparateKindsConfiguration : "");
  if (comm.rank() == 0) baselines::print_comparison(stdout, o.krylov.rtol, mine, results);
  return baselines::comparison_json(mine, results);
}

}  // namespace

int run_distributed_amg(const dist::Communicator& comm, const DistributedAmgOptions& o, nlohmann::json& out) {
  check_solve_options(o);
  DistProblem p = load_problem(comm, o);
  // The setup's products (A P_tent, P^T A P) on the ranks' GPUs with the gpu backend, and its
  // graph phases, eigenvalue estimates, QR, merge and transposes too unless --setup host (and
  // the switches beside it); the symbolic phases of the products stay on the host.
  std::shared_ptr<cuda::OffloadStats> product_stats;
  if (o.backend == Backend::gpu) product_stats = std::make_shared<cuda::OffloadStats>();
  const dist::LocalSpgemm local_product = dist::local_spgemm_for(comm, o.backend, o.spgemm, product_stats);
  const SetupPlacement placement = dist_amg::setup_placement(o);
  Devices devices = open_devices(comm, o);  // declared before the hierarchy, which uses it
  const amg::DistSetupBackend backend = dist_amg::setup_backend(devices, o, placement, local_product, product_stats);
  const bool tracing = agree_on_tracing(comm, o.trace);
  trace::set_enabled(tracing);  // the setups and re-setups only: the solves run untraced
  DistRun run;
  amg::DistAmg m = run_setups(comm, o, p, backend, devices, product_stats, run);
  report_setup(comm, o, m, placement, tracing, run);
  UploadedHierarchy uploaded = upload_for_solve(comm, devices, o, m, tracing, run);  // after m: destroyed first
  run_resetups(comm, o, m, uploaded, tracing, run);
  trace::set_enabled(false);

  // A, or --pmat's matrix that the hierarchy holds as level 0.
  const dist::DistMatrix& krylov_operator = p.krylov_a ? *p.krylov_a : m.fine_operator();
  std::vector<double> x(p.b.size(), 0.0);
  run.solve = solve(comm, devices, uploaded, o, m, krylov_operator, p.b, x, p.use_cg);
  if (comm.rank() == 0) print_solve(o, p, run, comm.size());
  out = result_keys(o, p, run, comm.size());
  add_setup_keys(out, o, run);
  dist_amg::add_placement_keys(out, placement);
  add_solve_keys(out, o, run, devices.seconds);
  if (!o.compare.empty()) out["compare"] = compare_with_baselines(comm, o, p, run, krylov_operator, placement);
  if (!run.solve.routes_agree) return kExitCheckFailed;  // a route that changes the solve is a bug
  return run.solve.res.converged() ? 0 : kExitCheckFailed;
}

}  // namespace tessera::driver
