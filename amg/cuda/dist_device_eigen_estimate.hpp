#pragma once
// lambda_max(D^-1 A) of a row-partitioned operator on every rank's GPU: the device twin of
// amg/dist/dist_eigen_estimate.hpp, the DistEigenEstimator of the GPU backend.
//   - the level's A on the device (dist::gpu::DeviceDistMatrix: the copy the strength phase
//     left in the level's slot, else one made here and left there for the solve) is applied
//     through DistDeviceOperator, the solve's own product and halo route;
//   - lanczos.hpp's recurrence runs with its scalars on the device (device_lanczos_ritz): each
//     dot is a deterministic local sum reduced over ranks by NCCL in place, so the steps are
//     queued without a synchronisation until the one download at the end;
//   - the start vector is the host's (a hash of the GLOBAL row), and the Gershgorin bound is the
//     host's bit for bit (device_dist_gershgorin_bound sums each row in dist_gershgorin_bound's
//     order, on the device copy), so the estimate equals the host one to rounding: the dots and
//     the device SpMV sum in other orders than the host.
// Why: at 7.1M rows the host Lanczos took 2.3-2.5 s of a 10 s setup (docs/performance.md).
#include "amg/dist/dist_eigen_estimate.hpp"
#include "dist/cuda/device_context.hpp"

namespace tessera::amg::gpu {

/// Collective over ctx.comm(). `inv_diag` holds 1 / a_ii of the owned rows (host), uploaded
/// unless `device_a`, the level's slot (amg/cuda/device_operator_slot.hpp: made on ctx.compute()
/// if empty, refreshed if stale), holds the GPU's (current_inverse_diagonal).
EigenEstimate dist_device_estimate_lambda_max(dist::gpu::DeviceContext& ctx, const dist::DistMatrix& a,
                                              const Vector& inv_diag, int steps, double safety,
                                              DeviceOperatorSlot& device_a);

/// dist_device_estimate_lambda_max on `ctx`, which must outlive the estimator (and the DistAmg
/// holding it: a re-setup estimates again). Called with ctx.comm() only.
DistEigenEstimator device_eigen_estimator(dist::gpu::DeviceContext& ctx);

}  // namespace tessera::amg::gpu
