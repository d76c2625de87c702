#include "local/formats/footprint.hpp"

#include "local/formats/instantiate.hpp"

namespace tessera {

template <class T>
Footprint memory_footprint(const Csr<T>& a) {
  return {static_cast<std::int64_t>(a.row_ptr.size() * sizeof(std::int64_t) + a.col_idx.size() * sizeof(std::int32_t)),
          static_cast<std::int64_t>(a.values.size() * sizeof(T))};
}

template <class T>
Footprint memory_footprint(const TileMatrix<T>& a) {
  return {static_cast<std::int64_t>((a.tile_row_ptr.size() + a.value_offset.size()) * sizeof(std::int64_t) +
                                    a.tile_col.size() * sizeof(std::int32_t) + a.bitmap.size() * sizeof(std::uint64_t)),
          static_cast<std::int64_t>(a.values.size() * sizeof(T))};
}

#define TESSERA_INSTANTIATE(T)                              \
  template Footprint memory_footprint(const Csr<T>&);       \
  template Footprint memory_footprint(const TileMatrix<T>&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera
