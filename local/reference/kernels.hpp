#pragma once
// Host reference kernels: simple, obviously right, and the oracle every GPU kernel is tested
// against. All arithmetic is in double whatever the stored value type, so one reference
// serves fp64, fp32 and fp16 device results (compared with a precision-dependent bound).
#include <vector>

#include "local/formats/csr.hpp"
#include "local/formats/dense.hpp"
#include "local/formats/tile_matrix.hpp"

namespace tessera::ref {

struct SpgemmOptions {
  /// false: entries whose computed value is exactly 0 (cancellation) are removed from C.
  /// true (default): C has the structural pattern of A*B, the one the symbolic phase allocates.
  bool keep_zeros = true;
};

/// C = A*B by Gustavson's row-by-row algorithm (dense accumulator per row).
template <class T>
Csr<double> spgemm(const Csr<T>& a, const Csr<T>& b, const SpgemmOptions& options = {});

/// C = A*B on tiles: pairs each tile A(I,K) with the tiles B(K,J), takes the output pattern
/// from the bitmap boolean products (tile::bool_product), then accumulates the 8x8 products.
/// Same pattern as spgemm(); values equal to rounding (summation order differs).
template <class T>
TileMatrix<double> spgemm_tiles(const TileMatrix<T>& a, const TileMatrix<T>& b,
                                const SpgemmOptions& options = {});

/// y = alpha*A*x + beta*y. y must have A.rows entries; beta == 0 ignores y's old contents
/// (NaN included), as BLAS does.
template <class T>
void spmv(double alpha, const Csr<T>& a, const std::vector<double>& x, double beta, std::vector<double>& y);

/// Y = alpha*A*X + beta*Y, X is A.cols x k, Y is A.rows x k, any layouts.
template <class T>
void spmm(double alpha, const Csr<T>& a, const DenseMatrix& x, double beta, DenseMatrix& y);

/// A^T (exact: values are moved, not recomputed).
template <class T>
Csr<T> transpose(const Csr<T>& a);

/// Galerkin product P^T * A * P, as P^T (A P).
template <class T>
Csr<double> ptap(const Csr<T>& a, const Csr<T>& p, const SpgemmOptions& options = {});

/// Number of scalar multiply-adds in A*B (sum over a_ik of |row k of B|): the "intermediate
/// products" that GFLOP/s figures count twice.
template <class T>
std::int64_t spgemm_flops(const Csr<T>& a, const Csr<T>& b);

}  // namespace tessera::ref
