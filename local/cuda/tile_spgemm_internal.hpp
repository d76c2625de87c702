#pragma once
// Pieces shared by the .cu files of the tile SpGEMM (not part of the public API).
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/tile_device.cuh"
#include "local/cuda/tile_spgemm.hpp"

namespace tessera::cuda {

/// A tile-row is done by scatter (push) rather than by the MMA pair kernel (pull) when the
/// pull kernel would visit more than this many (A tile, C tile pair) combinations per real
/// tile pair: a pull warp walks all of A's row for every pair of C tiles, which on power-law
/// rows (few long rows against many output tiles) is mostly searching for absent B tiles.
inline constexpr std::int64_t kPushRatio = 4;

/// Work lists of the numeric phase, kept by the plan for reuse.
struct WorkLists {
  DeviceBuffer<std::int32_t> pull_row;     // per MMA warp task: the tile-row
  DeviceBuffer<std::int64_t> pull_tile;    // per MMA warp task: its first C tile (second = +1)
  DeviceBuffer<std::int32_t> push_rows;    // scatter rows (their C values are zeroed first)
  DeviceBuffer<std::int64_t> push_a_tile;  // per scatter warp task: an A tile of a scatter row
  DeviceBuffer<std::int32_t> push_a_row;
  std::int64_t tile_pairs = 0;
};

/// `pairs[I]` = tile pairs of output tile-row I; `c` holds C's final structure.
WorkLists build_work_lists(const TilePattern& a, const TilePattern& c, const std::int64_t* pairs, cudaStream_t s);

/// Exclusive prefix sum of counts[0..n) into offsets[0..n]; returns offsets[n].
std::int64_t exclusive_scan_total(const std::int64_t* counts, std::int64_t* offsets, std::int64_t n,
                                  cudaStream_t s);

}  // namespace tessera::cuda
