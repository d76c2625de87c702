#pragma once
// RowPartition: rank r owns global rows [offsets[r], offsets[r+1]). Boundaries are tile-row
// aligned (multiples of 8; only the final offset, the row count, may be unaligned) so that a
// rank's rows are whole tile-rows of the global tile matrix. Ranks may own no rows.
// Replicated on every rank: O(ranks) memory, never O(rows).
// Alignment::any opts out of the tile rule for partitions imposed from outside (PETSc's
// ownership ranges): the host backend accepts them; a device rank's block then starts mid-tile.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessera::dist {

class Communicator;

/// Which boundaries from_offsets accepts: whole tile-rows (the default) or any row.
enum class Alignment { tile_rows, any };

class RowPartition {
 public:
  RowPartition() = default;

  /// Explicit offsets (ranks+1 entries). Collective: every rank validates, and an invalid
  /// partition (wrong length, not starting at 0 / ending at global_rows, decreasing, not
  /// tile-aligned, or differing between ranks) throws the same InputError on every rank.
  static RowPartition from_offsets(const Communicator& comm, std::int64_t global_rows,
                                   std::vector<std::int64_t> offsets, Alignment alignment = Alignment::tile_rows);
  /// Collective: rank r owns the `mine` rows that rank r passes, ranks in order, any boundaries
  /// (Alignment::any): the partition of things counted per rank, e.g. AMG nodes or aggregates.
  static RowPartition from_counts(const Communicator& comm, std::int64_t mine);
  /// Whole tile-rows dealt out evenly (first ranks take the remainder).
  static RowPartition balanced_rows(std::int64_t global_rows, int num_ranks);
  /// Boundaries placed so each rank holds about nnz/ranks entries. Collective: each rank passes
  /// the lengths of the rows it owns under `current` (any valid partition, e.g. balanced_rows).
  static RowPartition balanced_nnz(const Communicator& comm, const RowPartition& current,
                                   const std::vector<std::int64_t>& owned_row_lengths);

  int num_ranks() const { return static_cast<int>(offsets_.size()) - 1; }
  std::int64_t global_rows() const { return offsets_.back(); }
  std::int64_t begin(int rank) const { return offsets_[rank]; }
  std::int64_t end(int rank) const { return offsets_[rank + 1]; }
  std::int64_t size(int rank) const { return end(rank) - begin(rank); }
  const std::vector<std::int64_t>& offsets() const { return offsets_; }
  /// The rank whose range holds `row` (0 <= row < global_rows); ranks owning no rows never match.
  int owner(std::int64_t row) const;

  bool operator==(const RowPartition& other) const { return offsets_ == other.offsets_; }
  bool operator!=(const RowPartition& other) const { return !(*this == other); }

 private:
  explicit RowPartition(std::vector<std::int64_t> offsets) : offsets_(std::move(offsets)) {}
  std::vector<std::int64_t> offsets_{0, 0};
};

/// "" if `offsets` is a valid partition of `global_rows` rows over `num_ranks` ranks, else the
/// reason, naming the first offending entry. Local (no communication).
std::string partition_error(std::int64_t global_rows, int num_ranks, const std::vector<std::int64_t>& offsets,
                            Alignment alignment = Alignment::tile_rows);

}  // namespace tessera::dist
