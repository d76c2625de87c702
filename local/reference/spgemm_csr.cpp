// Gustavson's row-by-row SpGEMM: the CSR oracle for every SpGEMM in Tessera.
// Row i of C is the sum over a_ik of a_ik * (row k of B), gathered in a dense accumulator of
// b.cols doubles with a marker array recording which row last touched each column, so each
// row costs O(its products + its output log its output) and the arrays are reset for free.
#include <algorithm>

#include "local/core/error.hpp"
#include "local/core/half.hpp"
#include "local/formats/instantiate.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::ref {
namespace {

template <class T>
void require_conformable(const Csr<T>& a, const Csr<T>& b, const char* op) {
  validate(a, "A");
  validate(b, "B");
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, op, ": inner dimensions differ (A is ", a.rows, "x", a.cols, ", B is ",
                        b.rows, "x", b.cols, ")");
}

/// Dense accumulator for one output row at a time.
struct RowAccumulator {
  std::vector<double> value;              // value[j]: partial sum of C(i, j)
  std::vector<std::int64_t> last_row;     // last_row[j] == i iff column j is already in row i
  std::vector<std::int32_t> columns;      // columns of row i, in discovery order

  explicit RowAccumulator(std::int64_t cols)
      : value(static_cast<std::size_t>(cols), 0.0), last_row(static_cast<std::size_t>(cols), -1) {}

  void add(std::int64_t row, std::int32_t col, double product) {
    if (last_row[col] != row) {
      last_row[col] = row;
      value[col] = 0.0;
      columns.push_back(col);
    }
    value[col] += product;
  }
};

}  // namespace

template <class T>
Csr<double> spgemm(const Csr<T>& a, const Csr<T>& b, const SpgemmOptions& options) {
  require_conformable(a, b, "spgemm");
  Csr<double> c = Csr<double>::empty(a.rows, b.cols);
  RowAccumulator acc(b.cols);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    acc.columns.clear();
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const double a_ik = to_double(a.values[p]);
      const std::int64_t k = a.col_idx[p];
      for (std::int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q)
        acc.add(i, b.col_idx[q], a_ik * to_double(b.values[q]));
    }
    std::sort(acc.columns.begin(), acc.columns.end());
    for (const std::int32_t j : acc.columns) {
      if (!options.keep_zeros && acc.value[j] == 0.0) continue;
      c.col_idx.push_back(j);
      c.values.push_back(acc.value[j]);
    }
    c.row_ptr[i + 1] = c.nnz();
  }
  return c;
}

template <class T>
std::int64_t spgemm_flops(const Csr<T>& a, const Csr<T>& b) {
  require_conformable(a, b, "spgemm_flops");
  std::int64_t flops = 0;
  for (const std::int32_t k : a.col_idx) flops += b.row_length(k);
  return flops;
}

#define TESSERA_INSTANTIATE(T)                                                            \
  template Csr<double> spgemm(const Csr<T>&, const Csr<T>&, const SpgemmOptions&);        \
  template std::int64_t spgemm_flops(const Csr<T>&, const Csr<T>&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera::ref
