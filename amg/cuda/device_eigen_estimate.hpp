#pragma once
// lambda_max(D^-1 A) on the device: amg/eigen_estimate.cpp's estimate with the vectors, the
// products (DeviceOperator) and the Gershgorin bound on the device -- the same start vector
// (node_hashes.hpp), the same Lanczos recurrence and stopping rule (lanczos.hpp, one definition
// for host, distributed and device), the host's bisection on the alpha/beta scalars, then
// min(safety * ritz, Gershgorin). Per entry the device rounds as the host does; only the
// summation order inside dots and row sums differs, so the estimates agree to rounding.
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
