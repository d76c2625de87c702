#include "dist/remote_rows.hpp"

#include "dist/communicator.hpp"
#include "local/core/error.hpp"

namespace tessera::dist {

// B's owned rows are read in place (row order), never copied whole: only the sent rows matter.
RemoteRows::RemoteRows(const Communicator& comm, const DistMatrix& b, const HaloPlan& requests)
    : send_rows_(requests.send_local), b_entries_(b.nnz()) {
  // Only the sent rows' lengths: no pass over all of B's rows.
  std::vector<std::int64_t> send_lengths(send_rows_.size());
  for (std::size_t i = 0; i < send_rows_.size(); ++i)
    send_lengths[i] = row_order_offset(b, send_rows_[i] + 1) - row_order_offset(b, send_rows_[i]);
  std::vector<std::int64_t> recv_lengths(static_cast<std::size_t>(requests.num_ghosts()));
  exchange(comm, requests.pattern, sizeof(std::int64_t), send_lengths.data(), recv_lengths.data());

  entries_ = requests.pattern.expanded(send_lengths, recv_lengths);
  row_ptr_.assign(recv_lengths.size() + 1, 0);
  for (std::size_t r = 0; r < recv_lengths.size(); ++r) row_ptr_[r + 1] = row_ptr_[r] + recv_lengths[r];

  std::vector<std::int64_t> send_cols;
  send_cols.reserve(static_cast<std::size_t>(entries_.send_count()));
  for (std::int64_t row : send_rows_) append_row_in_row_order(b, row, &send_cols, nullptr);
  cols_.resize(static_cast<std::size_t>(entries_.recv_count()));
  exchange(comm, entries_, sizeof(std::int64_t), send_cols.data(), cols_.data());
  refresh_values(comm, b);
}

std::vector<double> RemoteRows::pack_values(const DistMatrix& b) const {
  std::vector<double> send;
  send.reserve(static_cast<std::size_t>(entries_.send_count()));
  for (std::int64_t row : send_rows_) append_row_in_row_order(b, row, nullptr, &send);
  return send;
}

void RemoteRows::refresh_values(const Communicator& comm, const DistMatrix& b) {
  // A changed pattern would silently scramble values; the count check catches the usual case
  // (callers promise an identical pattern, as with PETSc's MAT_REUSE_MATRIX).
  const std::string error = b.nnz() == b_entries_
                                ? ""
                                : detail::concat("numeric refresh: rank ", b.rank, " holds ", b.nnz(),
                                                 " entries of B, the symbolic phase saw ", b_entries_);
  throw_if_any_rank_failed(comm, error);
  const std::vector<double> send = pack_values(b);
  values_.resize(static_cast<std::size_t>(entries_.recv_count()));
  exchange(comm, entries_, sizeof(double), send.data(), values_.data());
}

std::int64_t RemoteRows::symbolic_bytes() const {
  return rows() * static_cast<std::int64_t>(sizeof(std::int64_t)) +
         entries_.recv_count() * static_cast<std::int64_t>(sizeof(std::int64_t) + sizeof(double));
}

std::int64_t RemoteRows::numeric_bytes() const {
  return entries_.recv_count() * static_cast<std::int64_t>(sizeof(double));
}

}  // namespace tessera::dist
