#pragma once
// y = alpha*A*x + beta*y on one GPU, A in CSR (with a SpmvPlan made once per matrix) or in
// bitmap tiles. T is double or float; x has A.cols entries, y A.rows. beta == 0 never reads
// y (NaN in y is ignored, as in BLAS). The nnz_split path adds row sums with atomics, so its
// summation order (not its accuracy bound) varies from run to run.
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
