#pragma once
// y = alpha*A*x + beta*y on one GPU, A in CSR (with a SpmvPlan made once per matrix) or in
// bitmap tiles. T is double or float; x has A.cols entries, y A.rows. beta == 0 never reads
// y (NaN in y is ignored, as in BLAS). Every path is bitwise repeatable run to run: the
// nnz_split path sums the pieces of a row split over chunks in a fixed order (a fix-up pass).
#include <cuda_runtime_api.h>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::cuda {

template <class T>
void spmv(const SpmvPlan& plan, T alpha, const DeviceCsr<T>& a, const T* x, T beta, T* y, cudaStream_t stream = nullptr);

/// Tile-format SpMV: one warp per tile-row, four tiles at a time, one lane per tile row.
template <class T>
void spmv_tiles(T alpha, const DeviceTileMatrix<T>& a, const T* x, T beta, T* y, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
