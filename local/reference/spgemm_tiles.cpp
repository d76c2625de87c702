// Tile SpGEMM reference, written independently of the CSR one so that each checks the other.
// For every tile-row I of A: pair each tile A(I,K) with every tile B(K,J), skip pairs whose
// bitmap boolean product is empty, OR the boolean products into C(I,J)'s pattern and add the
// 8x8 product (over the stored entries only) into C(I,J)'s dense 64-value accumulator. The
// accumulators of a tile-row form a map keyed by J (a dense slot index over tile columns,
// reset per tile-row); C's tiles are then emitted in J order, their values in bit order.
// Each c_ij still receives its products in increasing k (tiles in K order, bits of a tile row
// in k order), the order Gustavson uses, so today the two references agree bit for bit; the
// tests rely only on the rounding bound, leaving either free to change its order.
#include <algorithm>
#include <array>

#include "local/core/error.hpp"
#include "local/core/half.hpp"
#include "local/formats/instantiate.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::ref {
namespace {

/// Index of the lowest set bit; `bits` must be non-zero.
inline int lowest_bit(std::uint64_t bits) { return __builtin_ctzll(bits); }

struct TileAccumulator {
  std::uint64_t pattern = 0;          // OR of the boolean products of the pairs seen
  std::array<double, tile::kElems> value{};
};

/// Output tiles of one tile-row, keyed by tile column J.
class TileRowAccumulator {
 public:
  explicit TileRowAccumulator(std::int64_t tile_cols) : slot_of_(static_cast<std::size_t>(tile_cols), -1) {}

  TileAccumulator& at(std::int32_t j) {
    if (slot_of_[j] < 0) {
      slot_of_[j] = static_cast<std::int32_t>(touched_.size());
      touched_.push_back(j);
      if (slots_.size() < touched_.size()) slots_.emplace_back();
      slots_[slot_of_[j]] = TileAccumulator{};
    }
    return slots_[slot_of_[j]];
  }

  /// Tile columns touched in this tile-row, sorted.
  const std::vector<std::int32_t>& sorted_columns() {
    std::sort(touched_.begin(), touched_.end());
    return touched_;
  }
  const TileAccumulator& tile(std::int32_t j) const { return slots_[slot_of_[j]]; }

  void reset() {
    for (const std::int32_t j : touched_) slot_of_[j] = -1;
    touched_.clear();
  }

 private:
  std::vector<std::int32_t> slot_of_;  // slot of tile column J in slots_, -1 if untouched
  std::vector<std::int32_t> touched_;
  std::vector<TileAccumulator> slots_;
};

/// acc += A_tile * B_tile over the stored entries: for each a(r,k), row k of B scaled by it.
template <class T>
void accumulate_tile_product(const TileMatrix<T>& a, std::int64_t ta, const TileMatrix<T>& b, std::int64_t tb,
                             TileAccumulator& acc) {
  const std::uint64_t b_bits = b.bitmap[tb];
  const T* a_values = a.values.data() + a.value_offset[ta];
  const T* b_values = b.values.data() + b.value_offset[tb];
  int a_rank = 0;  // A's set bits are visited in bit order, so their rank is a counter
  for (std::uint64_t a_bits = a.bitmap[ta]; a_bits != 0; a_bits &= a_bits - 1, ++a_rank) {
    const int r = lowest_bit(a_bits) / tile::kDim, k = lowest_bit(a_bits) % tile::kDim;
    const double a_rk = to_double(a_values[a_rank]);
    for (unsigned b_row = tile::row_mask(b_bits, k); b_row != 0; b_row &= b_row - 1) {
      const int c = lowest_bit(b_row);
      const double b_kc = to_double(b_values[tile::rank_below(b_bits, tile::bit_index(k, c))]);
      acc.value[tile::bit_index(r, c)] += a_rk * b_kc;
    }
  }
}

/// Appends one accumulated tile to C (dropping exact zeros unless keep_zeros); empty tiles
/// are not stored.
void emit_tile(std::int32_t j, const TileAccumulator& acc, bool keep_zeros, TileMatrix<double>& c) {
  std::uint64_t bits = acc.pattern;
  if (!keep_zeros)
    for (std::uint64_t rest = bits; rest != 0; rest &= rest - 1)
      if (acc.value[lowest_bit(rest)] == 0.0) bits &= ~(std::uint64_t{1} << lowest_bit(rest));
  if (bits == 0) return;
  c.tile_col.push_back(j);
  c.bitmap.push_back(bits);
  for (std::uint64_t rest = bits; rest != 0; rest &= rest - 1) c.values.push_back(acc.value[lowest_bit(rest)]);
  c.value_offset.push_back(c.nnz());
}

}  // namespace

template <class T>
TileMatrix<double> spgemm_tiles(const TileMatrix<T>& a, const TileMatrix<T>& b, const SpgemmOptions& options) {
  validate(a, "A");
  validate(b, "B");
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "spgemm_tiles: inner dimensions differ (A is ", a.rows, "x", a.cols,
                        ", B is ", b.rows, "x", b.cols, ")");
  TileMatrix<double> c;
  c.rows = a.rows;
  c.cols = b.cols;
  c.tile_row_ptr.assign(static_cast<std::size_t>(c.tile_rows()) + 1, 0);
  TileRowAccumulator row(b.tile_cols());
  for (std::int64_t ti = 0; ti < a.tile_rows(); ++ti) {
    row.reset();
    for (std::int64_t ta = a.tile_row_ptr[ti]; ta < a.tile_row_ptr[ti + 1]; ++ta) {
      const std::int64_t tk = a.tile_col[ta];
      for (std::int64_t tb = b.tile_row_ptr[tk]; tb < b.tile_row_ptr[tk + 1]; ++tb) {
        const std::uint64_t pattern = tile::bool_product(a.bitmap[ta], b.bitmap[tb]);
        if (pattern == 0) continue;
        TileAccumulator& acc = row.at(b.tile_col[tb]);
        acc.pattern |= pattern;
        accumulate_tile_product(a, ta, b, tb, acc);
      }
    }
    for (const std::int32_t j : row.sorted_columns()) emit_tile(j, row.tile(j), options.keep_zeros, c);
    c.tile_row_ptr[ti + 1] = c.num_tiles();
  }
  return c;
}

#define TESSERA_INSTANTIATE(T) \
  template TileMatrix<double> spgemm_tiles(const TileMatrix<T>&, const TileMatrix<T>&, const SpgemmOptions&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera::ref
