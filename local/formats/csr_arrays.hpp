#pragma once
// CsrArrays: a CSR matrix in host arrays that someone else owns, in that owner's index widths:
// a PETSc seqaij matrix's own arrays (PetscInt offsets and columns), or a Csr's (int64 offsets,
// int32 columns). Reading a matrix where it lies instead of copying it into a Csr first saves
// the copy's fresh pages: on one H200 those copies were half of PCTESSERA's one-GPU setup of
// PETSc's 2.1M-row ex45 operator (docs/performance.md, thirty-ninth session).
// cuda::upload(CsrArrays) (local/cuda/csr_arrays_upload.hpp) sends such arrays to the device as
// they are; to_csr below is its host reference.
#include <cstdint>
#include <string>

#include "local/formats/csr.hpp"

namespace tessera {

template <class Offset, class Index>
struct CsrArrays {
  std::int64_t rows = 0, cols = 0;
  const Offset* row_ptr = nullptr;  // rows + 1 entries
  const Index* col_idx = nullptr;   // row_ptr[rows] entries
  const double* values = nullptr;   // as many; may be null where there are none

  std::int64_t nnz() const { return static_cast<std::int64_t>(row_ptr[rows]); }
};

/// A view of `m`'s arrays, valid while `m` lives unchanged.
inline CsrArrays<std::int64_t, std::int32_t> arrays_of(const Csr<double>& m) {
  return {m.rows, m.cols, m.row_ptr.data(), m.col_idx.data(), m.values.data()};
}

/// Throws InputError (naming `what` and the first violation) unless the arrays hold a matrix
/// with Csr's invariant: row_ptr[0] == 0, offsets that never decrease, columns strictly
/// increasing within each row and inside [0, cols), cols within the int32 column index, and
/// values wherever there are entries. validate(Csr)'s checks and messages (both run
/// detail::validate_pattern), on the rank's threads, reading the arrays in place. Cost
/// O(rows + nnz).
template <class Offset, class Index>
void validate(const CsrArrays<Offset, Index>& m, const std::string& what = "matrix");

/// A validated Csr copy of the arrays (columns narrowed to int32). The host reference of
/// cuda::upload(CsrArrays); InputError as validate.
template <class Offset, class Index>
Csr<double> to_csr(const CsrArrays<Offset, Index>& m, const std::string& what = "matrix");

}  // namespace tessera
