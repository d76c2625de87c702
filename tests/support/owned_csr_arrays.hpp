#pragma once
// A Csr's pattern and values copied into arrays of other index widths, held together with the
// CsrArrays view of them: the inputs of the CsrArrays tests (a PETSc matrix's arrays stand-in).
// The copy is editable, so that a test can break one offset or column on purpose.
#include <vector>

#include "local/formats/csr_arrays.hpp"

namespace tessera::testing {

template <class Offset, class Index>
struct OwnedCsrArrays {
  std::int64_t rows = 0, cols = 0;
  std::vector<Offset> row_ptr;
  std::vector<Index> col_idx;
  std::vector<double> values;

  explicit OwnedCsrArrays(const Csr<double>& m)
      : rows(m.rows),
        cols(m.cols),
        row_ptr(m.row_ptr.begin(), m.row_ptr.end()),
        col_idx(m.col_idx.begin(), m.col_idx.end()),
        values(m.values.begin(), m.values.end()) {}

  CsrArrays<Offset, Index> view() const { return {rows, cols, row_ptr.data(), col_idx.data(), values.data()}; }
};

}  // namespace tessera::testing
