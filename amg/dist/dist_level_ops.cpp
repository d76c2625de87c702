#include "amg/dist/dist_level_ops.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "dist/spmv.hpp"
#include "local/core/error.hpp"
#include "local/core/host_array.hpp"
#include "local/core/host_ranges.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {
namespace {

std::string row_error(const dist::DistMatrix& a, const std::string& what) {
  const auto bad_value = [&](const Csr<double>& block, std::int64_t r) -> std::string {
    for (std::int64_t p = block.row_ptr[r]; p < block.row_ptr[r + 1]; ++p)
      if (!std::isfinite(block.values[p]))
        return tessera::detail::concat("AMG: ", what, " has a non-finite value ", block.values[p], " at row ", a.row_begin() + r);
    return "";
  };
  return host::first_failure(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) -> std::string {
    for (std::int64_t r = begin; r < end; ++r) {
      for (const Csr<double>* block : {&a.local, &a.nonlocal})
        if (std::string e = bad_value(*block, r); !e.empty()) return e;
      double diagonal = 0;
      bool has_diagonal = false;
      for (std::int64_t p = a.local.row_ptr[r]; p < a.local.row_ptr[r + 1]; ++p)
        if (a.local.col_idx[p] == r) has_diagonal = true, diagonal = a.local.values[p];
      if (!has_diagonal)
        return tessera::detail::concat("AMG: ", what, " has no diagonal entry in row ", a.row_begin() + r,
                                       " (smoothed aggregation needs a positive diagonal)");
      if (!(diagonal > 0))
        return tessera::detail::concat("AMG: ", what, " has a ", diagonal == 0 ? "zero" : "negative", " diagonal ",
                                       diagonal, " at row ", a.row_begin() + r,
                                       " (smoothed aggregation needs a positive diagonal)");
    }
    return "";
  });
}

/// Residual and product through dist::spmv, reading x in place; the ghost buffer is kept
/// between calls.
struct BoundOperator {
  const dist::Communicator* comm;
  const dist::DistMatrix* a;
  std::vector<double> ghosts;

  void check(const Csr<double>& csr) const {
    TESSERA_ASSERT(&csr == &a->local, "distributed LevelOps called with a matrix other than the one it is bound to");
  }
  void apply(const Vector& in, Vector& out) { dist::spmv(*comm, *a, in, ghosts, out); }
};

}  // namespace

LevelOps dist_level_ops(const dist::Communicator& comm, const dist::DistMatrix& a) {
  auto bound = std::make_shared<BoundOperator>(BoundOperator{&comm, &a, {}});
  LevelOps ops;
  const auto unbound = [](const char* what) {
    return [what](auto&&...) -> Csr<double> {
      TESSERA_ASSERT(false, "distributed LevelOps: ", what, " is not bound (use DistSpgemm/DistPtap)");
      return {};
    };
  };
  ops.multiply = unbound("multiply");
  ops.galerkin = unbound("galerkin");
  ops.transpose = unbound("transpose");
  ops.apply = [bound](const Csr<double>& m, const Vector& x, Vector& y) {
    bound->check(m);
    bound->apply(x, y);
  };
  ops.residual = [bound](const Csr<double>& m, const Vector& x, const Vector& b, Vector& r) {
    bound->check(m);
    bound->apply(x, r);
    host::for_entries(static_cast<std::int64_t>(r.size()), [&](std::int64_t i) { r[i] = b[i] - r[i]; });
  };
  ops.dot = [&comm](const Vector& x, const Vector& y) { return dist::dot(comm, x, y); };
  return ops;
}

void check_dist_operator(const dist::Communicator& comm, const dist::DistMatrix& a, const std::string& what) {
  std::string error;
  if (a.row_partition != a.col_partition)
    error = tessera::detail::concat("AMG: ", what, " must be square with columns partitioned like its rows (", a.global_rows(),
                           "x", a.global_cols(), ")");
  else
    error = row_error(a, what);
  dist::throw_if_any_rank_failed(comm, error);
}

void host_operator_check(const dist::Communicator& comm, const dist::DistMatrix& a, const std::string& what,
                         DeviceOperatorSlot&) {
  check_dist_operator(comm, a, what);
}

std::vector<double> owned_diagonal(const dist::DistMatrix& a) {
  std::vector<double> d(static_cast<std::size_t>(a.owned_rows()), 0.0);
  // A DistMatrix's rows are sorted (every assembly checks it): a binary search reads a few
  // columns and one value a row, where a scan read every column and value of A.
  const auto col = a.local.col_idx.begin();
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const auto last = col + a.local.row_ptr[r + 1];
      const auto at = std::lower_bound(col + a.local.row_ptr[r], last, r);
      if (at != last && *at == r) d[r] = a.local.values[at - col];
    }
  });
  return d;
}

std::vector<double> owned_inverse_diagonal(const dist::DistMatrix& a) {
  std::vector<double> d = owned_diagonal(a);
  host::for_ranges(static_cast<std::int64_t>(d.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) d[i] = 1.0 / d[i];
  });
  return d;
}

std::vector<double> host_inverse_diagonal(const dist::Communicator&, const dist::DistMatrix& a, DeviceOperatorSlot&) {
  return owned_inverse_diagonal(a);
}

std::vector<double> owned_l1_inverse_diagonal(const dist::DistMatrix& a) {
  std::vector<double> inv(static_cast<std::size_t>(a.owned_rows()));
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      double l1 = 0.0;
      for (std::int64_t p = a.local.row_ptr[r]; p < a.local.row_ptr[r + 1]; ++p)
        l1 += a.local.col_idx[p] == r ? a.local.values[p] : std::abs(a.local.values[p]);
      for (std::int64_t p = a.nonlocal.row_ptr[r]; p < a.nonlocal.row_ptr[r + 1]; ++p)
        l1 += std::abs(a.nonlocal.values[p]);
      inv[r] = 1.0 / l1;
    }
  });
  return inv;
}

bool same_dist_pattern(const dist::Communicator& comm, const dist::DistMatrix& a, const dist::DistMatrix& b) {
  const auto same = [](const Csr<double>& x, const Csr<double>& y) {
    return x.rows == y.rows && x.cols == y.cols && equal_on_threads(x.row_ptr, y.row_ptr) &&
           equal_on_threads(x.col_idx, y.col_idx);
  };
  const bool mine = a.row_partition == b.row_partition && a.col_partition == b.col_partition &&
                    a.ghost_cols == b.ghost_cols && same(a.local, b.local) && same(a.nonlocal, b.nonlocal);
  return comm.allreduce(std::int64_t{mine}, dist::ReduceOp::min) == 1;
}

}  // namespace tessera::amg
