#pragma once
// Row-wise kernels of the device AMG setup, each the twin of a host loop:
//   inverse diagonal 1/a_ii           <-> hierarchy.cpp's inverse_diagonal (+ check_operator's
//                                         positive, finite diagonal check)
//   l1 inverse diagonal 1/d_l1        <-> smoother.cpp's make_smoother (l1-Jacobi)
//   Gershgorin bound max_i sum|a_ij|/a_ii <-> eigen_estimate.cpp's gershgorin_bound
//   Lanczos start vector              <-> node_hashes.hpp's lanczos_start_entry (shared)
//   Lanczos update, division          <-> eigen_estimate.cpp's HostLanczosSpace
// Everything is ordered on `stream`; the functions that return a scalar synchronise once.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// 1 / a_ii of the square `a` (sorted rows). InputError naming `what` and the first row whose
/// diagonal is missing, non-positive or not finite, or if any value of `a` is not finite.
tessera::cuda::DeviceBuffer<double> device_inverse_diagonal(const tessera::cuda::DeviceCsr<double>& a,
                                                            const char* what, cudaStream_t stream = nullptr);

/// 1 / (a_ii + sum_{j != i} |a_ij|): the l1-Jacobi smoother's diagonal.
tessera::cuda::DeviceBuffer<double> device_l1_inverse_diagonal(const tessera::cuda::DeviceCsr<double>& a,
                                                               cudaStream_t stream = nullptr);

/// max_i inv_diag_i * sum_j |a_ij| (0 for no rows). Synchronises.
double device_gershgorin_bound(const tessera::cuda::DeviceCsr<double>& a, const double* inv_diag,
                               cudaStream_t stream = nullptr);

/// v_i = lanczos_start_entry(i) for i < n, bit for bit the host's.
void device_lanczos_start(std::int64_t n, double* v, cudaStream_t stream = nullptr);

/// w_i -= a v_i + b u_i, rounded step by step as the host's Lanczos space (no FMA).
void device_lanczos_subtract(std::int64_t n, double a, const double* v, double b, const double* u, double* w,
                             cudaStream_t stream = nullptr);

/// y_i = x_i / s (a true division, as the host's; x and y may alias).
void device_divide(std::int64_t n, const double* x, double s, double* y, cudaStream_t stream = nullptr);

/// y_i = sqrt(x_i).
void device_sqrt(std::int64_t n, const double* x, double* y, cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
