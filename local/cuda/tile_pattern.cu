#include <utility>

#include "local/cuda/tile_convert.hpp"
#include "local/cuda/tile_pattern.hpp"

namespace tessera::cuda {

template <class T>
CsrTilePattern make_tile_pattern(const DeviceCsr<T>& a, cudaStream_t stream) {
  DeviceTileMatrix<T> tiles = to_tiles(a, stream);
  CsrTilePattern p;
  p.rows = a.rows;
  p.cols = a.cols;
  p.nnz = a.nnz;
  p.num_tiles = tiles.num_tiles;
  p.tile_row_ptr = std::move(tiles.tile_row_ptr);
  p.tile_col = std::move(tiles.tile_col);
  p.bitmap = std::move(tiles.bitmap);
  return p;  // the tile values and offsets are freed here: the SpMM reads A's CSR values
}

template CsrTilePattern make_tile_pattern<double>(const DeviceCsr<double>&, cudaStream_t);
template CsrTilePattern make_tile_pattern<float>(const DeviceCsr<float>&, cudaStream_t);

}  // namespace tessera::cuda
