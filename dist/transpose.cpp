#include "dist/transpose.hpp"

#include <chrono>
#include <cmath>
#include <climits>
#include <optional>
#include <utility>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/formats/nonempty_rows.hpp"
#include "local/host/transpose.hpp"

namespace tessera::dist {

namespace {

// The two blocks of P travel differently. P's local block (owned rows x owned columns) becomes
// P^T's local block on the same rank: P's owned columns are P^T's owned rows, P's owned rows
// its owned columns. Only P's non-local entries move, to the owners of their columns, where
// they form P^T's non-local block. Neither block needs a merge or a sort.

struct Entry {
  std::int64_t row, col;  // in P^T, global
  double value;
};

/// P's non-local entries as entries of P^T, grouped by destination rank (the owner of their
/// column), each group in P's row order. Ghosts are sorted, so one destination's ghosts are
/// a contiguous range of them.
std::vector<Entry> pack_nonlocal(const DistMatrix& p, std::vector<std::int64_t>& counts) {
  counts.assign(static_cast<std::size_t>(p.col_partition.num_ranks()), 0);
  std::vector<int> owner(p.ghost_cols.size());
  for (std::size_t g = 0; g < owner.size(); ++g) owner[g] = p.col_partition.owner(p.ghost_cols[g]);
  for (std::int32_t g : p.nonlocal.col_idx) ++counts[owner[g]];
  std::vector<std::int64_t> at(counts.size(), 0);
  for (std::size_t q = 1; q < counts.size(); ++q) at[q] = at[q - 1] + counts[q - 1];
  std::vector<Entry> out(static_cast<std::size_t>(p.nonlocal.nnz()));
  for_each_nonempty_row(p.nonlocal.row_ptr.data(), p.owned_rows(), [&](std::int64_t r) {
    for (std::int64_t k = p.nonlocal.row_ptr[r]; k < p.nonlocal.row_ptr[r + 1]; ++k) {
      const std::int32_t g = p.nonlocal.col_idx[k];
      out[at[owner[g]]++] = Entry{p.ghost_cols[g], p.row_begin() + r, p.nonlocal.values[k]};
    }
  });
  return out;
}

/// P^T's ghost columns and non-local block from the received entries. They arrive in source
/// rank order, each source in its row order, so their columns (P's global rows, owned by the
/// sources) are already non-decreasing: the ghosts are their distinct values in arrival order,
/// and a stable bucketing by row leaves every row sorted.
void fill_nonlocal(const std::vector<Entry>& received, std::int64_t row_begin, DistMatrix& pt) {
  std::vector<std::int32_t> ghost_of(received.size());
  for (std::size_t i = 0; i < received.size(); ++i) {
    if (pt.ghost_cols.empty() || pt.ghost_cols.back() != received[i].col) pt.ghost_cols.push_back(received[i].col);
    ghost_of[i] = static_cast<std::int32_t>(pt.ghost_cols.size() - 1);
  }
  Csr<double>& b = pt.nonlocal;
  b = Csr<double>::empty(pt.local.rows, static_cast<std::int64_t>(pt.ghost_cols.size()));
  for (const Entry& e : received) ++b.row_ptr[e.row - row_begin + 1];
  for (std::int64_t r = 0; r < b.rows; ++r) b.row_ptr[r + 1] += b.row_ptr[r];
  std::vector<std::int64_t> at(b.row_ptr.begin(), b.row_ptr.end() - 1);
  b.col_idx.resize(received.size());
  b.values.resize(received.size());
  for (std::size_t i = 0; i < received.size(); ++i) {
    const std::int64_t k = at[received[i].row - row_begin]++;
    b.col_idx[k] = ghost_of[i];
    b.values[k] = received[i].value;
  }
}

/// `local_transposed`: P's local block transposed by the caller, or none (transposed here).
DistMatrix transpose_with(const Communicator& comm, const DistMatrix& p, std::optional<Csr<double>> local_transposed,
                          DistStats* stats) {
  TESSERA_TRACE_STEP("transpose");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int64_t> send_counts;
  const std::vector<Entry> send = pack_nonlocal(p, send_counts);
  const std::vector<std::int64_t> recv_counts = comm.alltoall(send_counts);
  const std::vector<Entry> recv = comm.alltoallv(send, send_counts, recv_counts);
  const auto t1 = std::chrono::steady_clock::now();

  DistMatrix pt;
  pt.row_partition = p.col_partition;
  pt.col_partition = p.row_partition;
  pt.rank = comm.rank();
  // Rank-local work that could throw on one rank (the int32 column limit) is agreed before
  // the halo plan's collectives.
  call_collectively(comm, "transpose", [&] {
    if (local_transposed) {
      TESSERA_REQUIRE_INPUT(local_transposed->rows == p.local.cols && local_transposed->cols == p.owned_rows() &&
                                local_transposed->nnz() == p.local.nnz(),
                            "the given transpose of P's local block is ", local_transposed->rows, "x",
                            local_transposed->cols, " with ", local_transposed->nnz(), " entries; P's local block is ",
                            p.local.rows, "x", p.local.cols, " with ", p.local.nnz());
      pt.local = std::move(*local_transposed);
    } else {
      pt.local = host::transpose(p.local);  // counting sort: rows come out sorted
    }
    fill_nonlocal(recv, pt.row_begin(), pt);
    // The extended block numbers owned and ghost columns together in int32 (as assemble checks).
    const std::int64_t extended_cols = pt.local.cols + static_cast<std::int64_t>(pt.ghost_cols.size());
    TESSERA_REQUIRE_INPUT(extended_cols <= INT32_MAX, extended_cols,
                          " owned and ghost columns exceed the int32 local column index; use more ranks");
  });
  pt.halo = HaloPlan::build(comm, pt.col_partition, pt.ghost_cols);
  if (stats) {
    stats->rows += pt.owned_rows();
    stats->nnz += pt.nnz();
    stats->remote_row_bytes += static_cast<std::int64_t>(recv.size() * sizeof(Entry));
    stats->exchange_seconds += std::chrono::duration<double>(t1 - t0).count();
    stats->compute_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  }
  return pt;
}

}  // namespace

DistMatrix transpose(const Communicator& comm, const DistMatrix& p, DistStats* stats) {
  return transpose_with(comm, p, std::nullopt, stats);
}

DistMatrix transpose(const Communicator& comm, const DistMatrix& p, Csr<double> local_transposed, DistStats* stats) {
  return transpose_with(comm, p, std::move(local_transposed), stats);
}

bool is_symmetric(const Communicator& comm, const DistMatrix& a, double rtol) {
  if (a.row_partition != a.col_partition) return false;  // partitions are global: the same on every rank
  const RowBlock mine = owned_row_block(a), mirrored = owned_row_block(transpose(comm, a));
  bool same = mine.row_ptr == mirrored.row_ptr && mine.col == mirrored.col;
  for (std::int64_t k = 0; same && k < mine.nnz(); ++k)
    same = std::abs(mine.values[k] - mirrored.values[k]) <= rtol * (std::abs(mine.values[k]) + std::abs(mirrored.values[k]));
  return comm.allreduce(std::int64_t{same}, ReduceOp::min) == 1;
}

}  // namespace tessera::dist
