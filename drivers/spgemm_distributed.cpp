#include "drivers/spgemm_distributed.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

#include "dist/ptap.hpp"
#include "dist/spgemm.hpp"
#include "dist/transpose.hpp"
#include "drivers/common/dist_report.hpp"
#include "drivers/common/dist_source.hpp"
#include "drivers/common/driver_main.hpp"
#include "drivers/product_check.hpp"
#include "local/core/error.hpp"
#include "local/reference/kernels.hpp"

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

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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

}  // namespace

int run_distributed_spgemm(const dist::Communicator& comm, const DistributedSpgemmOptions& o, nlohmann::json& out) {
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
  print_shape(comm, "A", a);
  print_shape(comm, o.op == "PtAP" ? "P" : "B", b);

  comm.barrier();
  Stopwatch first_clock;
  DistMatrix c;
  dist::DistStats stats;
  double numeric_s = 0;
  if (o.op == "PtAP") {
    dist::DistPtap product(comm, a, b);
    stats = product.stats();
    const double first_s = timed_max(comm, first_clock.seconds());
    numeric_s = time_recompute(comm, product, o.reps, a, b);
    c = product.result();
    out["time"] = {{"symbolic_and_numeric_s", first_s}, {"numeric_median_s", numeric_s}};
  } else {
    dist::DistSpgemm product(comm, a, b);
    stats = product.stats();
    const double first_s = timed_max(comm, first_clock.seconds());
    numeric_s = time_recompute(comm, product, o.reps, a, b);
    c = product.result();
    out["time"] = {{"symbolic_and_numeric_s", first_s}, {"numeric_median_s", numeric_s}};
  }
  print_shape(comm, "C", c);
  if (me == 0)
    std::printf("time (slowest rank): symbolic+numeric %.4f s, numeric-only recompute %.4f s (median of %d)\n",
                out["time"]["symbolic_and_numeric_s"].get<double>(), numeric_s, o.reps);
  out["stats"] = report_dist_stats(comm, "C = " + o.op, stats);
  out["ranks"] = comm.size();
  out["partition"] = o.partition;

  if (!o.check) return 0;
  const Csr<double> a_all = dist::gather(comm, a), b_all = dist::gather(comm, b), c_all = dist::gather(comm, c);
  int pass = 1;
  if (me == 0) {
    ProductComparison cmp;
    if (o.op == "PtAP") {
      cmp = compare_galerkin(a_all, b_all, ref::ptap(a_all, b_all), c_all);
    } else {
      cmp = compare_products(a_all, b_all, ref::spgemm(a_all, b_all), c_all);
    }
    if (!cmp.pattern_equal) std::printf("check: pattern differs from the serial reference: %s\n", cmp.pattern_message.c_str());
    pass = report_check("distributed " + o.op + " vs serial reference", cmp.max_relative_error, cmp.bound) &&
           cmp.pattern_equal;
    out["check"] = {{"pattern_equal", cmp.pattern_equal}, {"max_relative_error", cmp.max_relative_error},
                    {"bound", cmp.bound}, {"pass", static_cast<bool>(pass)}};
  }
  MPI_Bcast(&pass, 1, MPI_INT, 0, comm.mpi());
  return pass ? 0 : kExitCheckFailed;
}

}  // namespace tessera::driver
