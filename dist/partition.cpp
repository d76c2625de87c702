#include "dist/partition.hpp"

#include <algorithm>
#include <limits>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/formats/tile_bits.hpp"

namespace tessera::dist {

namespace {

constexpr std::int64_t kTile = tile::kDim;

// Order-sensitive fingerprint, to detect ranks holding different offsets with one allreduce.
std::int64_t fingerprint(const std::vector<std::int64_t>& v) {
  std::uint64_t h = 1469598103934665603ull ^ v.size();
  for (std::int64_t x : v) h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ull;
  return static_cast<std::int64_t>(h >> 1);
}

}  // namespace

std::string partition_error(std::int64_t global_rows, int num_ranks, const std::vector<std::int64_t>& offsets,
                            Alignment alignment) {
  const auto prefix = [&] { return detail::concat("invalid row partition of ", global_rows, " rows over ", num_ranks, " ranks: "); };
  if (static_cast<std::int64_t>(offsets.size()) != std::int64_t{num_ranks} + 1)
    return prefix() + detail::concat("expected ", num_ranks + 1, " offsets (ranks + 1), got ", offsets.size());
  if (offsets.front() != 0) return prefix() + detail::concat("offsets[0] is ", offsets.front(), ", expected 0");
  if (offsets.back() != global_rows)
    return prefix() + detail::concat("offsets[", num_ranks, "] is ", offsets.back(), ", expected ", global_rows,
                                     " (the offsets must cover every row)");
  for (int r = 0; r < num_ranks; ++r) {
    if (offsets[r + 1] < offsets[r])
      return prefix() + detail::concat("offsets decrease at offsets[", r + 1, "] = ", offsets[r + 1], " < offsets[",
                                       r, "] = ", offsets[r]);
  }
  for (int r = 1; r < num_ranks && alignment == Alignment::tile_rows; ++r) {
    if (offsets[r] % kTile != 0 && offsets[r] != global_rows)
      return prefix() + detail::concat("offsets[", r, "] = ", offsets[r], " is not a multiple of the tile height ",
                                       kTile, " (only the matrix end may be unaligned)");
  }
  return "";
}

RowPartition RowPartition::from_offsets(const Communicator& comm, std::int64_t global_rows,
                                        std::vector<std::int64_t> offsets, Alignment alignment) {
  const std::int64_t mine = fingerprint(offsets) ^ global_rows;
  const bool agree = comm.allreduce(mine, ReduceOp::min) == comm.allreduce(mine, ReduceOp::max);
  // Every rank sees the same `agree`, so either all check the same offsets or all fail alike.
  if (!agree) throw InputError("invalid row partition: the ranks passed different offsets or row counts");
  throw_if_any_rank_failed(comm, partition_error(global_rows, comm.size(), offsets, alignment));
  return RowPartition(std::move(offsets));
}

RowPartition RowPartition::from_counts(const Communicator& comm, std::int64_t mine) {
  std::vector<std::int64_t> offsets{0};
  for (std::int64_t c : comm.allgather(mine)) offsets.push_back(offsets.back() + c);
  const std::int64_t total = offsets.back();
  return from_offsets(comm, total, std::move(offsets), Alignment::any);
}

RowPartition RowPartition::balanced_rows(std::int64_t global_rows, int num_ranks) {
  TESSERA_REQUIRE_INPUT(global_rows >= 0 && num_ranks >= 1, "cannot partition ", global_rows, " rows over ",
                        num_ranks, " ranks");
  const std::int64_t tiles = tile::count(global_rows);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(num_ranks) + 1);
  for (int r = 0; r <= num_ranks; ++r) offsets[r] = std::min(global_rows, kTile * (tiles * r / num_ranks));
  return RowPartition(std::move(offsets));
}

RowPartition RowPartition::balanced_nnz(const Communicator& comm, const RowPartition& current,
                                        const std::vector<std::int64_t>& owned_row_lengths) {
  const int me = comm.rank(), ranks = comm.size();
  const std::int64_t first = current.begin(me), n = current.global_rows();
  const std::string error = static_cast<std::int64_t>(owned_row_lengths.size()) == current.size(me)
                                ? ""
                                : detail::concat("balanced_nnz: rank ", me, " passed ", owned_row_lengths.size(),
                                                 " row lengths for its ", current.size(me), " rows");
  throw_if_any_rank_failed(comm, error);
  std::int64_t mine = 0;
  for (std::int64_t len : owned_row_lengths) mine += len;
  const std::int64_t total = comm.allreduce(mine, ReduceOp::sum);
  if (total == 0) return balanced_rows(n, ranks);
  std::int64_t before = 0;  // nonzeros in rows [0, first)
  MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, comm.mpi());
  if (me == 0) before = 0;
  // Boundary j goes at the first tile boundary b with nnz(rows < b) >= j*total/ranks. Each
  // rank proposes the boundaries it holds; a MIN allreduce keeps the first. O(ranks) traffic.
  std::vector<std::int64_t> cut(static_cast<std::size_t>(ranks) + 1, std::numeric_limits<std::int64_t>::max());
  const auto target = [&](int j) { return static_cast<double>(total) * j / ranks; };
  std::int64_t running = before;  // nonzeros in rows [0, b)
  for (std::int64_t b = first;;) {
    for (int j = 1; j < ranks; ++j)
      if (static_cast<double>(running) >= target(j)) cut[j] = std::min(cut[j], b);
    if (b == current.end(me)) break;
    const std::int64_t stop = std::min(b + kTile, current.end(me));
    for (std::int64_t r = b; r < stop; ++r) running += owned_row_lengths[r - first];
    b = stop;
  }
  comm.allreduce_in_place(cut, ReduceOp::min);
  cut[0] = 0;
  cut[ranks] = n;
  for (int j = 1; j < ranks; ++j) cut[j] = std::min(std::max(cut[j], cut[j - 1]), n);
  return RowPartition(std::move(cut));
}

int RowPartition::owner(std::int64_t row) const {
  const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), row);
  return static_cast<int>(it - offsets_.begin()) - 1;
}

}  // namespace tessera::dist
