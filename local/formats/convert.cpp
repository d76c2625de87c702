#include "local/formats/convert.hpp"

#include <algorithm>
#include <cmath>

#include "local/core/error.hpp"
#include "local/formats/instantiate.hpp"

namespace tessera {

template <class T>
void validate(const TileMatrix<T>& m, const std::string& what) {
  const std::int64_t ntr = m.tile_rows(), ntc = m.tile_cols(), nt = m.num_tiles();
  TESSERA_REQUIRE_INPUT(m.rows >= 0 && m.cols >= 0, what, ": negative dimensions");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(m.tile_row_ptr.size()) == ntr + 1 && m.tile_row_ptr[0] == 0 &&
                            m.tile_row_ptr[ntr] == nt,
                        what, ": tile_row_ptr does not describe ", nt, " tiles in ", ntr, " tile-rows");
  TESSERA_REQUIRE_INPUT(m.bitmap.size() == m.tile_col.size() && static_cast<std::int64_t>(m.value_offset.size()) == nt + 1,
                        what, ": bitmap/value_offset sizes do not match ", nt, " tiles");
  TESSERA_REQUIRE_INPUT(m.value_offset[0] == 0 && m.value_offset[nt] == m.nnz(), what,
                        ": value_offset does not cover the ", m.nnz(), " values");
  for (std::int64_t tr = 0; tr < ntr; ++tr) {
    // Checked per tile-row, before its tiles are read: a bad offset must not index past tile_col.
    TESSERA_REQUIRE_INPUT(m.tile_row_ptr[tr] <= m.tile_row_ptr[tr + 1] && m.tile_row_ptr[tr + 1] <= nt, what,
                          ": tile_row_ptr[", tr + 1, "] = ", m.tile_row_ptr[tr + 1], " is outside [",
                          m.tile_row_ptr[tr], ", ", nt, "]");
    const int valid_rows = static_cast<int>(std::min<std::int64_t>(tile::kDim, m.rows - tr * tile::kDim));
    for (std::int64_t t = m.tile_row_ptr[tr]; t < m.tile_row_ptr[tr + 1]; ++t) {
      const std::int64_t tc = m.tile_col[t];
      TESSERA_REQUIRE_INPUT(tc >= 0 && tc < ntc, what, ": tile ", t, " has tile column ", tc, " outside [0, ", ntc, ")");
      TESSERA_REQUIRE_INPUT(t == m.tile_row_ptr[tr] || m.tile_col[t - 1] < tc, what, ": tile-row ", tr,
                            " tile columns are not strictly increasing");
      const std::uint64_t b = m.bitmap[t];
      TESSERA_REQUIRE_INPUT(b != 0, what, ": tile ", t, " is empty (empty tiles must not be stored)");
      TESSERA_REQUIRE_INPUT(m.value_offset[t + 1] - m.value_offset[t] == tile::popcount(b), what, ": tile ", t,
                            " has ", m.value_offset[t + 1] - m.value_offset[t], " values for ", tile::popcount(b), " bits");
      const int valid_cols = static_cast<int>(std::min<std::int64_t>(tile::kDim, m.cols - tc * tile::kDim));
      for (int r = 0; r < tile::kDim; ++r)
        for (int c = 0; c < tile::kDim; ++c)
          TESSERA_REQUIRE_INPUT(!tile::has(b, r, c) || (r < valid_rows && c < valid_cols), what, ": tile ", t,
                                " has a bit outside the matrix at (", r, ", ", c, ")");
    }
  }
}

template <class T>
TileMatrix<T> to_tiles(const Csr<T>& a) {
  TileMatrix<T> t;
  t.rows = a.rows;
  t.cols = a.cols;
  const std::int64_t ntr = t.tile_rows();
  t.tile_row_ptr.assign(static_cast<std::size_t>(ntr) + 1, 0);
  t.values.reserve(a.values.size());
  struct Entry {
    std::int32_t tile_col;
    int bit;
    std::int64_t src;
  };
  std::vector<Entry> entries;
  for (std::int64_t tr = 0; tr < ntr; ++tr) {
    // Gather the (up to) 8 rows of this tile-row, then order by (tile column, bit): that is
    // tile order, and within a tile, bit order = the packed value order.
    entries.clear();
    const std::int64_t r_end = std::min(a.rows, (tr + 1) * tile::kDim);
    for (std::int64_t r = tr * tile::kDim; r < r_end; ++r)
      for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
        entries.push_back({a.col_idx[k] / tile::kDim,
                           tile::bit_index(static_cast<int>(r % tile::kDim), a.col_idx[k] % tile::kDim), k});
    std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
      return x.tile_col != y.tile_col ? x.tile_col < y.tile_col : x.bit < y.bit;
    });
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i == 0 || entries[i].tile_col != entries[i - 1].tile_col) {
        t.tile_col.push_back(entries[i].tile_col);
        t.bitmap.push_back(0);
        t.value_offset.push_back(t.value_offset.back());
      }
      t.bitmap.back() |= std::uint64_t{1} << entries[i].bit;
      t.values.push_back(a.values[entries[i].src]);
      ++t.value_offset.back();
    }
    t.tile_row_ptr[tr + 1] = t.num_tiles();
  }
  return t;
}

template <class T>
Csr<T> to_csr(const TileMatrix<T>& a) {
  Csr<T> m = Csr<T>::empty(a.rows, a.cols);
  m.col_idx.reserve(a.values.size());
  m.values.reserve(a.values.size());
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t tr = r / tile::kDim;
    const int lr = static_cast<int>(r % tile::kDim);
    for (std::int64_t t = a.tile_row_ptr[tr]; t < a.tile_row_ptr[tr + 1]; ++t) {
      const unsigned row_bits = tile::row_mask(a.bitmap[t], lr);
      for (int c = 0; c < tile::kDim; ++c) {
        if (!((row_bits >> c) & 1u)) continue;
        m.col_idx.push_back(a.tile_col[t] * tile::kDim + c);
        m.values.push_back(a.values[a.value_offset[t] + tile::rank_below(a.bitmap[t], tile::bit_index(lr, c))]);
      }
    }
    m.row_ptr[r + 1] = m.nnz();
  }
  return m;
}

template <class T>
std::vector<double> values_as_double(const HostArray<T>& values) {
  std::vector<double> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), [](T v) { return to_double(v); });
  return out;
}

template <class To, class From>
Csr<To> convert_values(const Csr<From>& a, const std::string& what) {
  if (PrecisionOf<To>::value != Precision::fp64)
    check_values_representable(values_as_double(a.values), PrecisionOf<To>::value, what);
  Csr<To> out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.row_ptr = a.row_ptr;
  out.col_idx = a.col_idx;
  out.values.resize(a.values.size());
  std::transform(a.values.begin(), a.values.end(), out.values.begin(),
                 [](From v) { return from_double<To>(to_double(v)); });
  return out;
}

#define TESSERA_INSTANTIATE(T)                                                   \
  template void validate(const TileMatrix<T>&, const std::string&);             \
  template TileMatrix<T> to_tiles(const Csr<T>&);                               \
  template Csr<T> to_csr(const TileMatrix<T>&);                                 \
  template std::vector<double> values_as_double(const HostArray<T>&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)
#define TESSERA_INSTANTIATE_PAIR(To, From) template Csr<To> convert_values<To, From>(const Csr<From>&, const std::string&);
TESSERA_INSTANTIATE_PAIR(double, double)
TESSERA_INSTANTIATE_PAIR(float, double)
TESSERA_INSTANTIATE_PAIR(Half, double)
TESSERA_INSTANTIATE_PAIR(double, float)
TESSERA_INSTANTIATE_PAIR(double, Half)
TESSERA_INSTANTIATE_PAIR(float, Half)
TESSERA_INSTANTIATE_PAIR(Half, float)

}  // namespace tessera
