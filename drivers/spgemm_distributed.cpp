#include "drivers/spgemm_distributed.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "dist/ptap.hpp"
#include "dist/spgemm.hpp"
#include "dist/transpose.hpp"
#include "drivers/common/dist_report.hpp"
#include "drivers/common/dist_source.hpp"
#include "drivers/common/driver_main.hpp"
#include "drivers/common/overflow_check.hpp"
#include "drivers/common/trace_report.hpp"
#include "drivers/product_check.hpp"
#include "local/core/error.hpp"
#include "local/reference/kernels.hpp"
#if defined(TESSERA_HAVE_CUDA)
#include "dist/cuda/device_dist_ptap.hpp"
#include "dist/cuda/device_dist_spgemm.hpp"
#include "dist/cuda/device_local_spgemm.hpp"
#endif

namespace tessera::driver {
namespace {

using dist::DistMatrix;
using dist::RowPartition;

constexpr std::int64_t kAggregateSize = 8;  // the default P: one coarse point per 8 fine rows

/// Rows [begin, end) of the piecewise-constant aggregation prolongator P(i, i/8) = 1: the
/// simplest Galerkin test operator, until the AMG provides the smoothed one.
RowBlock aggregation_prolongator_rows(std::int64_t n, std::int64_t begin, std::int64_t end) {
  RowBlock p;
  p.global_rows = n;
  p.global_cols = (n + kAggregateSize - 1) / kAggregateSize;
  p.row_begin = begin;
  p.row_end = end;
  for (std::int64_t i = begin; i < end; ++i) {
    p.col.push_back(i / kAggregateSize);
    p.values.push_back(1.0);
    p.row_ptr.push_back(p.nnz());
  }
  return p;
}

double timed_max(const dist::Communicator& comm, double seconds) { return comm.allreduce(seconds, dist::ReduceOp::max); }

/// Times `reps` numeric-only recomputations (median of the slowest rank per repetition).
template <class Product, class... Operands>
double time_recompute(const dist::Communicator& comm, Product& product, int reps, const Operands&... operands) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    comm.barrier();
    Stopwatch clock;
    product.recompute(comm, operands...);
    times.push_back(timed_max(comm, clock.seconds()));
  }
  return median(times);
}

void print_shape(const dist::Communicator& comm, const char* name, const DistMatrix& m) {
  const std::int64_t nnz = comm.allreduce(m.nnz(), dist::ReduceOp::sum);
  if (comm.rank() == 0)
    std::printf("%-4s %12lld x %-12lld nnz %13lld\n", name, (long long)m.global_rows(), (long long)m.global_cols(),
                (long long)nnz);
}

/// This rank's offloaded local products in seconds (all zero on the host backend). Plain
/// doubles, so the host build of the driver needs no CUDA header.
struct DeviceTimes {
  double upload = 0, convert = 0, product = 0, download = 0, products = 0;
  double total() const { return upload + convert + product + download; }
  std::vector<double> as_vector() const { return {upload, convert, product, download, products}; }
  DeviceTimes per_call(const DeviceTimes& before, int calls) const {
    const double n = calls > 0 ? calls : 1;
    return {(upload - before.upload) / n, (convert - before.convert) / n, (product - before.product) / n,
            (download - before.download) / n, (products - before.products) / n};
  }
};

/// The rank-local product plugged into DistSpgemm / DistPtap, and its cumulative device times.
struct LocalBackend {
  std::string name;  // host | tile | cusparse
  dist::LocalSpgemm multiply;
  std::function<DeviceTimes()> so_far;
};

LocalBackend host_backend() {
  return {"host", dist::host_local_spgemm, [] { return DeviceTimes{}; }};
}

#if defined(TESSERA_HAVE_CUDA)
LocalBackend device_backend(cuda::OffloadSpgemm which) {
  auto stats = std::make_shared<cuda::OffloadStats>();
  return {cuda::to_string(which), dist::device_local_spgemm(which, stats), [stats] {
            return DeviceTimes{stats->upload, stats->convert, stats->product, stats->download, double(stats->products)};
          }};
}
#endif

struct ProductRun {
  std::string backend;
  DistMatrix c;
  dist::DistStats stats;                        // the first product (symbolic + numeric)
  double first_s = 0, numeric_s = 0;           // slowest rank; first: median whole product; numeric: median recompute
  std::vector<double> whole_s;                 // every timed whole product (slowest rank), the first first
  DeviceTimes device_first, device_recompute;  // this rank: first product; one recompute (mean)
  std::vector<trace::StepTotal> last_trace;    // --trace: this rank's steps in the last whole product
};

/// One whole product (symbolic + numeric) timed, slowest rank.
template <class Product>
double time_whole_product(const dist::Communicator& comm, const DistMatrix& a, const DistMatrix& b,
                          const LocalBackend& local, std::vector<trace::StepTotal>& steps) {
  comm.barrier();
  trace::reset();
  Stopwatch clock;
  const Product product(comm, a, b, local.multiply);
  if (trace::enabled()) steps = trace::totals();
  return timed_max(comm, clock.seconds());
}

/// The first whole product (kept: its statistics, its recomputations, C), `reps` numeric
/// recomputations, then `whole_reps - 1` more whole products, timed after the recomputations
/// so that the device counters of the first product and of one recomputation stay apart. A
/// whole product is mostly host work (tenths of a second), whose time varies by tens of
/// percent between runs; the median of several is the figure reported.
template <class Product>
ProductRun run_product(const dist::Communicator& comm, const DistMatrix& a, const DistMatrix& b, int reps,
                       int whole_reps, const LocalBackend& local) {
  ProductRun run;
  run.backend = local.name;
  comm.barrier();
  trace::reset();
  Stopwatch clock;
  Product product(comm, a, b, local.multiply);
  if (trace::enabled()) run.last_trace = trace::totals();
  run.stats = product.stats();
  run.whole_s.push_back(timed_max(comm, clock.seconds()));
  run.device_first = local.so_far();
  run.numeric_s = time_recompute(comm, product, reps, a, b);
  run.device_recompute = local.so_far().per_call(run.device_first, reps);
  run.c = product.result();
  for (int k = 1; k < whole_reps; ++k) run.whole_s.push_back(time_whole_product<Product>(comm, a, b, local, run.last_trace));
  run.first_s = median(run.whole_s);
  return run;
}

ProductRun run_op(const dist::Communicator& comm, const DistributedSpgemmOptions& o, const DistMatrix& a,
                  const DistMatrix& b, const LocalBackend& local) {
  if (o.op == "PtAP") return run_product<dist::DistPtap>(comm, a, b, o.reps, o.whole_reps, local);
  return run_product<dist::DistSpgemm>(comm, a, b, o.reps, o.whole_reps, local);
}

/// Untimed products through `local` (one-time device costs: context, cuSPARSE handle and
/// kernels, first allocations), so the timed run measures the steady state.
void warm_up(const dist::Communicator& comm, const DistributedSpgemmOptions& o, const DistMatrix& a,
             const DistMatrix& b, const LocalBackend& local) {
  for (int w = 0; w < o.warmup; ++w) {
    if (o.op == "PtAP") {
      const dist::DistPtap product(comm, a, b, local.multiply);
    } else {
      const dist::DistSpgemm product(comm, a, b, local.multiply);
    }
  }
}

/// One distributed product with `local`, warmed up first on the device.
ProductRun measure(const dist::Communicator& comm, const DistributedSpgemmOptions& o, const DistMatrix& a,
                   const DistMatrix& b, const LocalBackend& local, bool on_device) {
  if (on_device) warm_up(comm, o, a, b, local);
  const DeviceTimes before = local.so_far();
  ProductRun run = run_op(comm, o, a, b, local);
  run.device_first = run.device_first.per_call(before, 1);
  return run;
}

/// Per-rank table of the device local products (rank 0 prints), as JSON.
nlohmann::json report_device_times(const dist::Communicator& comm, const ProductRun& run) {
  std::vector<double> mine = run.device_first.as_vector();
  const std::vector<double> again = run.device_recompute.as_vector();
  mine.insert(mine.end(), again.begin(), again.end());
  const std::vector<double> all = comm.gatherv(mine, 0);
  nlohmann::json j = nlohmann::json::array();
  if (comm.rank() != 0) return j;
  std::printf("device local products (%s), per rank, ms: first product | one numeric recompute (mean)\n"
              "  rank calls  upload convert product download |  upload convert product download\n",
              run.backend.c_str());
  for (std::size_t r = 0; r * 10 < all.size(); ++r) {
    const double* v = &all[10 * r];
    std::printf("  %4zu %5.0f %7.3f %7.3f %7.3f %8.3f | %7.3f %7.3f %7.3f %8.3f\n", r, v[4], 1e3 * v[0], 1e3 * v[1],
                1e3 * v[2], 1e3 * v[3], 1e3 * v[5], 1e3 * v[6], 1e3 * v[7], 1e3 * v[8]);
    j.push_back({{"first", {{"products", v[4]}, {"upload_s", v[0]}, {"convert_s", v[1]}, {"product_s", v[2]},
                            {"download_s", v[3]}}},
                 {"recompute", {{"upload_s", v[5]}, {"convert_s", v[6]}, {"product_s", v[7]}, {"download_s", v[8]}}}});
  }
  return j;
}

/// Prints and returns the timings of one run (rank 0 prints).
nlohmann::json report_run(const dist::Communicator& comm, const DistributedSpgemmOptions& o, const ProductRun& run,
                          bool on_device) {
  nlohmann::json j = {{"local_spgemm", run.backend},
                      {"time", {{"symbolic_and_numeric_s", run.first_s}, {"symbolic_and_numeric_all_s", run.whole_s},
                                {"numeric_median_s", run.numeric_s}}}};
  if (comm.rank() == 0)
    std::printf("time (slowest rank, local products: %s): symbolic+numeric %.4f s (median of %zu), numeric-only "
                "recompute %.4f s (median of %d)\n", run.backend.c_str(), run.first_s, run.whole_s.size(), run.numeric_s,
                o.reps);
  j["stats"] = report_dist_stats(comm, "C = " + o.op + " (" + run.backend + ")", run.stats);
  if (on_device) j["device"] = report_device_times(comm, run);
  return j;
}

/// Slowest rank's device time of the local products: kernels only, and with transfers and
/// conversions; first product and one recompute.
std::vector<double> slowest_local_products(const dist::Communicator& comm, const ProductRun& run) {
  std::vector<double> v{run.device_first.product, run.device_first.total(), run.device_recompute.product,
                        run.device_recompute.total()};
  comm.allreduce_in_place(v, dist::ReduceOp::max);
  return v;
}

nlohmann::json report_comparison(const dist::Communicator& comm, const ProductRun& tile, const ProductRun& base) {
  const std::vector<double> t = slowest_local_products(comm, tile), c = slowest_local_products(comm, base);
  const auto ratio = [](double num, double den) { return den > 0 ? num / den : 0.0; };
  const double whole[2][2] = {{tile.first_s, base.first_s}, {tile.numeric_s, base.numeric_s}};
  if (comm.rank() == 0) {
    std::printf("tile vs cuSPARSE local products (slowest rank; ratio = cusparse / tile, > 1: tile faster)\n");
    const char* names[4] = {"local SpGEMM kernels, first product", "local products with transfers, first product",
                            "local SpGEMM kernels, one recompute", "local products with transfers, one recompute"};
    for (int k = 0; k < 4; ++k)
      std::printf("  %-46s tile %9.3f ms  cusparse %9.3f ms  ratio %6.2f\n", names[k], 1e3 * t[k], 1e3 * c[k],
                  ratio(c[k], t[k]));
    std::printf("  %-46s tile %9.3f ms  cusparse %9.3f ms  ratio %6.2f\n", "whole product, symbolic+numeric",
                1e3 * whole[0][0], 1e3 * whole[0][1], ratio(whole[0][1], whole[0][0]));
    std::printf("  %-46s tile %9.3f ms  cusparse %9.3f ms  ratio %6.2f\n", "whole product, numeric recompute",
                1e3 * whole[1][0], 1e3 * whole[1][1], ratio(whole[1][1], whole[1][0]));
  }
  return {{"local_kernels_first_s", {t[0], c[0]}}, {"local_total_first_s", {t[1], c[1]}},
          {"local_kernels_recompute_s", {t[2], c[2]}}, {"local_total_recompute_s", {t[3], c[3]}},
          {"whole_first_s", {whole[0][0], whole[0][1]}}, {"whole_recompute_s", {whole[1][0], whole[1][1]}},
          {"order", {"tile", "cusparse"}}};
}

/// Gathers the operands and C to rank 0 and compares with the serial reference; collective.
bool check_against_reference(const dist::Communicator& comm, const DistributedSpgemmOptions& o, const DistMatrix& a,
                             const DistMatrix& b, const ProductRun& run, nlohmann::json& out) {
  const Csr<double> a_all = dist::gather(comm, a), b_all = dist::gather(comm, b), c_all = dist::gather(comm, run.c);
  int pass = 1;
  if (comm.rank() == 0) {
    const ProductComparison cmp = o.op == "PtAP" ? compare_galerkin(a_all, b_all, ref::ptap(a_all, b_all), c_all)
                                                 : compare_products(a_all, b_all, ref::spgemm(a_all, b_all), c_all);
    if (!cmp.pattern_equal) std::printf("check: pattern differs from the serial reference: %s\n", cmp.pattern_message.c_str());
    pass = report_check("distributed " + o.op + " (" + run.backend + " local products) vs serial reference",
                        cmp.max_relative_error, cmp.bound) &&
           cmp.pattern_equal;
    out = {{"pattern_equal", cmp.pattern_equal}, {"max_relative_error", cmp.max_relative_error},
           {"bound", cmp.bound}, {"pass", static_cast<bool>(pass)}};
  }
  MPI_Bcast(&pass, 1, MPI_INT, 0, comm.mpi());
  return pass != 0;
}

/// The operands: A, and B (--op AB), A^T (AAT), A (AA) or P (PtAP: --P, else aggregation).
std::pair<DistMatrix, DistMatrix> load_operands(const dist::Communicator& comm, const DistributedSpgemmOptions& o) {
  const int me = comm.rank();
  const auto [n_rows, n_cols] = global_shape(o.a);
  const RowPartition rows = choose_partition(comm, o.a, o.partition);
  DistMatrix a, b;  // C = a * b, or P^T a P with b = P
  if (o.op == "AA" || o.op == "PtAP") {
    TESSERA_REQUIRE_INPUT(n_rows == n_cols, "--op ", o.op, " needs a square A, got ", n_rows, "x", n_cols);
    a = load_distributed(comm, o.a, rows, rows);
  } else {
    a = load_distributed(comm, o.a, rows, RowPartition::balanced_rows(n_cols, comm.size()));
  }
  if (o.op == "AA") {
    b = load_distributed(comm, o.a, rows, rows);
  } else if (o.op == "AB") {
    const auto [b_rows, b_cols] = global_shape(o.b);
    TESSERA_REQUIRE_INPUT(b_rows == n_cols, "dimension mismatch: A is ", n_rows, "x", n_cols, " but B is ", b_rows, "x",
                          b_cols);
    b = load_distributed(comm, o.b, a.col_partition, RowPartition::balanced_rows(b_cols, comm.size()));
  } else if (o.op == "AAT") {
    b = dist::transpose(comm, a);
  } else if (o.p.given()) {
    const auto [p_rows, p_cols] = global_shape(o.p);
    TESSERA_REQUIRE_INPUT(p_rows == n_rows, "--P has ", p_rows, " rows but A has ", n_rows);
    b = load_distributed(comm, o.p, rows, RowPartition::balanced_rows(p_cols, comm.size()));
  } else {
    const std::int64_t coarse = (n_rows + kAggregateSize - 1) / kAggregateSize;
    b = dist::assemble(comm, aggregation_prolongator_rows(n_rows, rows.begin(me), rows.end(me)), rows,
                       RowPartition::balanced_rows(coarse, comm.size()));
  }
  return {std::move(a), std::move(b)};
}

/// The local product of the main run: the host reference, or the tile SpGEMM on the rank's GPU.
LocalBackend main_backend(const dist::Communicator& comm, const DistributedSpgemmOptions& o) {
  if (o.backend == Backend::host) return host_backend();
#if defined(TESSERA_HAVE_CUDA)
  const int device = dist::use_rank_device(comm);
  if (comm.rank() == 0) std::printf("local products on each rank's GPU (rank 0: device %d)\n", device);
  return device_backend(cuda::OffloadSpgemm::tile);
#else
  (void)comm;
  throw InputError("this build has no CUDA backend; use --backend host");
#endif
}

#if defined(TESSERA_HAVE_CUDA)
/// Collective: max |got - c| / max |c| over every rank's [local | non-local] values of C. Both
/// runs must hold C with the same pattern; a rank whose value counts differ makes every rank
/// throw (before any value is compared), never a read past the end.
double max_relative_difference(const dist::Communicator& comm, const std::vector<double>& got_local,
                               const std::vector<double>& got_nonlocal, const DistMatrix& c) {
  const bool same_sizes = got_local.size() == c.local.values.size() && got_nonlocal.size() == c.nonlocal.values.size();
  dist::throw_if_any_rank_failed(
      comm, same_sizes ? ""
                       : detail::concat("device-resident numeric: rank ", comm.rank(), " holds ", got_local.size(),
                                        " local + ", got_nonlocal.size(), " non-local values of C, the host-driven "
                                        "product ", c.local.values.size(), " + ", c.nonlocal.values.size()));
  double diff = 0, scale = 0;
  const auto compare = [&](const std::vector<double>& got, const HostArray<double>& want) {
    for (std::size_t k = 0; k < got.size(); ++k)
      diff = std::max(diff, std::fabs(got[k] - want[k])), scale = std::max(scale, std::fabs(want[k]));
  };
  compare(got_local, c.local.values);
  compare(got_nonlocal, c.nonlocal.values);
  diff = comm.allreduce(diff, dist::ReduceOp::max);
  scale = comm.allreduce(scale, dist::ReduceOp::max);
  return scale > 0 ? diff / scale : diff;
}

/// The device-resident numeric phase (DeviceDistSpgemm / DeviceDistPtap on a host symbolic
/// product): one-time setup, then `reps` recomputes timed to completion (median of the slowest
/// rank), and the largest difference to the host-driven result `c` relative to max |c|.
template <class Symbolic, class Device>
nlohmann::json time_device_numeric(const dist::Communicator& comm, const DistributedSpgemmOptions& o,
                                   const DistMatrix& a, const DistMatrix& b, const DistMatrix& c,
                                   double host_driven_s) {
  dist::gpu::DeviceContext ctx(comm);
  const Symbolic symbolic(comm, a, b);
  comm.barrier();
  Stopwatch setup_clock;
  // The setup is rank-local and may fail on one rank (device memory): agree before the first
  // recompute's NCCL exchange. The context is declared first, so it outlives them all.
  std::optional<Device> setup;
  std::optional<dist::gpu::DeviceDistMatrix> da_setup, db_setup, dc_setup;
  dist::call_collectively(comm, "device-resident numeric setup", [&] {
    setup.emplace(ctx, symbolic, a, b);
    da_setup.emplace(a, ctx.compute());
    db_setup.emplace(b, ctx.compute());
    dc_setup.emplace(symbolic.result(), ctx.compute());
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  });
  Device& device = *setup;
  dist::gpu::DeviceDistMatrix &da = *da_setup, &db = *db_setup, &dc = *dc_setup;
  const double setup_s = timed_max(comm, setup_clock.seconds());
  device.recompute(da, db, dc);  // warm-up
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  std::vector<double> times;
  for (int r = 0; r < o.reps; ++r) {
    comm.barrier();
    Stopwatch clock;
    device.recompute(da, db, dc);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
    times.push_back(timed_max(comm, clock.seconds()));
  }
  const double numeric_s = median(times);
  const double relative = max_relative_difference(comm, dc.local.values.download(ctx.compute()),
                                                  dc.nonlocal.values.download(ctx.compute()), c);
  if (comm.rank() == 0)
    std::printf("device-resident numeric recompute (slowest rank, %s transport): %.4f s (median of %d) vs host-driven "
                "%.4f s, speedup %.1fx; device setup (maps + tile symbolic) %.4f s; max |diff| / max |C| = %.2e\n",
                ctx.transport().name(), numeric_s, o.reps, host_driven_s,
                numeric_s > 0 ? host_driven_s / numeric_s : 0.0, setup_s, relative);
  return {{"numeric_median_s", numeric_s}, {"host_driven_numeric_median_s", host_driven_s}, {"setup_s", setup_s},
          {"max_relative_difference", relative}, {"device_transport", ctx.transport().name()}};
}

nlohmann::json report_device_numeric(const dist::Communicator& comm, const DistributedSpgemmOptions& o,
                                     const DistMatrix& a, const DistMatrix& b, const ProductRun& run) {
  if (o.op == "PtAP")
    return time_device_numeric<dist::DistPtap, dist::gpu::DeviceDistPtap>(comm, o, a, b, run.c, run.numeric_s);
  return time_device_numeric<dist::DistSpgemm, dist::gpu::DeviceDistSpgemm>(comm, o, a, b, run.c, run.numeric_s);
}
#endif

}  // namespace

int run_distributed_spgemm(const dist::Communicator& comm, const DistributedSpgemmOptions& o, nlohmann::json& out) {
  TESSERA_REQUIRE_INPUT(o.compare.empty() || (o.compare == "cusparse" && o.backend == Backend::gpu),
                        "--compare cusparse needs the GPU backend (got --compare '", o.compare, "', backend ",
                        to_string(o.backend), ")");
  const auto [a, b] = load_operands(comm, o);
  print_shape(comm, "A", a);
  print_shape(comm, o.op == "PtAP" ? "P" : "B", b);

  const bool on_device = o.backend == Backend::gpu;
  const bool tracing = agree_on_tracing(comm, o.trace);
  std::vector<ProductRun> runs;  // the main run, then the cuSPARSE comparison
  runs.reserve(2);                // `run` stays valid
  trace::set_enabled(tracing);    // the main run only
  runs.push_back(measure(comm, o, a, b, main_backend(comm, o), on_device));
  trace::set_enabled(false);
  const ProductRun& run = runs.front();
  dist::throw_if_any_rank_failed(comm, overflowed_entry(product_formula(o.op), Precision::fp64, run.c));
  print_shape(comm, "C", run.c);
  const nlohmann::json report = report_run(comm, o, run, on_device);
  if (tracing)
    out["step_trace"] = report_step_trace(
        comm, detail::concat("step trace of whole product ", o.whole_reps, " of ", o.whole_reps), run.last_trace);
  out["time"] = report["time"];
  out["stats"] = report["stats"];
  out["local_spgemm"] = run.backend;
  if (on_device) out["device"] = report["device"];
  out["ranks"] = comm.size();
  out["partition"] = o.partition;

#if defined(TESSERA_HAVE_CUDA)
  if (on_device) out["device_numeric"] = report_device_numeric(comm, o, a, b, run);
  if (o.compare == "cusparse") {
    runs.push_back(measure(comm, o, a, b, device_backend(cuda::OffloadSpgemm::cusparse), true));
    out["compare"] = {{"cusparse", report_run(comm, o, runs.back(), true)},
                      {"tile_vs_cusparse", report_comparison(comm, run, runs.back())}};
  }
#endif
  if (!o.check) return 0;
  bool pass = true;
  for (const ProductRun& r : runs) {
    nlohmann::json check;
    pass = check_against_reference(comm, o, a, b, r, check) && pass;
    if (comm.rank() == 0) (r.backend == run.backend ? out["check"] : out["compare"]["check_cusparse"]) = check;
  }
  return pass ? 0 : kExitCheckFailed;
}

}  // namespace tessera::driver
