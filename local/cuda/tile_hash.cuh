#pragma once
// Tile-column hash tables of the symbolic phase: open addressing with linear probing, keyed by
// the output tile column J, holding the OR of the boolean products that land on (I, J). A
// group of threads (a warp, or a whole block) builds one table per output tile-row.
#include <cstdint>

#include "local/cuda/tile_device.cuh"

namespace tessera::cuda::dev {

inline constexpr std::int32_t kEmptyKey = -1;

template <int kThreads>
__device__ __forceinline__ void group_sync() {
  if constexpr (kThreads == 32) __syncwarp();
  else __syncthreads();
}

__device__ __forceinline__ unsigned hash_slot(std::int32_t key, unsigned mask) {
  return (static_cast<unsigned>(key) * 2654435761u) & mask;
}

/// Inserts `key` (ORing `bits` in when bits_table is given); returns true if it was new.
__device__ __forceinline__ bool hash_insert(std::int32_t* keys, unsigned long long* bits_table, unsigned mask,
                                            std::int32_t key, std::uint64_t bits) {
  for (unsigned slot = hash_slot(key, mask);; slot = (slot + 1) & mask) {
    std::int32_t seen = keys[slot];
    if (seen == kEmptyKey) seen = atomicCAS(&keys[slot], kEmptyKey, key);
    if (seen == kEmptyKey || seen == key) {
      if (bits_table) atomicOr(&bits_table[slot], static_cast<unsigned long long>(bits));
      return seen == kEmptyKey;
    }
  }
}

/// Feeds every (A(I,K), B(K,J)) pair of tile-row I with a non-empty boolean product into the
/// table. The group's threads take 8 B tiles of one A tile at a time, (threads / 8) A tiles
/// at once, so short B rows still keep the lanes busy. Returns this thread's count of new keys.
template <int kThreads>
__device__ int hash_tile_row(const TilePattern& a, const TilePattern& b, std::int64_t row,
                             int rank, std::int32_t* keys, unsigned long long* bits_table, unsigned mask) {
  constexpr int kLanesPerATile = 8;
  constexpr int kATilesAtOnce = kThreads / kLanesPerATile;
  int inserted = 0;
  const std::int64_t a_end = a.row_ptr[row + 1];
  for (std::int64_t ka = a.row_ptr[row] + rank / kLanesPerATile; ka < a_end; ka += kATilesAtOnce) {
    const std::int32_t k = a.col[ka];
    const std::uint64_t a_bits = a.bitmap[ka];
    const std::int64_t b_end = b.row_ptr[k + 1];
    for (std::int64_t kb = b.row_ptr[k] + rank % kLanesPerATile; kb < b_end; kb += kLanesPerATile) {
      const std::uint64_t product = tile::bool_product(a_bits, b.bitmap[kb]);
      if (product) inserted += hash_insert(keys, bits_table, mask, b.col[kb], product);
    }
  }
  return inserted;
}

}  // namespace tessera::cuda::dev
