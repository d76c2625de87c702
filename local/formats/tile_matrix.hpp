#pragma once
// TileMatrix<T>: the bitmap tile format (tSparse / bmSPARSE idea), stored as a CSR of tiles.
//   tile_row_ptr  int64, tile_rows()+1   offsets of each tile-row's tiles
//   tile_col      int32, num_tiles()     tile column of each tile, sorted within a tile-row
//   bitmap        uint64, num_tiles()    bit r*8+c set iff element (r,c) of the tile is stored
//   value_offset  int64, num_tiles()+1   prefix sum of popcount(bitmap)
//   values        T, nnz()               each tile's values in bit order (row-major in tile)
// Any dimensions are allowed: the last tile-row/column is partial and its bits beyond the
// matrix are never set. Empty tiles are never stored (every bitmap is non-zero).
#include <cstdint>
#include <string>
#include <vector>

#include "local/formats/tile_bits.hpp"

namespace tessera {

template <class T>
struct TileMatrix {
  using value_type = T;

  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> tile_row_ptr{0};
  std::vector<std::int32_t> tile_col;
  std::vector<std::uint64_t> bitmap;
  std::vector<std::int64_t> value_offset{0};
  std::vector<T> values;

  std::int64_t tile_rows() const { return tile::count(rows); }
  std::int64_t tile_cols() const { return tile::count(cols); }
  std::int64_t num_tiles() const { return static_cast<std::int64_t>(tile_col.size()); }
  std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }
};

/// Throws InputError unless `m` satisfies every invariant listed above.
template <class T>
void validate(const TileMatrix<T>& m, const std::string& what = "tile matrix");

}  // namespace tessera
