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

#include <cstdint>
#include <functional>

#include "amg/cuda/device_operator.hpp"
#include "amg/eigen_estimate.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// `inv_diag` (device, a.rows entries) holds 1 / a_ii; `a_op` applies `a` on its stream. One
/// synchronisation in all. All `steps` steps are queued; after an early stop (an invariant
/// subspace, in practice only on matrices with fewer rows than steps) the rest do no updates.
EigenEstimate device_estimate_lambda_max(const tessera::cuda::DeviceCsr<double>& a, CsrDeviceOperator& a_op,
                                         const double* inv_diag, int steps, double safety);

/// x^T y over the operator's rows (every rank's, for a distributed operator: collective), left
/// in device memory and ordered on the operator's stream; valid until the next call.
using DeviceSum = std::function<const double*(std::int64_t n, const double* x, const double* y)>;

/// The device memory of one estimate: four vectors of `rows` entries and the block of scalars
/// the host reads back (alpha, beta, the steps taken, a bound), zeroed. Made before the
/// recurrence, so that a distributed caller can agree across ranks that every allocation
/// succeeded before the first collective.
struct LanczosWorkspace {
  LanczosWorkspace(std::int64_t rows, int steps, cudaStream_t stream);
  int steps;
  tessera::cuda::DeviceBuffer<double> v, v_prev, w, scaled, scalars;
};

/// The recurrence alone, on any DeviceOperator (one GPU, or one rank's part of a distributed
/// one, where every rank calls it, ranks owning no rows included): est.ritz and est.steps of
/// D^-1/2 A D^-1/2 from lanczos_start_entry(first_row + i) on the owned rows, with
/// `sqrt_inv_diag` (device, a_op.rows() entries) = a_ii^-1/2 and `work` made for a_op.rows()
/// rows. One synchronisation.
EigenEstimate device_lanczos_ritz(DeviceOperator& a_op, std::int64_t first_row, const double* sqrt_inv_diag,
                                  LanczosWorkspace& work, const DeviceSum& sum);

}  // namespace tessera::amg::gpu
