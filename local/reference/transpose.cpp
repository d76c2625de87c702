// Transpose by counting sort on the column index: count each column, prefix-sum into row
// offsets of A^T, then scatter A's entries in row order. Rows of A are visited in increasing
// order, so each row of A^T comes out sorted; values are moved, never recomputed.
#include "local/core/error.hpp"
#include "local/core/half.hpp"
#include "local/formats/instantiate.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::ref {

template <class T>
Csr<T> transpose(const Csr<T>& a) {
  validate(a, "A");
  TESSERA_REQUIRE_INPUT(a.rows <= INT32_MAX, "transpose: A has ", a.rows,
                        " rows, which would be columns of A^T beyond the int32 column index");
  Csr<T> t = Csr<T>::empty(a.cols, a.rows);
  for (const std::int32_t c : a.col_idx) ++t.row_ptr[c + 1];
  for (std::int64_t r = 0; r < t.rows; ++r) t.row_ptr[r + 1] += t.row_ptr[r];
  t.col_idx.resize(a.col_idx.size());
  t.values.resize(a.values.size());
  std::vector<std::int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);  // next free slot per row of A^T
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const std::int64_t dst = next[a.col_idx[p]]++;
      t.col_idx[dst] = static_cast<std::int32_t>(i);
      t.values[dst] = a.values[p];
    }
  return t;
}

#define TESSERA_INSTANTIATE(T) template Csr<T> transpose(const Csr<T>&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera::ref
