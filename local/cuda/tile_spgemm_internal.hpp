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
/// warp per pair of C tiles of a tile-row, numbered row by row: with i = t - row_start[row]
/// (row = row[t]), task t of a kind is its row's task i, on the row's C tiles 2i and 2i + 1
/// (if the row has it).
struct WorkLists {
  DeviceBuffer<std::int32_t> pull_row;          // searched tasks
  DeviceBuffer<std::int64_t> row_pull_start;    // rows + 1
  DeviceBuffer<std::int32_t> listed_row;        // listed tasks (skewed rows)
  DeviceBuffer<std::int64_t> row_listed_start;  // rows + 1
  DeviceBuffer<std::int64_t> listed_start;      // listed task t's pairs: [listed_start[t], listed_start[t+1])
  DeviceBuffer<ListedPair> listed_pairs;        // per task in A's order: the summation order, fixed
  std::int64_t tile_pairs = 0;
  std::int64_t list_batches = 0;                // batches the lists were made in (0: none made)
};

/// `pairs[I]` = tile pairs of output tile-row I; `c` holds C's final structure; skewed rows are
/// listed within options.list_bytes_limit and list_batch_bytes.
WorkLists build_work_lists(const TilePattern& a, const TilePattern& b, std::int64_t b_tile_cols,
                           const TilePattern& c, const std::int64_t* pairs, const TileSpgemmOptions& options,
                           cudaStream_t s);

/// Exclusive prefix sum of counts[0..n) into offsets[0..n]; returns offsets[n].
std::int64_t exclusive_scan_total(const std::int64_t* counts, std::int64_t* offsets, std::int64_t n,
                                  cudaStream_t s);

}  // namespace tessera::cuda
