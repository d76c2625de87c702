// Gustavson's row-by-row SpGEMM: the CSR oracle for every SpGEMM in Tessera.
// Row i of C is the sum over a_ik of a_ik * (row k of B), gathered in a dense accumulator
// (gustavson_row.hpp).

#include "local/formats/instantiate.hpp"
#include "local/reference/gustavson_row.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::ref {

template <class T>
Csr<double> spgemm(const Csr<T>& a, const Csr<T>& b, const SpgemmOptions& options) {
  detail::require_conformable(a, b, "spgemm");
  Csr<double> c = Csr<double>::empty(a.rows, b.cols);
  detail::GustavsonAccumulator acc(b.cols);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    acc.append_row(a, b, i, options.keep_zeros, c);
    c.row_ptr[i + 1] = c.nnz();
  }
  return c;
}

template <class T>
std::int64_t spgemm_flops(const Csr<T>& a, const Csr<T>& b) {
  detail::require_conformable(a, b, "spgemm_flops");
  std::int64_t flops = 0;
  for (const std::int32_t k : a.col_idx) flops += b.row_length(k);
  return flops;
}

#define TESSERA_INSTANTIATE(T)                                                            \
  template Csr<double> spgemm(const Csr<T>&, const Csr<T>&, const SpgemmOptions&);        \
  template std::int64_t spgemm_flops(const Csr<T>&, const Csr<T>&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE)

}  // namespace tessera::ref
