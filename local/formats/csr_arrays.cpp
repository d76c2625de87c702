#include "local/formats/csr_arrays.hpp"

#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera {

template <class Offset, class Index>
void validate(const CsrArrays<Offset, Index>& m, const std::string& what) {
  TESSERA_REQUIRE_INPUT(m.row_ptr, what, ": no row offsets");
  TESSERA_REQUIRE_INPUT(m.rows >= 0, what, ": negative dimensions ", m.rows, "x", m.cols);
  const std::int64_t nnz = m.nnz();
  TESSERA_REQUIRE_INPUT(nnz <= 0 || (m.col_idx && m.values), what, ": ", nnz, " entries without ",
                        m.col_idx ? "values" : "column indices");
  detail::validate_pattern(m.rows, m.cols, m.row_ptr, m.col_idx, what);
}

template <class Offset, class Index>
Csr<double> to_csr(const CsrArrays<Offset, Index>& m, const std::string& what) {
  validate(m, what);
  Csr<double> c;
  c.rows = m.rows;
  c.cols = m.cols;
  const std::int64_t nnz = m.nnz();
  c.row_ptr.resize(static_cast<std::size_t>(m.rows) + 1);
  c.col_idx.resize(static_cast<std::size_t>(nnz));
  c.values.resize(static_cast<std::size_t>(nnz));
  host::for_ranges(m.rows + 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) c.row_ptr[i] = static_cast<std::int64_t>(m.row_ptr[i]);
  });
  host::for_ranges(nnz, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) {
      c.col_idx[k] = static_cast<std::int32_t>(m.col_idx[k]);  // in [0, cols), cols <= INT32_MAX: validated
      c.values[k] = m.values[k];
    }
  });
  return c;
}

#define TESSERA_INSTANTIATE(Offset, Index)                                          \
  template void validate(const CsrArrays<Offset, Index>&, const std::string&);      \
  template Csr<double> to_csr(const CsrArrays<Offset, Index>&, const std::string&);
TESSERA_INSTANTIATE(std::int32_t, std::int32_t)
TESSERA_INSTANTIATE(std::int64_t, std::int64_t)
TESSERA_INSTANTIATE(std::int64_t, std::int32_t)
#undef TESSERA_INSTANTIATE

}  // namespace tessera
