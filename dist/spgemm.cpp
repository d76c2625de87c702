#include "dist/spgemm.hpp"

#include <algorithm>
#include <chrono>
#include <climits>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::dist {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

Csr<double> host_local_spgemm(const Csr<double>& a, const Csr<double>& b) {
  return ref::spgemm(a, b, ref::SpgemmOptions{true});
}

DistSpgemm::DistSpgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, LocalSpgemm local)
    : local_(std::move(local)) {
  // Partitions are replicated, so this check fails on every rank alike.
  TESSERA_REQUIRE_INPUT(a.col_partition == b.row_partition, "spgemm: A's column partition (", a.global_cols(),
                        " columns) differs from B's row partition (", b.global_rows(), " rows)");
  auto t0 = Clock::now();
  remote_ = RemoteRows(comm, b, a.halo);
  stats_ = DistStats{};
  stats_.remote_row_bytes = remote_.symbolic_bytes();
  stats_.exchange_seconds = seconds_since(t0);

  t0 = Clock::now();
  const RowBlock owned = owned_row_block(b);
  compact_to_global_ = owned.col;
  compact_to_global_.insert(compact_to_global_.end(), remote_.cols().begin(), remote_.cols().end());
  std::sort(compact_to_global_.begin(), compact_to_global_.end());
  compact_to_global_.erase(std::unique(compact_to_global_.begin(), compact_to_global_.end()), compact_to_global_.end());
  throw_if_any_rank_failed(comm, compact_to_global_.size() <= INT32_MAX
                                     ? ""
                                     : detail::concat("spgemm: rank ", comm.rank(), " touches ", compact_to_global_.size(),
                                                      " columns of B, beyond the int32 local index; use more ranks"));
  const auto compact = [&](std::int64_t global) {
    return static_cast<std::int32_t>(std::lower_bound(compact_to_global_.begin(), compact_to_global_.end(), global) -
                                     compact_to_global_.begin());
  };
  b_ext_ = Csr<double>::empty(owned.local_rows() + remote_.rows(), static_cast<std::int64_t>(compact_to_global_.size()));
  for (std::int64_t r = 0; r < owned.local_rows(); ++r) b_ext_.row_ptr[r + 1] = owned.row_ptr[r + 1];
  for (std::int64_t r = 0; r < remote_.rows(); ++r)
    b_ext_.row_ptr[owned.local_rows() + r + 1] = owned.nnz() + remote_.row_ptr()[r + 1];
  b_ext_.col_idx.reserve(static_cast<std::size_t>(b_ext_.row_ptr.back()));
  for (std::int64_t c : owned.col) b_ext_.col_idx.push_back(compact(c));
  for (std::int64_t c : remote_.cols()) b_ext_.col_idx.push_back(compact(c));
  a_ext_ = extended_block(a);
  fill_b_values(b);

  const Csr<double> product = multiply(comm);
  RowBlock rows;
  rows.global_rows = a.global_rows();
  rows.global_cols = b.global_cols();
  rows.row_begin = a.row_begin();
  rows.row_end = a.row_begin() + a.owned_rows();
  rows.row_ptr = product.row_ptr;
  rows.col.reserve(product.col_idx.size());
  for (std::int32_t c : product.col_idx) rows.col.push_back(compact_to_global_[c]);
  rows.values = product.values;
  c_ = assemble(comm, rows, a.row_partition, b.col_partition);
  stats_.compute_seconds = seconds_since(t0);
  stats_.rows = c_.owned_rows();
  stats_.nnz = c_.nnz();
}

void DistSpgemm::fill_b_values(const DistMatrix& b) {
  // The compact renumbering is monotone, so row order of B is B_ext's entry order.
  b_ext_.values = values_in_row_order(b);
  b_ext_.values.insert(b_ext_.values.end(), remote_.values().begin(), remote_.values().end());
}

// The local kernel may throw on this rank alone (device out of memory, cuSPARSE failure):
// agree before the next collective (assemble, the next refresh) so no rank is left waiting.
Csr<double> DistSpgemm::multiply(const Communicator& comm) {
  return call_collectively(comm, "spgemm: local product", [&] { return local_(a_ext_, b_ext_); });
}

void DistSpgemm::recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& b) {
  throw_if_any_rank_failed(comm, a.nnz() == a_ext_.nnz()
                                     ? ""
                                     : detail::concat("spgemm recompute: rank ", a.rank, " holds ", a.nnz(),
                                                      " entries of A, the symbolic phase saw ", a_ext_.nnz()));
  stats_ = DistStats{};
  auto t0 = Clock::now();
  remote_.refresh_values(comm, b);
  stats_.remote_row_bytes = remote_.numeric_bytes();
  stats_.exchange_seconds = seconds_since(t0);
  t0 = Clock::now();
  fill_extended_values(a, a_ext_);
  fill_b_values(b);
  const Csr<double> product = multiply(comm);
  TESSERA_ASSERT(product.nnz() == c_.nnz(), "the local product changed pattern between symbolic and numeric");
  set_values_in_row_order(c_, product.values);
  stats_.compute_seconds = seconds_since(t0);
  stats_.rows = c_.owned_rows();
  stats_.nnz = c_.nnz();
}

DistMatrix spgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, DistStats* stats) {
  DistSpgemm product(comm, a, b);
  if (stats) *stats += product.stats();
  return product.result();
}

}  // namespace tessera::dist
