#include "dist/transpose.hpp"

#include <chrono>

#include "dist/communicator.hpp"

namespace tessera::dist {

namespace {

struct Entry {
  std::int64_t row, col;  // in P^T
  double value;
};

// Entries of P^T grouped by destination rank; within a destination, P's row order, so the
// receiver's stable bucketing by row leaves every row's columns sorted.
std::vector<Entry> pack_by_owner(const DistMatrix& p, std::vector<std::int64_t>& counts) {
  const RowBlock rows = owned_row_block(p);
  counts.assign(static_cast<std::size_t>(p.col_partition.num_ranks()), 0);
  std::vector<int> dest(rows.col.size());
  for (std::size_t k = 0; k < rows.col.size(); ++k) ++counts[dest[k] = p.col_partition.owner(rows.col[k])];
  std::vector<std::int64_t> at(counts.size(), 0);
  for (std::size_t q = 1; q < counts.size(); ++q) at[q] = at[q - 1] + counts[q - 1];
  std::vector<Entry> out(rows.col.size());
  for (std::int64_t r = 0; r < rows.local_rows(); ++r)
    for (std::int64_t k = rows.row_ptr[r]; k < rows.row_ptr[r + 1]; ++k)
      out[at[dest[k]]++] = Entry{rows.col[k], rows.row_begin + r, rows.values[k]};
  return out;
}

RowBlock bucket_by_row(const std::vector<Entry>& entries, std::int64_t rows, std::int64_t cols, std::int64_t begin,
                       std::int64_t end) {
  RowBlock b;
  b.global_rows = rows;
  b.global_cols = cols;
  b.row_begin = begin;
  b.row_end = end;
  b.row_ptr.assign(static_cast<std::size_t>(end - begin) + 1, 0);
  for (const Entry& e : entries) ++b.row_ptr[e.row - begin + 1];
  for (std::int64_t r = 0; r < end - begin; ++r) b.row_ptr[r + 1] += b.row_ptr[r];
  std::vector<std::int64_t> at(b.row_ptr.begin(), b.row_ptr.end() - 1);
  b.col.resize(entries.size());
  b.values.resize(entries.size());
  for (const Entry& e : entries) {  // sources arrive in rank order = increasing P rows
    const std::int64_t k = at[e.row - begin]++;
    b.col[k] = e.col;
    b.values[k] = e.value;
  }
  return b;
}

}  // namespace

DistMatrix transpose(const Communicator& comm, const DistMatrix& p, DistStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int64_t> send_counts;
  const std::vector<Entry> send = pack_by_owner(p, send_counts);
  const std::vector<std::int64_t> recv_counts = comm.alltoall(send_counts);
  const std::vector<Entry> recv = comm.alltoallv(send, send_counts, recv_counts);
  const auto t1 = std::chrono::steady_clock::now();
  const int me = comm.rank();
  const RowBlock rows = bucket_by_row(recv, p.global_cols(), p.global_rows(), p.col_partition.begin(me),
                                      p.col_partition.end(me));
  DistMatrix pt = assemble(comm, rows, p.col_partition, p.row_partition);
  if (stats) {
    stats->rows += pt.owned_rows();
    stats->nnz += pt.nnz();
    stats->remote_row_bytes += static_cast<std::int64_t>(recv.size() * sizeof(Entry));
    stats->exchange_seconds += std::chrono::duration<double>(t1 - t0).count();
    stats->compute_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  }
  return pt;
}

}  // namespace tessera::dist
