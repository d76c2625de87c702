#include "drivers/spmv_distributed.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dist/backend_choice.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/spmv.hpp"
#include "drivers/common/dist_report.hpp"
#include "drivers/common/dist_source.hpp"
#include "drivers/common/driver_main.hpp"
#include "drivers/common/overflow_check.hpp"
#include "local/core/backend.hpp"
#include "local/core/error.hpp"
#include "local/gen/counter_rng.hpp"
#include "local/reference/kernels.hpp"
#if defined(TESSERA_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <memory>

#include "dist/cuda/device_spmv.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cusparse_spmv.hpp"
#include "local/cuda/spmm.hpp"
#include "local/cuda/spmv.hpp"
#endif

namespace tessera::driver {
namespace {

using dist::DistMatrix;
using dist::DistStats;
using dist::RowPartition;

constexpr std::uint64_t kFillSeed = 0x5eed5a11ull;

/// Every option that the distributed path cannot honour is refused, identically on every rank
/// (the options are the same everywhere), before any collective starts.
void require_supported(const DistributedSpmvOptions& o) {
  TESSERA_REQUIRE_INPUT(o.precision == "fp64",
                        "the distributed path runs in fp64 (its blocks hold doubles); got --precision ", o.precision);
  TESSERA_REQUIRE_INPUT(o.compare.empty() || o.compare == "cusparse", "--compare ", o.compare,
                        " is not available on the distributed path (cusparse is)");
  TESSERA_REQUIRE_INPUT(o.compare.empty() || o.backend != "host",
                        "--compare cusparse times the ranks' local blocks on their GPUs; it needs --backend gpu");
  TESSERA_REQUIRE_INPUT(!o.sweep, "--sweep times single-GPU kernel variants; run tessera-spmv on one rank for it");
  TESSERA_REQUIRE_INPUT(o.a.file.empty() || o.a.spec.empty(),
                        "both a file and a generator were given for A; choose one");
  TESSERA_REQUIRE_INPUT(o.k >= 1, "X needs at least one column, got k = ", o.k);
  TESSERA_REQUIRE_INPUT(o.halo == "auto" || o.backend != "host", "--halo ", o.halo,
                        " chooses how GPUs exchange halos; it needs --backend gpu");
}

/// "gpu" or "host", the same on every rank (dist::resolve_distributed_backend).
std::string choose_backend(const dist::Communicator& comm, const DistributedSpmvOptions& o) {
  const Backend b = dist::resolve_distributed_backend(comm, o.backend);
  TESSERA_REQUIRE_INPUT(b == Backend::gpu || o.compare.empty(), "--compare cusparse needs a GPU of its own on every rank");
  TESSERA_REQUIRE_INPUT(b == Backend::gpu || o.halo == "auto", "--halo ", o.halo, " needs a GPU on every rank");
  return to_string(b);
}

/// Rows [begin, end) of X (row-major, k columns), filled from the global row index.
std::vector<double> fill_rows(std::int64_t begin, std::int64_t end, std::int64_t k) {
  std::vector<double> x(static_cast<std::size_t>((end - begin) * k));
  for (std::int64_t i = begin; i < end; ++i)
    for (std::int64_t j = 0; j < k; ++j)
      x[static_cast<std::size_t>((i - begin) * k + j)] = distributed_fill_value(i, j, k);
  return x;
}

struct Timing {
  double median_seconds = 0;  // median over repetitions of the slowest rank's time
  DistStats stats;            // this rank, one product; times are medians over repetitions
};

/// Runs `multiply(DistStats*)` warmup + reps times; each repetition starts at a barrier and
/// counts as the slowest rank's time.
template <class Multiply>
Timing time_product(const dist::Communicator& comm, int warmup, int reps, Multiply&& multiply) {
  std::vector<double> slowest, exchange, compute;
  Timing t;
  for (int r = 0; r < warmup + reps; ++r) {
    DistStats one;
    comm.barrier();
    Stopwatch clock;
    multiply(&one);
    const double s = comm.allreduce(clock.seconds(), dist::ReduceOp::max);
    if (r < warmup) continue;
    slowest.push_back(s);
    exchange.push_back(one.exchange_seconds);
    compute.push_back(one.compute_seconds);
    t.stats = one;
  }
  t.median_seconds = median(slowest);
  t.stats.exchange_seconds = median(exchange);
  t.stats.compute_seconds = median(compute);
  return t;
}

/// Compulsory traffic of one product, the same formula on any rank count so GB/s compare:
/// A once as CSR (8-byte value + 4-byte column per entry, 8-byte row offsets), X once, Y once.
/// Halo messages are network traffic and are reported separately (per-rank halo bytes).
double model_bytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t k) {
  const double a = 12.0 * double(nnz) + 8.0 * double(rows + 1);
  return a + 8.0 * double(cols * k) + 8.0 * double(rows * k);
}

/// Largest |got - want| / (sum_p |a_ip x_pj|) over all outputs (row-major, k columns). An
/// output with zero scale must be exact; a NaN anywhere makes the result NaN (fails the check).
double max_relative_error(const Csr<double>& a, const std::vector<double>& x, std::int64_t k,
                          const std::vector<double>& want, const std::vector<double>& got) {
  double worst = 0;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      double scale = 0;
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        scale += std::abs(a.values[p] * x[static_cast<std::size_t>(a.col_idx[p] * k + j)]);
      const std::size_t at = static_cast<std::size_t>(i * k + j);
      if (std::isnan(got[at])) return std::numeric_limits<double>::quiet_NaN();
      const double err = std::abs(got[at] - want[at]);
      if (err > 0) worst = std::max(worst, scale > 0 ? err / scale : std::numeric_limits<double>::infinity());
    }
  return worst;
}

/// The bound the single-rank drivers use: two summation orders of a row of length m differ by
/// at most about (m + 3) * u relative to sum |a_ij x_j|, u = 2^-53 for fp64.
double error_bound(const Csr<double>& a) {
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) longest = std::max(longest, a.row_length(i));
  return double(longest + 3) * std::numeric_limits<double>::epsilon() / 2;
}

/// Collective: gathers A and Y to rank 0, compares with the serial reference there, and
/// agrees on the verdict. The gathered A is also compared with a serial load of the source,
/// so an assembly that lost or moved entries cannot pass by multiplying the wrong matrix.
bool check_against_reference(const dist::Communicator& comm, const DistributedSpmvOptions& o, const DistMatrix& a,
                             const std::vector<double>& y_owned, nlohmann::json& out) {
  const Csr<double> a_all = dist::gather(comm, a);
  const std::vector<double> y_all = comm.gatherv(y_owned, 0);
  int pass = 1;
  std::string error;  // rank 0's failure, shared so no rank is left waiting in the broadcast
  if (comm.rank() == 0) try {
    const bool same_matrix = a_all == load_matrix(o.a, "A");
    if (!same_matrix) std::printf("check: the gathered A differs from a serial load of %s\n", o.a.describe().c_str());
    const std::vector<double> x_all = fill_rows(0, a_all.cols, o.k);
    std::vector<double> want(static_cast<std::size_t>(a_all.rows * o.k));
    if (o.multi_vector) {
      DenseMatrix xm(a_all.cols, o.k, Layout::row_major), ym(a_all.rows, o.k, Layout::row_major);
      xm.data = x_all;
      ref::spmm(1.0, a_all, xm, 0.0, ym);
      want = ym.data;
    } else {
      ref::spmv(1.0, a_all, x_all, 0.0, want);
    }
    const double err = max_relative_error(a_all, x_all, o.k, want, y_all);
    const double bound = error_bound(a_all);
    const std::string what = std::string("distributed ") + (o.multi_vector ? "spmm" : "spmv") + " vs serial reference";
    pass = report_check(what, err, bound) && same_matrix;
    out["check"] = {{"max_relative_error", err}, {"bound", bound}, {"gathered_A_equals_serial_load", same_matrix},
                    {"pass", static_cast<bool>(pass)}};
  } catch (const std::exception& e) {
    error = e.what();
  }
  dist::throw_if_any_rank_failed(comm, error);
  MPI_Bcast(&pass, 1, MPI_INT, 0, comm.mpi());
  return pass != 0;
}

void print_banner(const dist::Communicator& comm, const DistributedSpmvOptions& o, const std::string& backend) {
  if (comm.rank() != 0) return;
  const char* op = o.multi_vector ? "spmm" : "spmv";
  std::printf("tessera-%s: distributed on %d rank(s), %s, partition by %s, %s backend%s\n", op, comm.size(),
              o.a.describe().c_str(), o.partition.c_str(), backend.c_str(),
              backend == "gpu" ? " (one GPU per rank, NCCL halo exchange)" : "");
  if (o.multi_vector)
    std::printf("X: k %lld, row-major%s\n", (long long)o.k,
                o.column_major_requested ? " (--layout col: the distributed path stores X row-major)" : "");
}

struct ProductRun {
  Timing timing;
  std::vector<double> y;   // this rank's rows of Y (row-major)
  nlohmann::json compare;  // --compare cusparse (rank 0), else null
  nlohmann::json halo_routes;  // --halo both (rank 0), else null
  bool routes_agree = true;    // --halo both: the two routes gave bitwise the same Y
};

ProductRun run_host(const dist::Communicator& comm, const DistributedSpmvOptions& o, const DistMatrix& a,
                    const std::vector<double>& x_owned) {
  dist::DistMultiVector x{o.k, x_owned, {}}, y;
  dist::DistVector xv{x_owned, {}};
  ProductRun run;
  run.timing = time_product(comm, o.warmup, o.reps, [&](DistStats* s) {
    if (o.multi_vector) {
      dist::spmm(comm, a, x, y, s);
    } else {
      dist::spmv(comm, a, xv, y.owned, s);
    }
  });
  run.y = std::move(y.owned);
  return run;
}

#if defined(TESSERA_HAVE_CUDA)
namespace gpu = dist::gpu;

/// Median over `reps` of one stream-ordered call, timed with events on `stream`.
template <class Call>
double median_event_seconds(cudaStream_t stream, int warmup, int reps, Call&& call) {
  cudaEvent_t begin = nullptr, end = nullptr;
  TESSERA_CUDA_CHECK(cudaEventCreate(&begin));
  TESSERA_CUDA_CHECK(cudaEventCreate(&end));
  std::vector<double> seconds;
  for (int r = 0; r < warmup + reps; ++r) {
    TESSERA_CUDA_CHECK(cudaEventRecord(begin, stream));
    call();
    TESSERA_CUDA_CHECK(cudaEventRecord(end, stream));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    if (r >= warmup) seconds.push_back(1e-3 * ms);
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return median(seconds);
}

/// Per rank: cuSPARSE (SpMV, or SpMM row-major) and Tessera's kernel on the same local block,
/// x and y; the non-local block and the exchange are not part of this comparison.
nlohmann::json compare_local_blocks(const dist::Communicator& comm, gpu::DeviceContext& ctx,
                                    gpu::DeviceDistMatrix& dev, const DistributedSpmvOptions& o, const double* x,
                                    double* y) {
  const cudaStream_t s = ctx.compute();
  double tessera_s = 0, cusparse_s = 0;
  if (dev.local.nnz > 0 && !o.multi_vector) {
    tessera_s = median_event_seconds(s, o.warmup, o.reps,
                                     [&] { cuda::spmv(dev.local_plan, 1.0, dev.local, x, 0.0, y, s); });
    cuda::CusparseSpmv<double> baseline(dev.local, "default", x, y, s);
    cusparse_s = median_event_seconds(s, o.warmup, o.reps, [&] { baseline.run(1.0, 0.0); });
  } else if (dev.local.nnz > 0) {
    const cuda::SpmmPlan plan = cuda::make_spmm_plan(dev.local, o.k, cuda::SpmmAlgorithm::automatic, s);
    tessera_s = median_event_seconds(
        s, o.warmup, o.reps, [&] { cuda::spmm(plan, 1.0, dev.local, x, 0.0, y, Layout::row_major, s); });
    cuda::CusparseSpmm<double> baseline(dev.local, o.k, Layout::row_major, "default", x, y, s);
    cusparse_s = median_event_seconds(s, o.warmup, o.reps, [&] { baseline.run(1.0, 0.0); });
  }
  const std::vector<double> all =
      comm.gatherv(std::vector<double>{double(dev.local.nnz), tessera_s, cusparse_s}, 0);
  nlohmann::json ranks = nlohmann::json::array();
  if (comm.rank() != 0) return ranks;
  std::printf("--compare cusparse: local block of each rank, same device arrays (%s)\n",
              o.multi_vector ? "cusparseSpMM row-major" : "cusparseSpMV");
  std::printf("%6s %12s %12s %12s %10s\n", "rank", "local nnz", "tessera ms", "cusparse ms", "cusp/tess");
  for (std::size_t r = 0; 3 * r < all.size(); ++r) {
    const double nnz = all[3 * r], t = all[3 * r + 1], c = all[3 * r + 2];
    const double ratio = t > 0 ? c / t : 0.0;
    std::printf("%6zu %12.0f %12.4f %12.4f %10.2f\n", r, nnz, 1e3 * t, 1e3 * c, ratio);
    ranks.push_back({{"rank", r}, {"local_nnz", nnz}, {"tessera_s", t}, {"cusparse_s", c}, {"ratio", ratio}});
  }
  return ranks;
}

/// Seconds per product of `count` back-to-back products, queued without waiting in between
/// (as a solver's iterations are), from a barrier to the slowest rank's end.
template <class Queue>
double stream_seconds_per_product(const dist::Communicator& comm, cudaStream_t s, int count, Queue&& queue) {
  comm.barrier();
  Stopwatch clock;
  for (int i = 0; i < count; ++i) queue();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return comm.allreduce(clock.seconds(), dist::ReduceOp::max) / count;
}

/// --halo both: the same product through each route, timed alike, in the order nccl, peer,
/// peer, nccl (so neither route always runs first); each route's figures are the mean of its
/// two legs. Before each leg's check, Y is poisoned and x changes: both routes must give
/// bitwise the same Y (they deliver the same ghosts to the same kernels). The route is left as
/// it was.
nlohmann::json compare_halo_routes(const dist::Communicator& comm, gpu::DeviceContext& ctx,
                                   const DistributedSpmvOptions& o, const std::function<void(DistStats*)>& multiply,
                                   const std::function<std::vector<double>(int)>& checked_product, bool& agree) {
  constexpr int kStreamProducts = 200;
  const gpu::HaloRoute keep = ctx.halo_route();
  const gpu::HaloRoute legs[4] = {gpu::HaloRoute::nccl, gpu::HaloRoute::peer, gpu::HaloRoute::peer,
                                  gpu::HaloRoute::nccl};
  double per_product[2] = {0, 0}, exchange[2] = {0, 0}, streamed[2] = {0, 0};
  std::vector<double> reference[2];  // Y of the two check vectors, from the first leg
  std::int64_t same = 1;
  for (int leg = 0; leg < 4; ++leg) {
    const int r = legs[leg] == gpu::HaloRoute::peer ? 1 : 0;
    ctx.set_halo_route(legs[leg]);
    multiply(nullptr);  // the route's first product maps its buffers
    const Timing t = time_product(comm, o.warmup, o.reps, multiply);
    per_product[r] += t.median_seconds / 2;
    exchange[r] += comm.allreduce(t.stats.exchange_seconds, dist::ReduceOp::max) / 2;
    streamed[r] += stream_seconds_per_product(comm, ctx.compute(), kStreamProducts, [&] { multiply(nullptr); }) / 2;
    for (int v = 0; v < 2; ++v) {
      const std::vector<double> y = checked_product(v);
      if (leg == 0) reference[v] = y;
      else same &= y == reference[v] ? 1 : 0;
    }
  }
  ctx.set_halo_route(keep);
  agree = comm.allreduce(same, dist::ReduceOp::min) == 1;
  nlohmann::json routes = nlohmann::json::object();
  for (int r = 0; r < 2; ++r)
    routes[r ? "peer" : "nccl"] = {
        {"median_s", per_product[r]}, {"exchange_s", exchange[r]}, {"stream_s_per_product", streamed[r]}};
  routes["nccl_over_peer_stream"] = streamed[0] / streamed[1];
  routes["bitwise_identical"] = agree;
  routes["order"] = "nccl, peer, peer, nccl; mean of each route's two legs";
  if (comm.rank() == 0) {
    std::printf("--halo both: the same product through each halo route (slowest rank; legs nccl, peer, peer, "
                "nccl; exchange = from the exchange's start to its last arrival, waits for late ranks included)\n");
    std::printf("%6s %14s %14s %22s\n", "route", "product ms", "exchange ms", "stream ms/product");
    for (int r = 0; r < 2; ++r)
      std::printf("%6s %14.4f %14.4f %22.4f\n", r ? "peer" : "nccl", 1e3 * per_product[r], 1e3 * exchange[r],
                  1e3 * streamed[r]);
    std::printf("nccl / peer, back-to-back products: %.2fx; results %s\n", streamed[0] / streamed[1],
                agree ? "bitwise identical" : "DIFFER (FAIL)");
  }
  return routes;
}

/// The device product: upload, one untimed product (exchange buffers, SpMM plans), then the
/// host path's timing loop; each repetition ends when the compute stream is idle.
ProductRun run_device(const dist::Communicator& comm, gpu::DeviceContext& ctx, const DistributedSpmvOptions& o,
                      const DistMatrix& a, const std::vector<double>& x_owned) {
  const cudaStream_t s = ctx.compute();
  gpu::DeviceDistMatrix dev(a, s);
  cuda::DeviceBuffer<double> x, y(static_cast<std::size_t>(a.owned_rows() * o.k), s);
  x.upload(x_owned, s);
  auto queue = [&](DistStats* stats) {
    if (o.multi_vector) {
      gpu::spmm(ctx, dev, x.data(), o.k, y.data(), stats);
    } else {
      gpu::spmv(ctx, dev, 1.0, x.data(), 0.0, y.data(), stats);
    }
  };
  auto multiply = [&](DistStats* stats) {
    queue(stats);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  };
  multiply(nullptr);
  ProductRun run;
  run.timing = time_product(comm, o.warmup, o.reps, multiply);
  run.y = y.download(s);
  if (o.compare == "cusparse") run.compare = compare_local_blocks(comm, ctx, dev, o, x.data(), y.data());
  if (o.halo == "both") {
    // The check products: y poisoned, x = the fill (v = 0) or its negation (v = 1), so a route
    // that left rows unwritten or kept the previous ghosts shows. x is restored after.
    const std::vector<double> minus_x = [&] {
      std::vector<double> m = x_owned;
      for (double& e : m) e = -e;
      return m;
    }();
    const auto checked_product = [&](int v) {
      x.upload(v ? minus_x : x_owned, s);
      y.fill_bytes(0xff, s);
      multiply(nullptr);
      std::vector<double> out = y.download(s);
      x.upload(x_owned, s);
      return out;
    };
    // The stream timing queues products without synchronising (stats == nullptr).
    run.halo_routes = compare_halo_routes(
        comm, ctx, o, [&](DistStats* stats) { stats ? multiply(stats) : queue(nullptr); }, checked_product,
        run.routes_agree);
  }
  return run;
}

#endif

}  // namespace

double distributed_fill_value(std::int64_t row, std::int64_t col, std::int64_t k) {
  const std::uint64_t index =
      static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(k) + static_cast<std::uint64_t>(col);
  const std::uint64_t bits = gen::detail::mix64(gen::detail::mix64(kFillSeed) + index * gen::detail::kGolden);
  return 2.0 * gen::detail::unit_interval(bits) - 1.0;
}

int run_distributed_spmv(const dist::Communicator& comm, const DistributedSpmvOptions& options, nlohmann::json& out) {
  DistributedSpmvOptions o = options;
  if (!o.multi_vector) o.k = 1;  // y = A x: the fill and the check see one column
  require_supported(o);
  const std::int64_t k = o.k;
  const std::string backend = choose_backend(comm, o);
  Stopwatch load_clock;
  const auto [n_rows, n_cols] = global_shape(o.a);  // a bad source fails here, on every rank
  print_banner(comm, o, backend);
  const RowPartition rows = choose_partition(comm, o.a, o.partition);
  // Square A: x is split like y, so a rank's owned x entries are the columns of its diagonal block.
  const RowPartition cols = n_rows == n_cols ? rows : RowPartition::balanced_rows(n_cols, comm.size());
  LoadTimes load_times;
  const DistMatrix a = load_distributed(comm, o.a, rows, cols, &load_times);
  const double load_s = comm.allreduce(load_clock.seconds(), dist::ReduceOp::max);
  const double read_s = comm.allreduce(load_times.read_seconds, dist::ReduceOp::max);
  const double assemble_s = comm.allreduce(load_times.assemble_seconds, dist::ReduceOp::max);
  const std::int64_t nnz = comm.allreduce(a.nnz(), dist::ReduceOp::sum);

  const std::vector<double> x_owned = fill_rows(a.col_begin(), a.col_begin() + a.local.cols, k);
  ProductRun run;
#if defined(TESSERA_HAVE_CUDA)
  if (backend == "gpu") {
    gpu::DeviceContext ctx(comm);
    if (o.halo == "nccl" || o.halo == "peer") ctx.set_halo_route(gpu::parse_halo_route(o.halo));
    out["halo_route"] = gpu::halo_route_name(ctx.halo_route());
    out["device_transport"] = ctx.transport().name();
    if (comm.rank() == 0)
      std::printf("halo route: %s; device transport: %s%s\n", gpu::halo_route_name(ctx.halo_route()),
                  ctx.transport().name(),
                  std::string(ctx.transport().name()) == "staged"
                      ? " (through host memory: slower than NCCL, not for timing)"
                      : "");
    run = run_device(comm, ctx, o, a, x_owned);
  }
#endif
  if (backend == "host") run = run_host(comm, o, a, x_owned);
  dist::throw_if_any_rank_failed(comm, overflowed_entry(o.multi_vector ? "Y = A X" : "y = A x", Precision::fp64, run.y,
                                                        k, Layout::row_major, a.row_begin()));
  const Timing& t = run.timing;

  const double bytes = model_bytes(n_rows, n_cols, nnz, k);
  const double gbs = 1e-9 * bytes / t.median_seconds;
  if (comm.rank() == 0) {
    std::printf("A %lld x %lld, nnz %lld, load %.3f s (slowest rank: rows %s %.3f s%s%s, assembly %.3f s)\n",
                (long long)n_rows, (long long)n_cols, (long long)nnz, load_s, o.a.file.empty() ? "generated" : "read",
                read_s, load_times.read_route.empty() ? "" : ", ", load_times.read_route.c_str(), assemble_s);
    std::printf("time (median of %d, slowest rank): %.4f ms, %.2f GB/s\n", o.reps, 1e3 * t.median_seconds, gbs);
    std::printf("bytes = A once (12*nnz + 8*(rows+1)) + X once (8*cols*k) + Y once (8*rows*k) = %.4f GB; "
                "halo messages not counted\n", 1e-9 * bytes);
  }
  out["ranks"] = comm.size();
  out["partition"] = o.partition;
  out["backend"] = backend;
  if (o.multi_vector) {
    out["k"] = k;
    out["layout"] = "row";  // what dist::spmm stores, whatever --layout asked for
  }
  out["rows"] = n_rows;
  out["cols"] = n_cols;
  out["nnz"] = nnz;
  out["time"] = {{"load_s", load_s}, {"read_s", read_s}, {"assemble_s", assemble_s},
                 {"median_s", t.median_seconds}, {"reps", o.reps}, {"warmup", o.warmup}};
  if (!load_times.read_route.empty()) out["read_route"] = load_times.read_route;
  out["bytes"] = bytes;
  out["bytes_formula"] = "12*nnz + 8*(rows+1) + 8*cols*k + 8*rows*k";
  out["gbs"] = gbs;
  out["stats"] = report_dist_stats(comm, o.multi_vector ? "Y = A X" : "y = A x", t.stats);
  if (!run.compare.is_null()) out["compare_cusparse_local_block"] = run.compare;
  if (!run.halo_routes.is_null()) out["halo_routes"] = run.halo_routes;
  if (!run.routes_agree) return kExitCheckFailed;  // a route that changes the result is a bug

  if (!o.check) return 0;
  return check_against_reference(comm, o, a, run.y, out) ? 0 : kExitCheckFailed;
}

}  // namespace tessera::driver
