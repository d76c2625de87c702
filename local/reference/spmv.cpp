// SpMV reference: y = alpha*A*x + beta*y, one row at a time, summing in stored order.
#include "local/core/error.hpp"
#include "local/core/half.hpp"
#include "local/formats/instantiate.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::ref {

template <class T>
void spmv(double alpha, const Csr<T>& a, const std::vector<double>& x, double beta, std::vector<double>& y) {
  validate(a, "A");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(x.size()) == a.cols, "spmv: x has ", x.size(),
                        " entries, A has ", a.cols, " columns");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(y.size()) == a.rows, "spmv: y has ", y.size(),
                        " entries, A has ", a.rows, " rows");
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double sum = 0.0;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) sum += to_double(a.values[p]) * x[a.col_idx[p]];
    // beta == 0 must not read y: BLAS semantics, so an uninitialised (NaN) y is overwritten.
    y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i];
  }
}

#define TESSERA_INSTANTIATE(T) \
  template void spmv(double, const Csr<T>&, const std::vector<double>&, double, std::vector<double>&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera::ref
