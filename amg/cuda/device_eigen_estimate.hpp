#pragma once
// lambda_max(D^-1 A) on one GPU: amg/eigen_estimate.cpp's estimate with the vectors, the
// products and the Gershgorin bound on the device -- the same start vector (node_hashes.hpp),
// lanczos.hpp's recurrence and stopping rule, the host's bisection on the alpha/beta scalars,
// then min(safety * ritz, Gershgorin). Per entry the device rounds as the host does; only the
// summation order inside dots and row sums differs, so the estimates agree to rounding.
// The recurrence's scalars stay in device memory (device_row_kernels.hpp's LanczosScalars):
// the steps are queued without waiting for their dots, and everything comes back in one
// download at the end -- the same values, bit for bit, as running lanczos.hpp's loop on the
// host with each dot downloaded (the same kernels, the same IEEE sqrt and division).
#include <cuda_runtime_api.h>

#include "amg/cuda/device_operator.hpp"
#include "amg/eigen_estimate.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// `inv_diag` (device, a.rows entries) holds 1 / a_ii; `a_op` applies `a` on its stream. One
/// synchronisation in all. All `steps` steps are queued; after an early stop (an invariant
/// subspace, in practice only on matrices with fewer rows than steps) the rest do no updates.
EigenEstimate device_estimate_lambda_max(const tessera::cuda::DeviceCsr<double>& a, CsrDeviceOperator& a_op,
                                         const double* inv_diag, int steps, double safety);

}  // namespace tessera::amg::gpu
