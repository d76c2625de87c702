#pragma once
// lambda_max(D^-1 A) on a distributed operator: the serial Lanczos of amg/eigen_estimate.hpp
// (same start vector, a hash of the GLOBAL row, so the estimate equals the serial one to
// rounding on any partition) with dist::spmv products and allreduced dot products; the
// tridiagonal eigenvalue is computed redundantly on every rank (identical inputs, identical
// result), and the Gershgorin bound is an allreduce max.
#include <functional>

#include "amg/dist/device_operator_slot.hpp"
#include "amg/eigen_estimate.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"

namespace tessera::amg {

/// Collective. `inv_diag` holds 1 / a_ii of the owned rows.
EigenEstimate dist_estimate_lambda_max(const dist::Communicator& comm, const dist::DistMatrix& a,
                                       const Vector& inv_diag, int steps, double safety);

/// Collective. max_i sum_j |a_ij| / a_ii over every rank's rows (0 when no rank owns one).
double dist_gershgorin_bound(const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& inv_diag);

/// How the distributed setup estimates lambda_max on each level: host_eigen_estimator, or
/// amg::gpu::device_eigen_estimator on the ranks' GPUs, which reads A from the level's
/// `device_a` (made there if it is empty, refreshed if it is stale).
using DistEigenEstimator =
    std::function<EigenEstimate(const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& inv_diag,
                                int steps, double safety, DeviceOperatorSlot& device_a)>;

/// dist_estimate_lambda_max as a DistEigenEstimator (`device_a` is left as it is).
EigenEstimate host_eigen_estimator(const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& inv_diag,
                                   int steps, double safety, DeviceOperatorSlot& device_a);

}  // namespace tessera::amg
