#include "local/formats/csr.hpp"

#include <algorithm>
#include <numeric>

#include "local/core/error.hpp"
#include "local/core/half.hpp"
#include "local/core/host_ranges.hpp"
#include "local/formats/instantiate.hpp"

namespace tessera {

namespace detail {

template <class Offset, class Index>
void validate_pattern(std::int64_t rows, std::int64_t cols, const Offset* row_ptr, const Index* col_idx,
                      const std::string& what) {
  TESSERA_REQUIRE_INPUT(rows >= 0 && cols >= 0, what, ": negative dimensions ", rows, "x", cols);
  TESSERA_REQUIRE_INPUT(cols <= INT32_MAX, what, ": ", cols, " columns exceed the int32 column index");
  TESSERA_REQUIRE_INPUT(row_ptr[0] == 0, what, ": row_ptr[0] is ", row_ptr[0], ", expected 0");
  const std::int64_t nnz = row_ptr[rows];
  TESSERA_REQUIRE_INPUT(nnz >= 0, what, ": row_ptr ends at ", nnz);
  // Row by row in parallel (host_ranges.hpp): each range reports its first bad row, and the
  // first range's report wins, which is the serial loop's first failure.
  const std::string error = host::first_failure(rows, [&](std::int64_t first, std::int64_t last) -> std::string {
    // Rows before `first` are another range's to check: this range's start must be in range.
    if (row_ptr[first] < 0 || row_ptr[first] > nnz)
      return detail::concat(what, ": row_ptr[", first, "] = ", row_ptr[first], " is outside the ", nnz, " entries");
    for (std::int64_t r = first; r < last; ++r) {
      if (row_ptr[r] > row_ptr[r + 1]) return detail::concat(what, ": row_ptr decreases at row ", r);
      // Bounded by nnz here, not only at the end: a later decrease must not let this row read
      // past col_idx first.
      if (row_ptr[r + 1] > nnz)
        return detail::concat(what, ": row_ptr[", r + 1, "] = ", row_ptr[r + 1], " is past the ", nnz, " entries");
      for (std::int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
        const std::int64_t c = col_idx[k];
        if (c < 0 || c >= cols) return detail::concat(what, ": row ", r, " has column ", c, " outside [0, ", cols, ")");
        if (k > row_ptr[r] && col_idx[k - 1] >= col_idx[k])
          return detail::concat(what, ": row ", r, " columns are not strictly increasing at column ", c);
      }
    }
    return "";
  });
  TESSERA_REQUIRE_INPUT(error.empty(), error);
}

template void validate_pattern(std::int64_t, std::int64_t, const std::int32_t*, const std::int32_t*, const std::string&);
template void validate_pattern(std::int64_t, std::int64_t, const std::int64_t*, const std::int64_t*, const std::string&);
template void validate_pattern(std::int64_t, std::int64_t, const std::int64_t*, const std::int32_t*, const std::string&);

}  // namespace detail

template <class T>
void validate(const Csr<T>& m, const std::string& what) {
  TESSERA_REQUIRE_INPUT(m.rows >= 0, what, ": negative dimensions ", m.rows, "x", m.cols);
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(m.row_ptr.size()) == m.rows + 1, what,
                        ": row_ptr has ", m.row_ptr.size(), " entries, expected ", m.rows + 1);
  TESSERA_REQUIRE_INPUT(m.values.size() == m.col_idx.size(), what, ": ", m.values.size(), " values for ",
                        m.col_idx.size(), " column indices");
  TESSERA_REQUIRE_INPUT(m.row_ptr[m.rows] == m.nnz(), what, ": row_ptr ends at ", m.row_ptr[m.rows],
                        " but there are ", m.nnz(), " entries");
  detail::validate_pattern(m.rows, m.cols, m.row_ptr.data(), m.col_idx.data(), what);
}

template <class T>
Csr<T> csr_from_triplets(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> row,
                         std::vector<std::int64_t> col, std::vector<T> val) {
  TESSERA_REQUIRE_INPUT(row.size() == col.size() && col.size() == val.size(), "triplet arrays differ in length");
  TESSERA_REQUIRE_INPUT(rows >= 0 && cols >= 0, "negative dimensions ", rows, "x", cols);
  TESSERA_REQUIRE_INPUT(cols <= INT32_MAX, cols, " columns exceed the int32 column index");
  const std::size_t n = row.size();
  for (std::size_t i = 0; i < n; ++i)
    TESSERA_REQUIRE_INPUT(row[i] >= 0 && row[i] < rows && col[i] >= 0 && col[i] < cols, "entry (", row[i], ", ",
                          col[i], ") is outside the ", rows, "x", cols, " matrix");
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return row[a] != row[b] ? row[a] < row[b] : col[a] < col[b];
  });
  Csr<T> m = Csr<T>::empty(rows, cols);
  m.col_idx.reserve(n);
  m.values.reserve(n);
  std::int64_t last_row = -1, last_col = -1;
  for (std::size_t i : order) {
    if (row[i] == last_row && col[i] == last_col) {  // duplicate: sum in double, store in T
      m.values.back() = from_double<T>(to_double(m.values.back()) + to_double(val[i]));
      continue;
    }
    m.col_idx.push_back(static_cast<std::int32_t>(col[i]));
    m.values.push_back(val[i]);
    ++m.row_ptr[row[i] + 1];
    last_row = row[i];
    last_col = col[i];
  }
  std::partial_sum(m.row_ptr.begin(), m.row_ptr.end(), m.row_ptr.begin());
  return m;
}

template <class T>
bool operator==(const Csr<T>& a, const Csr<T>& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.values == b.values;
}

#define TESSERA_INSTANTIATE(T)                                                                  \
  template void validate(const Csr<T>&, const std::string&);                                   \
  template Csr<T> csr_from_triplets(std::int64_t, std::int64_t, std::vector<std::int64_t>,     \
                                    std::vector<std::int64_t>, std::vector<T>);                \
  template bool operator==(const Csr<T>&, const Csr<T>&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera
