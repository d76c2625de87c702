#pragma once
// lambda_max(D^-1 A) on the device: amg/eigen_estimate.cpp's estimate step for step -- the
// same start vector (lanczos_start_entry), the same Lanczos recurrence on D^-1/2 A D^-1/2 with
// the same stopping rule, the tridiagonal Ritz value by the host's bisection on the alpha/beta
// scalars, min(safety * ritz, Gershgorin) -- with the vectors, the products (DeviceOperator)
// and the Gershgorin bound on the device. Only the summation order inside dots and rows
// differs from the host, so the estimates agree to rounding.
#include <cuda_runtime_api.h>

#include "amg/cuda/device_operator.hpp"
#include "amg/eigen_estimate.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// `inv_diag` (device, a.rows entries) holds 1 / a_ii. One synchronisation per Lanczos step
/// (its dots) plus one for the Gershgorin bound.
EigenEstimate device_estimate_lambda_max(const tessera::cuda::DeviceCsr<double>& a, DeviceOperator& a_op,
                                         const double* inv_diag, int steps, double safety);

}  // namespace tessera::amg::gpu
