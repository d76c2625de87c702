#pragma once
// Device building blocks of the tile kernels: element access by popcount rank, searches in a
// sorted tile-row, and value-type traits (Half is read as __half).
#include <cuda_fp16.h>

#include <cstdint>

#include "local/core/half.hpp"
#include "local/formats/tile_bits.hpp"

namespace tessera::cuda::dev {

/// Value of element `bit` of a tile (0 when absent), converted to the accumulation type.
template <class Acc, class T>
__device__ __forceinline__ Acc tile_element(const T* values, std::int64_t offset, std::uint64_t bitmap, int bit) {
  if (!((bitmap >> bit) & 1u)) return Acc(0);
  return Acc(values[offset + tile::rank_below(bitmap, bit)]);
}

template <class Acc>
__device__ __forceinline__ Acc tile_element(const Half* values, std::int64_t offset, std::uint64_t bitmap, int bit) {
  if (!((bitmap >> bit) & 1u)) return Acc(0);
  return Acc(__half2float(reinterpret_cast<const __half*>(values)[offset + tile::rank_below(bitmap, bit)]));
}

/// Raw 16-bit pattern of a Half element (0 when absent), for packing MMA f16 fragments.
__device__ __forceinline__ unsigned short half_bits(const Half* values, std::int64_t offset, std::uint64_t bitmap,
                                                    int bit) {
  if (!((bitmap >> bit) & 1u)) return 0;
  return values[offset + tile::rank_below(bitmap, bit)].bits;
}

/// Index of tile column `col` in the sorted range [begin, end) of tile_col, or -1.
__device__ __forceinline__ std::int64_t find_tile(const std::int32_t* tile_col, std::int64_t begin, std::int64_t end,
                                                  std::int32_t col) {
  while (begin < end) {
    const std::int64_t mid = begin + ((end - begin) >> 1);
    const std::int32_t v = tile_col[mid];
    if (v == col) return mid;
    if (v < col) begin = mid + 1;
    else end = mid;
  }
  return -1;
}

}  // namespace tessera::cuda::dev

namespace tessera::cuda {

/// Pattern arrays of a DeviceTileMatrix, passed to kernels by value.
struct TilePattern {
  std::int64_t tile_rows = 0;
  const std::int64_t* row_ptr = nullptr;
  const std::int32_t* col = nullptr;
  const std::uint64_t* bitmap = nullptr;
  const std::int64_t* offset = nullptr;
};

/// Pattern plus values.
template <class T>
struct TileView : TilePattern {
  T* values = nullptr;
};

template <class M>
TilePattern pattern_of(const M& m) {
  return {m.tile_rows(), m.tile_row_ptr.data(), m.tile_col.data(), m.bitmap.data(), m.value_offset.data()};
}

template <class T, class M>
TileView<T> view_of(M& m) {
  TileView<T> v;
  static_cast<TilePattern&>(v) = pattern_of(m);
  v.values = m.values.data();
  return v;
}

}  // namespace tessera::cuda
