#include "drivers/spmv_distributed.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "dist/dist_matrix.hpp"
#include "dist/spmv.hpp"
#include "drivers/common/dist_report.hpp"
#include "drivers/common/dist_source.hpp"
#include "drivers/common/driver_main.hpp"
#include "local/core/backend.hpp"
#include "local/core/error.hpp"
#include "local/gen/counter_rng.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::driver {
namespace {

using dist::DistMatrix;
using dist::DistStats;
using dist::RowPartition;

constexpr std::uint64_t kFillSeed = 0x5eed5a11ull;

/// Every option that the distributed path cannot honour is refused, identically on every rank
/// (the options are the same everywhere), before any collective starts.
void require_supported(const DistributedSpmvOptions& o) {
  TESSERA_REQUIRE_INPUT(o.backend != "gpu", "the distributed GPU path (NCCL) is not wired yet; use --backend host");
  TESSERA_REQUIRE_INPUT(o.precision == "fp64",
                        "the distributed path runs in fp64 (its blocks hold doubles); got --precision ", o.precision);
  TESSERA_REQUIRE_INPUT(o.compare.empty(), "--compare ", o.compare, " is not available on the distributed path yet");
  TESSERA_REQUIRE_INPUT(!o.sweep, "--sweep times GPU kernel variants; the distributed path runs on the host");
  TESSERA_REQUIRE_INPUT(o.a.file.empty() || o.a.spec.empty(),
                        "both a file and a generator were given for A; choose one");
  TESSERA_REQUIRE_INPUT(o.k >= 1, "X needs at least one column, got k = ", o.k);
}

/// Rows [begin, end) of X (row-major, k columns), filled from the global row index.
std::vector<double> fill_rows(std::int64_t begin, std::int64_t end, std::int64_t k) {
  std::vector<double> x(static_cast<std::size_t>((end - begin) * k));
  for (std::int64_t i = begin; i < end; ++i)
    for (std::int64_t j = 0; j < k; ++j)
      x[static_cast<std::size_t>((i - begin) * k + j)] = distributed_fill_value(i, j, k);
  return x;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
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

void print_banner(const dist::Communicator& comm, const DistributedSpmvOptions& o) {
  if (comm.rank() != 0) return;
  const char* op = o.multi_vector ? "spmm" : "spmv";
  std::printf("tessera-%s: distributed on %d rank(s), %s, partition by %s, host backend%s\n", op, comm.size(),
              o.a.describe().c_str(), o.partition.c_str(),
              o.backend == "auto" && gpu_available() ? " (auto: the distributed GPU path is not wired yet)" : "");
  if (o.multi_vector)
    std::printf("X: k %lld, row-major%s\n", (long long)o.k,
                o.column_major_requested ? " (--layout col: the distributed path stores X row-major)" : "");
}

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
  Stopwatch load_clock;
  const auto [n_rows, n_cols] = global_shape(o.a);  // a bad source fails here, on every rank
  print_banner(comm, o);
  const RowPartition rows = choose_partition(comm, o.a, o.partition);
  // Square A: x is split like y, so a rank's owned x entries are the columns of its diagonal block.
  const RowPartition cols = n_rows == n_cols ? rows : RowPartition::balanced_rows(n_cols, comm.size());
  const DistMatrix a = load_distributed(comm, o.a, rows, cols);
  const double load_s = comm.allreduce(load_clock.seconds(), dist::ReduceOp::max);
  const std::int64_t nnz = comm.allreduce(a.nnz(), dist::ReduceOp::sum);

  dist::DistMultiVector x;
  x.cols = k;
  x.owned = fill_rows(a.col_begin(), a.col_begin() + a.local.cols, k);
  dist::DistVector xv{x.owned, {}};
  dist::DistMultiVector y;
  const Timing t = time_product(comm, o.warmup, o.reps, [&](DistStats* s) {
    if (o.multi_vector) {
      dist::spmm(comm, a, x, y, s);
    } else {
      dist::spmv(comm, a, xv, y.owned, s);
    }
  });

  const double bytes = model_bytes(n_rows, n_cols, nnz, k);
  const double gbs = 1e-9 * bytes / t.median_seconds;
  if (comm.rank() == 0) {
    std::printf("A %lld x %lld, nnz %lld, load %.3f s\n", (long long)n_rows, (long long)n_cols, (long long)nnz, load_s);
    std::printf("time (median of %d, slowest rank): %.4f ms, %.2f GB/s\n", o.reps, 1e3 * t.median_seconds, gbs);
    std::printf("bytes = A once (12*nnz + 8*(rows+1)) + X once (8*cols*k) + Y once (8*rows*k) = %.4f GB; "
                "halo messages not counted\n", 1e-9 * bytes);
  }
  out["ranks"] = comm.size();
  out["partition"] = o.partition;
  out["backend"] = "host";
  if (o.multi_vector) {
    out["k"] = k;
    out["layout"] = "row";  // what dist::spmm stores, whatever --layout asked for
  }
  out["rows"] = n_rows;
  out["cols"] = n_cols;
  out["nnz"] = nnz;
  out["time"] = {{"load_s", load_s}, {"median_s", t.median_seconds}, {"reps", o.reps}, {"warmup", o.warmup}};
  out["bytes"] = bytes;
  out["bytes_formula"] = "12*nnz + 8*(rows+1) + 8*cols*k + 8*rows*k";
  out["gbs"] = gbs;
  out["stats"] = report_dist_stats(comm, o.multi_vector ? "Y = A X" : "y = A x", t.stats);

  if (!o.check) return 0;
  return check_against_reference(comm, o, a, y.owned, out) ? 0 : kExitCheckFailed;
}

}  // namespace tessera::driver
