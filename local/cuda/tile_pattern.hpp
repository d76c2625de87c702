#pragma once
// The 8x8 tile pattern of a CSR matrix without values: the tile SpMM (tile_spmm.hpp) walks it
// and reads A's CSR values in place. Within a tile, row r's stored entries are
// consecutive in CSR (rows are sorted, the Csr invariant), so a kernel that walks a tile-row's
// tiles in order finds row r's values at a running position: row_ptr[8I + r] plus the row's
// popcounts in the tiles before. A plan that keeps only this pattern (12 bytes a tile, 8 a
// tile-row) stays valid when A's values change, as every other SpMV/SpMM plan does.
// (An SpMV through the pattern was measured and dropped: on elasticity3d:80, 24 values a tile,
// it moved 28% fewer bytes than CSR but took 0.672 ms against CSR-Stream's 0.516 in FP64 and
// 0.366 against 0.350 in FP32 on an H100; two products a lane a tile leave it latency-bound.)
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_matrix.hpp"

namespace tessera::cuda {

/// The 8x8 tile pattern of a CSR matrix: a CSR of tiles with a bitmap per tile, no values; it owns
/// its arrays (tile_device.cuh's TilePattern is the kernels' by-value view of a tile matrix's).
struct CsrTilePattern {
  std::int64_t rows = 0, cols = 0, nnz = 0, num_tiles = 0;
  DeviceBuffer<std::int64_t> tile_row_ptr;  // tile_rows + 1
  DeviceBuffer<std::int32_t> tile_col;      // num_tiles, sorted within a tile-row
  DeviceBuffer<std::uint64_t> bitmap;       // num_tiles, bit r*8+c <=> (8I+r, 8K+c) stored
  /// Mean stored values per tile (1..64): what decides whether walking tiles pays.
  double fill() const { return num_tiles ? static_cast<double>(nnz) / static_cast<double>(num_tiles) : 0.0; }
};

/// The tile pattern of `a` (device conversion, one synchronisation).
template <class T>
CsrTilePattern make_tile_pattern(const DeviceCsr<T>& a, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
