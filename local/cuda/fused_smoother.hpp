#pragma once
// The AMG smoother's SpMV-shaped steps, each one pass over A (vector CSR kernel, the plan's
// threads per row; the nnz_split choice is ignored: AMG levels have balanced rows):
//   residual      r = b - A*x
//   jacobi_sweep  x_new = x + omega * D^-1 * (b - A*x)
// Jacobi reads x_old at every column, so x_new must not alias x (checked: InputError).
#include <cuda_runtime_api.h>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::cuda {

/// 1/a_ii for every row (A square). A missing or zero diagonal entry is an InputError naming
/// how many rows have one.
template <class T>
DeviceBuffer<T> diagonal_inverse(const DeviceCsr<T>& a, cudaStream_t stream = nullptr);

template <class T>
void residual(const SpmvPlan& plan, const DeviceCsr<T>& a, const T* x, const T* b, T* r, cudaStream_t stream = nullptr);

template <class T>
void jacobi_sweep(const SpmvPlan& plan, const DeviceCsr<T>& a, const T* diagonal_inverse, T omega, const T* x,
                  const T* b, T* x_new, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
