#pragma once
// One row of C = A*B by Gustavson's algorithm: the step that ref::spgemm repeats for every row
// and the threaded host SpGEMM (local/host/spgemm.hpp) repeats for the rows of each range. Both
// add a row's products in the same order (A's entries in turn, each times B's row), so their
// results are the same bit for bit.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "local/core/error.hpp"
#include "local/core/half.hpp"
#include "local/formats/csr.hpp"

namespace tessera::ref::detail {

/// InputError unless A and B are well-formed (validate) and A's columns are B's rows.
template <class T>
void require_conformable(const Csr<T>& a, const Csr<T>& b, const char* op) {
  validate(a, "A");
  validate(b, "B");
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, op, ": inner dimensions differ (A is ", a.rows, "x", a.cols, ", B is ",
                        b.rows, "x", b.cols, ")");
}

/// A dense accumulator for one output row at a time: b.cols doubles with a marker array
/// recording which row last touched each column, so each row costs O(its products + its output
/// log its output) and the arrays are reset for free.
class GustavsonAccumulator {
 public:
  explicit GustavsonAccumulator(std::int64_t cols)
      : value_(static_cast<std::size_t>(cols)), last_row_(static_cast<std::size_t>(cols), -1) {}

  /// Appends row i of A*B to c's columns and values (sorted; entries that cancel to exactly 0
  /// dropped unless keep_zeros). The caller sets c's row offsets.
  template <class T>
  void append_row(const Csr<T>& a, const Csr<T>& b, std::int64_t i, bool keep_zeros, Csr<double>& c) {
    columns_.clear();
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const double a_ik = to_double(a.values[p]);
      const std::int64_t k = a.col_idx[p];
      for (std::int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) add(i, b.col_idx[q], a_ik * to_double(b.values[q]));
    }
    std::sort(columns_.begin(), columns_.end());
    for (const std::int32_t j : columns_) {
      if (!keep_zeros && value_[j] == 0.0) continue;
      c.col_idx.push_back(j);
      c.values.push_back(value_[j]);
    }
  }

 private:
  void add(std::int64_t row, std::int32_t col, double product) {
    if (last_row_[col] != row) {
      last_row_[col] = row;
      value_[col] = 0.0;
      columns_.push_back(col);
    }
    value_[col] += product;
  }

  std::vector<double> value_;            // value_[j]: partial sum of C(i, j) while last_row_[j] == i
  std::vector<std::int64_t> last_row_;   // last_row_[j] == i iff column j is already in row i
  std::vector<std::int32_t> columns_;    // columns of row i, in discovery order
};

}  // namespace tessera::ref::detail
