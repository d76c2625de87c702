#pragma once
// Rules of the 8x8 bitmap tile, shared by host and device code.
// Element (r, c) of a tile is bit r*8 + c of its uint64 bitmap; a tile's values are packed in
// increasing bit order (row-major within the tile), so the value of a present element is at
// value_offset[tile] + popcount(bitmap & ((1 << bit) - 1)).
#include <cstdint>

#include "local/core/host_device.hpp"

namespace tessera::tile {

inline constexpr int kDim = 8;
inline constexpr int kElems = 64;

TESSERA_HD int bit_index(int r, int c) { return r * kDim + c; }

TESSERA_HD bool has(std::uint64_t bitmap, int r, int c) { return (bitmap >> bit_index(r, c)) & 1u; }

TESSERA_HD int popcount(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

/// Rank of bit `bit` among the set bits below it: the element's position in the tile's values.
TESSERA_HD int rank_below(std::uint64_t bitmap, int bit) {
  return popcount(bitmap & ((std::uint64_t{1} << bit) - 1u));
}

/// Row r of the tile as an 8-bit column mask.
TESSERA_HD unsigned row_mask(std::uint64_t bitmap, int r) { return static_cast<unsigned>((bitmap >> (8 * r)) & 0xffu); }

/// Boolean product of two 8x8 patterns: bit (r,c) of the result is set iff some k has A(r,k)
/// and B(k,c). For each k: spread column k of A to whole rows, AND with row k of B broadcast to
/// every row. Eight shift/and/multiply steps, no branches.
TESSERA_HD std::uint64_t bool_product(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kRowLsb = 0x0101010101010101ull;  // bit 0 of every row
  std::uint64_t c = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < kDim; ++k) {
    const std::uint64_t a_col = ((a >> k) & kRowLsb) * 0xffu;        // row r all-ones iff A(r,k)
    const std::uint64_t b_row = ((b >> (8 * k)) & 0xffu) * kRowLsb;  // row k of B in every row
    c |= a_col & b_row;
  }
  return c;
}

/// Number of scalar multiply-adds in the tile product A*B (the useful work of one tile pair):
/// sum over k of |column k of A| * |row k of B|.
TESSERA_HD int product_flops(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kRowLsb = 0x0101010101010101ull;
  int n = 0;
  for (int k = 0; k < kDim; ++k) n += popcount((a >> k) & kRowLsb) * popcount((b >> (8 * k)) & 0xffu);
  return n;
}

/// Number of tiles needed to cover n elements.
TESSERA_HD std::int64_t count(std::int64_t n) { return (n + kDim - 1) / kDim; }

}  // namespace tessera::tile
