#include "dist/transpose_values.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::dist {
namespace {

struct Coordinate {
  std::int64_t row, col;  // in R, global
};

/// Position of column `col` in row `row` of `m` (sorted rows), or -1.
std::int64_t find_entry(const Csr<double>& m, std::int64_t row, std::int32_t col) {
  const auto first = m.col_idx.begin() + m.row_ptr[row], last = m.col_idx.begin() + m.row_ptr[row + 1];
  const auto at = std::lower_bound(first, last, col);
  return at != last && *at == col ? at - m.col_idx.begin() : -1;
}

/// An exchange pattern from the items this rank sends to each rank (and receives from each).
ExchangePattern pattern_from_counts(const std::vector<std::int64_t>& send, const std::vector<std::int64_t>& recv) {
  ExchangePattern p;
  for (std::size_t q = 0; q < send.size(); ++q) {
    if (send[q] > 0) p.send_ranks.push_back(static_cast<int>(q)), p.send_offsets.push_back(p.send_offsets.back() + send[q]);
    if (recv[q] > 0) p.recv_ranks.push_back(static_cast<int>(q)), p.recv_offsets.push_back(p.recv_offsets.back() + recv[q]);
  }
  return p;
}

/// R.local's value sources among P.local's: entry (r, c) of P is entry (c, r) of R. "" or why not.
std::string map_local_block(const DistMatrix& p, const DistMatrix& r, TransposeValueMap& map) {
  if (r.local.rows != p.local.cols || r.local.cols != p.local.rows || r.local.nnz() != p.local.nnz())
    return detail::concat("R's local block is ", r.local.rows, "x", r.local.cols, " with ", r.local.nnz(),
                          " entries, P's ", p.local.rows, "x", p.local.cols, " with ", p.local.nnz());
  map.local_source.resize(static_cast<std::size_t>(p.local.nnz()));
  std::atomic<std::int64_t> missing{0};
  host::for_ranges(p.local.rows, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t lost = 0;
    for (std::int64_t row = begin; row < end; ++row)
      for (std::int64_t k = p.local.row_ptr[row]; k < p.local.row_ptr[row + 1]; ++k) {
        const std::int64_t at = find_entry(r.local, p.local.col_idx[k], static_cast<std::int32_t>(row));
        if (at < 0) ++lost;
        else map.local_source[at] = k;  // distinct entries of P land on distinct entries of R
      }
    missing += lost;
  });
  return missing == 0 ? "" : detail::concat(missing.load(), " entries of P's local block are not in R's");
}

}  // namespace

TransposeValueMap transpose_value_map(const Communicator& comm, const DistMatrix& p, const DistMatrix& r) {
  TESSERA_TRACE_STEP("transpose_value_map");
  TESSERA_REQUIRE_INPUT(r.row_partition == p.col_partition && r.col_partition == p.row_partition,
                        "transpose value map: R's partitions are not P's swapped");
  TransposeValueMap map;
  map.p_local_entries = p.local.nnz();
  map.p_nonlocal_entries = p.nonlocal.nnz();
  std::string error = map_local_block(p, r, map);

  // P's non-local entries, grouped by the owner of their column, each group in P's row order.
  std::vector<std::int64_t> send_counts(static_cast<std::size_t>(comm.size()), 0);
  std::vector<int> owner(p.ghost_cols.size());
  for (std::size_t g = 0; g < owner.size(); ++g) owner[g] = p.col_partition.owner(p.ghost_cols[g]);
  for (std::int32_t g : p.nonlocal.col_idx) ++send_counts[owner[g]];
  std::vector<std::int64_t> at(send_counts.size(), 0);
  for (std::size_t q = 1; q < at.size(); ++q) at[q] = at[q - 1] + send_counts[q - 1];
  map.send_source.resize(static_cast<std::size_t>(p.nonlocal.nnz()));
  std::vector<Coordinate> sent(map.send_source.size());
  for (std::int64_t row = 0; row < p.owned_rows(); ++row)
    for (std::int64_t k = p.nonlocal.row_ptr[row]; k < p.nonlocal.row_ptr[row + 1]; ++k) {
      const std::int32_t g = p.nonlocal.col_idx[k];
      const std::int64_t i = at[owner[g]]++;
      map.send_source[i] = k;
      sent[i] = {p.ghost_cols[g], p.row_begin() + row};
    }
  map.pattern = pattern_from_counts(send_counts, comm.alltoall(send_counts));
  std::vector<Coordinate> received(static_cast<std::size_t>(map.pattern.recv_count()));
  exchange(comm, map.pattern, sizeof(Coordinate), sent.data(), received.data());

  // Each received entry's place in R's non-local block, looked up by its coordinates.
  if (error.empty() && static_cast<std::int64_t>(received.size()) != r.nonlocal.nnz())
    error = detail::concat("R's non-local block has ", r.nonlocal.nnz(), " entries, the other ranks sent ",
                           received.size(), " of P's");
  map.received_target.resize(received.size());
  for (std::size_t i = 0; error.empty() && i < received.size(); ++i) {
    const std::int64_t row = received[i].row - r.row_begin();
    const auto ghost = std::lower_bound(r.ghost_cols.begin(), r.ghost_cols.end(), received[i].col);
    const std::int64_t target =
        row >= 0 && row < r.owned_rows() && ghost != r.ghost_cols.end() && *ghost == received[i].col
            ? find_entry(r.nonlocal, row, static_cast<std::int32_t>(ghost - r.ghost_cols.begin()))
            : -1;
    if (target < 0)
      error = detail::concat("P's entry (", received[i].col, ", ", received[i].row, ") from another rank is not in R");
    map.received_target[i] = target;
  }
  throw_if_any_rank_failed(comm, error.empty() ? "" : detail::concat("transpose value map: rank ", comm.rank(), ": ", error));
  return map;
}

void refresh_transpose_values(const Communicator& comm, const TransposeValueMap& map, const DistMatrix& p,
                              DistMatrix& r) {
  TESSERA_TRACE_STEP("transpose_values");
  const bool same = p.local.nnz() == map.p_local_entries && p.nonlocal.nnz() == map.p_nonlocal_entries &&
                    r.local.nnz() == static_cast<std::int64_t>(map.local_source.size()) &&
                    r.nonlocal.nnz() == static_cast<std::int64_t>(map.received_target.size());
  throw_if_any_rank_failed(comm, same ? ""
                                      : detail::concat("transpose values: rank ", comm.rank(), " holds ", p.local.nnz(),
                                                       " + ", p.nonlocal.nnz(), " entries of P, the map was made for ",
                                                       map.p_local_entries, " + ", map.p_nonlocal_entries));
  host::for_ranges(r.local.nnz(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) r.local.values[k] = p.local.values[map.local_source[k]];
  });
  std::vector<double> send(map.send_source.size()), received(map.received_target.size());
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = p.nonlocal.values[map.send_source[i]];
  exchange(comm, map.pattern, sizeof(double), send.data(), received.data());
  for (std::size_t i = 0; i < received.size(); ++i) r.nonlocal.values[map.received_target[i]] = received[i];
}

}  // namespace tessera::dist
