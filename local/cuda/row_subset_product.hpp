#pragma once
// Products that touch only the rows of a CSR matrix holding entries: y[i] += alpha (A x)[i]
// for those rows, every other row of y left unread and unwritten.
//
// Why: a distributed matrix's non-local block (its ghost columns) has entries in the rank's
// boundary rows only -- on a 3D grid split in slabs, 2 planes of 7M rows. A plain SpMV with
// beta = 1 over that block reads its whole row_ptr and reads and writes all of y to add zero
// to nearly every row: 56 us a product at 7M rows on an H200 (the local block itself takes
// 200 us), paid on every product of the halo-exchange overlap.
//
// The kernels read the full matrix's row_ptr, col_idx and values (no second copy, so a
// numeric refresh of A's values is seen at once), through the list of its non-empty rows.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_matrix.hpp"
#include "local/formats/csr.hpp"

namespace tessera::cuda {

/// The rows of a matrix that hold entries, and the lanes a product gives each of them.
struct RowSubset {
  DeviceBuffer<std::int64_t> rows;  // ascending
  std::int64_t count = 0;
  int lanes = 1;  // per row for SpMV: a power of two (<= 32) near the mean entries of a listed row
  std::int64_t matrix_rows = 0, matrix_nnz = 0;  // the shape it was listed from (checked at use)
  std::int64_t bytes() const { return std::int64_t(rows.bytes()); }
};

/// Lists `a`'s non-empty rows: a host pass over row_ptr (the reference; the matrix is uploaded
/// from it).
RowSubset make_row_subset(const Csr<double>& a, cudaStream_t stream = nullptr);
/// The same from the device copy: one selection on the GPU and a read of its count (waits for
/// `stream`), instead of a serial host pass (13 ms over P's 7.1M rows at poisson3d:192).
RowSubset make_row_subset(const DeviceCsr<double>& a, cudaStream_t stream = nullptr);

/// y[i] += alpha * (A x)[i] for the rows of `subset`; x has a.cols entries, y a.rows. The
/// listed rows equal a full SpMV with beta = 1 (Inf/NaN in x propagate alike); the other rows
/// are left as they are, bit for bit (a full pass with a finite alpha would only turn -0.0 into
/// +0.0 there). InputError when `a` is not the matrix (rows, nnz) the subset was listed from.
void spmv_add_on_rows(const RowSubset& subset, double alpha, const DeviceCsr<double>& a, const double* x, double* y,
                      cudaStream_t stream = nullptr);

/// Y[i, :] += alpha * (A X)[i, :] for the rows of `subset`; X (a.cols x k) and Y (a.rows x k)
/// row-major.
void spmm_add_on_rows(const RowSubset& subset, double alpha, const DeviceCsr<double>& a, const double* x,
                      std::int64_t k, double* y, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
