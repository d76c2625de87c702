#pragma once
// The coarsest level's explicit inverse on the device without cuBLAS: forming it from a
// Cholesky factor, measuring ||I - A X||_inf against the sparse operator, and applying it.
//
// Why not cuSOLVER's potrs on the identity, cuBLAS dgemm and dgemv (what the solver used): on
// an H100 the first potrs with n right-hand sides in a process took 44-113 ms at 550-594 rows
// (60-84 ms at 2000), the first dgemv 2.1-14.7 ms, where a kernel of ours took 0.1-0.4 ms on
// first use: library kernels are loaded when first called. The one-GPU setup of poisson3d:192
// takes about 0.1 s, so it had kept the factor and paid potrs's two triangular solves in every
// cycle: 89-95 us at those sizes, against 6.7-9.2 us for dgemv and 7.4-8.4 us for dense_multiply
// (docs/performance.md, seventy-seventh session).
//
// Layout: X is row-major (row i at X + i * n). X is an approximate inverse, checked by
// inverse_residual_row_sums before it is used.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// The largest order inverse_from_cholesky takes: the coarsest levels AMG makes stop at
/// AmgOptions::coarse_size, 2000 by default. Its cost grows as n^3 (2.0 ms at 2048 rows on an
/// H100), on a chain of n / 16 panels in its first blocks; larger orders go through cuSOLVER's
/// solves on the identity (not timed against it there).
constexpr std::int64_t kOwnInverseMaxRows = 2048;

/// X = A^-1 for A = L L^T: `factor` column-major n x n, L in its lower triangle (the upper one
/// is not read: cuSOLVER's potrf leaves A there). A block solves A X_J = E_J for a few columns J
/// of the identity by the two triangular solves, panel by panel (dense_inverse.cu), for rows
/// min(J)..n-1 only (A^-1 is symmetric: the rows above are earlier blocks'), and writes them to
/// those rows and their mirror, so X is exactly symmetric. Needs `scratch` of n * n doubles (L
/// row-major, so both solves read contiguous rows). n <= kOwnInverseMaxRows. Stream-ordered.
void inverse_from_cholesky(std::int64_t n, const double* factor, double* scratch, double* x, cudaStream_t stream);

/// row_sums[i] = sum over j of |(A X)(i, j) - delta(i, j)|, A sparse n x n, X dense row-major:
/// the max of them is ||I - A X||_inf. A block a row of A, threads over X's columns; sums in
/// a fixed order. Stream-ordered.
void inverse_residual_row_sums(const tessera::cuda::DeviceCsr<double>& a, const double* x, double* row_sums,
                               cudaStream_t stream);

/// y = X b, X dense row-major n x n: a warp a row, lanes over the row's columns, a fixed-order
/// shuffle sum (the same y every call). y may not alias b. Stream-ordered (capturable).
void dense_multiply(std::int64_t n, const double* x, const double* b, double* y, cudaStream_t stream);

}  // namespace tessera::amg::gpu
