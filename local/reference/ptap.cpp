// Galerkin triple product P^T A P as P^T (A P), the order AMG setup uses (hypre, PETSc, AmgX
// form A P first). A P is kept in double, so no intermediate rounding to T occurs; with
// keep_zeros the result has the structural pattern of the two products.
#include "local/core/error.hpp"
#include "local/formats/convert.hpp"
#include "local/formats/instantiate.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::ref {

template <class T>
Csr<double> ptap(const Csr<T>& a, const Csr<T>& p, const SpgemmOptions& options) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "ptap: A must be square, it is ", a.rows, "x", a.cols);
  TESSERA_REQUIRE_INPUT(p.rows == a.rows, "ptap: P has ", p.rows, " rows, A has ", a.rows);
  const Csr<double> ap = spgemm(a, p, options);
  const Csr<double> pt = convert_values<double, T>(transpose(p), "P^T");  // widening: exact
  return spgemm(pt, ap, options);
}

#define TESSERA_INSTANTIATE(T) template Csr<double> ptap(const Csr<T>&, const Csr<T>&, const SpgemmOptions&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera::ref
