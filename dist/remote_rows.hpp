#pragma once
// RemoteRows: the rows of a distributed matrix B that this rank needs but does not own, as a
// CSR with global columns. The request list is a HaloPlan whose ghosts are B's global row
// indices (for C = A*B: A's own halo plan, because A's column partition is B's row partition).
// Symbolic: row lengths, then columns and values (two exchanges over the plan's neighbours);
// the entry-level pattern is kept, so refresh_values() re-sends values alone.
#include <cstdint>
#include <vector>

#include "dist/dist_matrix.hpp"
#include "dist/halo_plan.hpp"

namespace tessera::dist {

class Communicator;

class RemoteRows {
 public:
  RemoteRows() = default;
  /// Collective.
  RemoteRows(const Communicator& comm, const DistMatrix& b, const HaloPlan& requests);
  /// Collective: new values of B with the pattern unchanged.
  void refresh_values(const Communicator& comm, const DistMatrix& b);

  std::int64_t rows() const { return static_cast<std::int64_t>(row_ptr_.size()) - 1; }
  const std::vector<std::int64_t>& row_ptr() const { return row_ptr_; }
  const std::vector<std::int64_t>& cols() const { return cols_; }
  const std::vector<double>& values() const { return values_; }
  /// Received volume of the symbolic fetch (lengths, columns, values) and of a refresh.
  std::int64_t symbolic_bytes() const;
  std::int64_t numeric_bytes() const;
  /// The numeric plan, for device refreshes: B-local rows sent (in send order, each row's
  /// entries in B's row order) and the entry-level traffic of refresh_values().
  const std::vector<std::int64_t>& send_rows() const { return send_rows_; }
  const ExchangePattern& entry_pattern() const { return entries_; }

 private:
  std::vector<double> pack_values(const DistMatrix& b) const;

  std::vector<std::int64_t> send_rows_;    // B-local rows to send, in send order
  std::int64_t b_entries_ = 0;             // B's entries on this rank when the plan was built
  ExchangePattern entries_;                // entry-level traffic
  std::vector<std::int64_t> row_ptr_{0};
  std::vector<std::int64_t> cols_;
  std::vector<double> values_;
};

}  // namespace tessera::dist
