#pragma once
// One function, memory_footprint, reports what a matrix occupies in each format, so users
// can compare CSR with tiles (index bytes vs value bytes).
#include <cstdint>

#include "local/formats/csr.hpp"
#include "local/formats/tile_matrix.hpp"

namespace tessera {

struct Footprint {
  std::int64_t index_bytes = 0;  // offsets, column indices, bitmaps
  std::int64_t value_bytes = 0;  // stored values
  std::int64_t total() const { return index_bytes + value_bytes; }
};

template <class T>
Footprint memory_footprint(const Csr<T>& a);
template <class T>
Footprint memory_footprint(const TileMatrix<T>& a);

}  // namespace tessera
