#pragma once
// Csr<T>: compressed sparse rows on the host. int64 row offsets (nnz may pass 2^31), int32
// column indices (a local block's columns fit), values of type T (double, float or Half).
// Invariant (checked by validate): columns sorted within each row, no duplicates, in range.
// The arrays are HostArrays: resize() does not zero-fill (local/core/host_array.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "local/core/host_array.hpp"

namespace tessera {

template <class T>
struct Csr {
  using value_type = T;

  std::int64_t rows = 0;
  std::int64_t cols = 0;
  HostArray<std::int64_t> row_ptr{0};  // rows + 1 entries, row_ptr[0] == 0
  HostArray<std::int32_t> col_idx;     // nnz entries, sorted within each row
  HostArray<T> values;                 // nnz entries

  Csr() = default;
  /// A copy's arrays are written on the rank's threads (copy_on_threads): the setup copies
  /// whole levels (A into the hierarchy, the Galerkin product out of its DistPtap).
  Csr(const Csr& o)
      : rows(o.rows),
        cols(o.cols),
        row_ptr(copy_on_threads(o.row_ptr.data(), o.row_ptr.size())),
        col_idx(copy_on_threads(o.col_idx.data(), o.col_idx.size())),
        values(copy_on_threads(o.values.data(), o.values.size())) {}
  Csr(Csr&&) noexcept = default;
  Csr& operator=(const Csr& o) { return *this = Csr(o); }
  Csr& operator=(Csr&&) noexcept = default;

  std::int64_t nnz() const { return static_cast<std::int64_t>(col_idx.size()); }
  std::int64_t row_length(std::int64_t r) const { return row_ptr[r + 1] - row_ptr[r]; }

  /// An all-zero rows x cols matrix (no stored entries). Its zero offsets are written on the
  /// rank's threads: callers size level-0 blocks with it, then fill the offsets in parallel.
  static Csr empty(std::int64_t rows, std::int64_t cols) {
    Csr m;
    m.rows = rows;
    m.cols = cols;
    m.row_ptr = filled_on_threads<std::int64_t>(static_cast<std::size_t>(rows) + 1, 0);
    return m;
  }
};

/// Throws InputError (naming `what` and the first violation) unless `m` satisfies the Csr
/// invariant. Cost O(nnz).
template <class T>
void validate(const Csr<T>& m, const std::string& what = "matrix");

namespace detail {
/// validate's checks of the pattern (dimensions, offsets, columns) on raw arrays of any index
/// width, row_ptr[rows] taken as the entry count; validate(CsrArrays) shares them.
template <class Offset, class Index>
void validate_pattern(std::int64_t rows, std::int64_t cols, const Offset* row_ptr, const Index* col_idx,
                      const std::string& what);
}  // namespace detail

/// Builds a Csr from unsorted (row, col, value) triplets, summing duplicates. Indices are
/// 0-based; out-of-range indices are an InputError.
template <class T>
Csr<T> csr_from_triplets(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> row,
                         std::vector<std::int64_t> col, std::vector<T> val);

/// Exact equality of pattern and values (bitwise value equality, so -0 != +0 is not an issue:
/// values compare with ==).
template <class T>
bool operator==(const Csr<T>& a, const Csr<T>& b);

}  // namespace tessera
