#pragma once
// Pieces shared by the .cu files of the tile SpGEMM (not part of the public API).
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/tile_device.cuh"
#include "local/cuda/tile_spgemm.hpp"

namespace tessera::cuda {

/// A tile-row is *listed* rather than searched when the pull kernel would visit more than this
/// many (A tile, C tile pair) combinations per real tile pair: a pull warp walks all of A's row
/// for every pair of C tiles, which on power-law rows (few long rows against many output
/// tiles) is mostly searching for absent B tiles. A listed row's useful pairs are found once,
/// by the symbolic phase, and kept per pair of C tiles in A's order.
inline constexpr std::int64_t kListRatio = 4;

/// Work lists of the numeric phase, kept by the plan for reuse. Both kinds of task are one
/// warp per pair of C tiles of a tile-row, numbered row by row: task t of a kind, in row `row`,
/// is its row's task i = t - row_start[row], on the row's C tiles 2i and 2i + 1 (if the row has
/// it). A searched task keeps its row; listed tasks (hundreds of millions on power-law products)
/// keep 4 bytes each, their first pair counted from their thread block's first task's; their
/// row follows from that task's row.
struct WorkLists {
  DeviceBuffer<std::int32_t> pull_row;          // searched tasks
  DeviceBuffer<std::int64_t> row_pull_start;    // rows + 1
  std::int64_t listed_tasks = 0;                // listed tasks (skewed rows)
  DeviceBuffer<std::int64_t> row_listed_start;  // rows + 1
  DeviceBuffer<std::int32_t> listed_block_row;  // listed_task_row's bounds: blocks of kTasksPerBlock, + 1
  DeviceBuffer<std::int64_t> block_pair_start;  // blocks + 1: a block's first pair in listed_pairs
  DeviceBuffer<std::uint32_t> pair_offset;      // per listed task: its first pair, counted from its block's
  DeviceBuffer<ListedPair> listed_pairs;        // per task in A's order: the summation order, fixed
  std::int64_t tile_pairs = 0;
  std::int64_t list_batches = 0;                // batches the lists were made in (0: none made)

  /// Device bytes the lists keep beyond the tasks' numbering (TileSpgemmInfo::list_bytes): what
  /// TileSpgemmOptions::list_bytes_limit counts besides one batch's scratch.
  std::int64_t list_bytes() const {
    return std::int64_t(block_pair_start.bytes() + pair_offset.bytes() + listed_pairs.bytes());
  }
};

/// Warp tasks a thread block of the listed kernels runs.
inline constexpr int kTasksPerBlock = 8;

/// Thread blocks of `tasks` listed tasks.
inline std::int64_t listed_blocks(std::int64_t tasks) { return (tasks + kTasksPerBlock - 1) / kTasksPerBlock; }

/// The row of task t: the last row in [lo, hi] whose first task is at most t (rows without
/// tasks share their first task with the next row, so the last one is the task's own).
__device__ inline std::int64_t row_of_task(const std::int64_t* row_start, std::int64_t lo, std::int64_t hi,
                                           std::int64_t t) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (row_start[mid] <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// The row of listed task t, searched between the rows of its block's first task and of the
/// next block's: a block of a skewed row's tasks rarely spans rows, so usually no search.
__device__ inline std::int64_t listed_task_row(const std::int32_t* block_row, const std::int64_t* row_start,
                                               std::int64_t t) {
  const std::int64_t b = t / kTasksPerBlock;
  return row_of_task(row_start, block_row[b], block_row[b + 1], t);
}

/// `pairs[I]` = tile pairs of output tile-row I; `c` holds C's final structure; skewed rows are
/// listed within options.list_bytes_limit and list_batch_bytes.
WorkLists build_work_lists(const TilePattern& a, const TilePattern& b, std::int64_t b_tile_cols,
                           const TilePattern& c, const std::int64_t* pairs, const TileSpgemmOptions& options,
                           cudaStream_t s);

/// Exclusive prefix sum of counts[0..n) into offsets[0..n]; returns offsets[n].
std::int64_t exclusive_scan_total(const std::int64_t* counts, std::int64_t* offsets, std::int64_t n,
                                  cudaStream_t s);

}  // namespace tessera::cuda
