// SpMM reference: Y = alpha*A*X + beta*Y for a k-column multi-vector in either layout.
// Column j of Y is computed exactly as spmv computes it from column j of X (same summation
// order), so SpMM and SpMV references agree bit for bit.
#include <algorithm>

#include "local/core/error.hpp"
#include "local/core/half.hpp"
#include "local/formats/instantiate.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::ref {
namespace {

void require_shape(const DenseMatrix& m, const char* name) {
  TESSERA_REQUIRE_INPUT(m.rows >= 0 && m.cols >= 0 && static_cast<std::int64_t>(m.data.size()) == m.rows * m.cols,
                        "spmm: ", name, " holds ", m.data.size(), " values for ", m.rows, "x", m.cols);
}

}  // namespace

template <class T>
void spmm(double alpha, const Csr<T>& a, const DenseMatrix& x, double beta, DenseMatrix& y) {
  validate(a, "A");
  require_shape(x, "X");
  require_shape(y, "Y");
  TESSERA_REQUIRE_INPUT(x.rows == a.cols, "spmm: X has ", x.rows, " rows, A has ", a.cols, " columns");
  TESSERA_REQUIRE_INPUT(y.rows == a.rows, "spmm: Y has ", y.rows, " rows, A has ", a.rows, " rows");
  TESSERA_REQUIRE_INPUT(x.cols == y.cols, "spmm: X has ", x.cols, " columns, Y has ", y.cols);
  std::vector<double> sum(static_cast<std::size_t>(x.cols));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    std::fill(sum.begin(), sum.end(), 0.0);
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const double a_ik = to_double(a.values[p]);
      for (std::int64_t j = 0; j < x.cols; ++j) sum[j] += a_ik * x.at(a.col_idx[p], j);
    }
    for (std::int64_t j = 0; j < y.cols; ++j)  // beta == 0 ignores Y's old contents (NaN included)
      y.at(i, j) = beta == 0.0 ? alpha * sum[j] : alpha * sum[j] + beta * y.at(i, j);
  }
}

#define TESSERA_INSTANTIATE(T) template void spmm(double, const Csr<T>&, const DenseMatrix&, double, DenseMatrix&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera::ref
