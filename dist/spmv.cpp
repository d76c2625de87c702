#include "dist/spmv.hpp"

#include <algorithm>
#include <cmath>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/stopwatch.hpp"
#include "local/host/dot.hpp"

namespace tessera::dist {

namespace {

enum class Into { overwrite, accumulate };

// y[i,:] (= or +=) sum_j a(i,j) x[j,:], row-major with k columns: the host local kernel, by
// ranges of rows on the rank's threads. Each row sums in its own entry order, so y is the same
// bit for bit on any thread count. `overwrite` zeroes each row on its own thread first (no
// serial zero fill of y before the product).
void multiply(const Csr<double>& a, const double* x, std::int64_t k, double* y, Into into) {
  if (k == 1) {  // SpMV: the row's sum in a register (y may alias x as far as the compiler knows)
    host::for_ranges(a.rows, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        double sum = into == Into::overwrite ? 0.0 : y[i];
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) sum += a.values[p] * x[a.col_idx[p]];
        y[i] = sum;
      }
    });
    return;
  }
  host::for_ranges(a.rows, [&](std::int64_t begin, std::int64_t end) {
    if (into == Into::overwrite) std::fill(y + begin * k, y + end * k, 0.0);
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        const double v = a.values[p];
        const double* xr = x + static_cast<std::int64_t>(a.col_idx[p]) * k;
        for (std::int64_t j = 0; j < k; ++j) y[i * k + j] += v * xr[j];
      }
  });
}

void check_shapes(const DistMatrix& a, std::int64_t x_rows, std::int64_t k) {
  TESSERA_REQUIRE_INPUT(k >= 0, "spmm: negative column count ", k);
  TESSERA_REQUIRE_INPUT(x_rows == a.local.cols, "spmv/spmm: rank ", a.rank, " holds ", x_rows,
                        " entries of x, but owns ", a.local.cols, " columns of A");
}

void apply(const Communicator& comm, const DistMatrix& a, const std::vector<double>& x_owned,
           std::vector<double>& x_ghosts, std::int64_t k, std::vector<double>& y, DistStats* stats) {
  double exchange = 0, compute = 0;
  Stopwatch clock;
  std::vector<double> send(static_cast<std::size_t>(a.halo.num_sent() * k));
  a.halo.pack(x_owned.data(), k, send.data());
  x_ghosts.assign(static_cast<std::size_t>(a.halo.num_ghosts() * k), 0.0);
  HostTransport transport(comm);
  transport.start_exchange(a.halo.pattern, sizeof(double) * static_cast<std::size_t>(k), send.data(),
                           x_ghosts.data());
  exchange += clock.seconds();

  clock.restart();
  y.resize(static_cast<std::size_t>(a.owned_rows() * k));  // overwritten by the local product
  multiply(a.local, x_owned.data(), k, y.data(), Into::overwrite);  // overlaps the exchange
  compute += clock.seconds();

  clock.restart();
  transport.finish_exchange();
  exchange += clock.seconds();

  clock.restart();
  multiply(a.nonlocal, x_ghosts.data(), k, y.data(), Into::accumulate);
  compute += clock.seconds();
  if (stats) {
    stats->rows += a.owned_rows();
    stats->nnz += a.nnz();
    stats->halo_bytes += a.halo.num_ghosts() * k * static_cast<std::int64_t>(sizeof(double));
    stats->exchange_seconds += exchange;
    stats->compute_seconds += compute;
  }
}

}  // namespace

void spmv(const Communicator& comm, const DistMatrix& a, DistVector& x, std::vector<double>& y, DistStats* stats) {
  spmv(comm, a, x.owned, x.ghosts, y, stats);
}

void spmv(const Communicator& comm, const DistMatrix& a, const std::vector<double>& x_owned,
          std::vector<double>& x_ghosts, std::vector<double>& y, DistStats* stats) {
  check_shapes(a, static_cast<std::int64_t>(x_owned.size()), 1);
  TESSERA_REQUIRE_INPUT(&x_owned != &y, "spmv: y is x's owned vector (y is written while x is read)");
  apply(comm, a, x_owned, x_ghosts, 1, y, stats);
}

void spmm(const Communicator& comm, const DistMatrix& a, DistMultiVector& x, DistMultiVector& y, DistStats* stats) {
  TESSERA_REQUIRE_INPUT(x.cols >= 1, "spmm: X needs at least one column");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(x.owned.size()) % x.cols == 0, "spmm: X holds ", x.owned.size(),
                        " values, not a multiple of its ", x.cols, " columns");
  check_shapes(a, x.owned_rows(), x.cols);
  y.cols = x.cols;
  apply(comm, a, x.owned, x.ghosts, x.cols, y.owned, stats);
}

double dot(const Communicator& comm, const std::vector<double>& x, const std::vector<double>& y) {
  TESSERA_REQUIRE_INPUT(x.size() == y.size(), "dot: vectors of ", x.size(), " and ", y.size(), " owned entries");
  return comm.allreduce(host::dot(x.data(), y.data(), static_cast<std::int64_t>(x.size())), ReduceOp::sum);
}

double norm2(const Communicator& comm, const std::vector<double>& x) { return std::sqrt(dot(comm, x, x)); }

}  // namespace tessera::dist
