#pragma once
// PCG with every vector on the device: amg/pcg.cpp step for step (same breakdown checks, the
// recurrence residual confirmed by the true residual before stopping, the true residual
// recomputed at the end), written once over a DeviceOperator: one GPU (CsrDeviceOperator,
// the SpMV/fused residual kernels of tessera_local and the deterministic DeviceDot) or many
// ranks (DistDeviceOperator, see dist_device_amg.hpp). The dots (p^T A p, r^T r, r^T z) stay
// on the device, where the vector updates read them (device_pcg_steps.hpp), and reach the host
// together once an iteration, where they steer the control flow; with a distributed operator
// they are allreduced first, so every rank takes the same decisions.
#include <cuda_runtime_api.h>

#include <functional>

#include "amg/cuda/device_operator.hpp"
#include "amg/krylov.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::amg::gpu {

/// z = M^-1 r on device vectors.
using DevicePreconditioner = std::function<void(const double* r, double* z)>;

/// Solves A x = b from the initial guess in x; b and x are device vectors of a.rows() entries.
/// InputError if A is not square, rtol/limits are invalid, or b or x holds a non-finite value
/// (checked on reduced scalars: with a distributed operator, on every rank alike).
SolveResult device_pcg(DeviceOperator& a, const double* b, double* x, const DevicePreconditioner& m,
                       const KrylovOptions& options);

/// One GPU: the same on a DeviceCsr and its SpMV plan.
SolveResult device_pcg(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan, const double* b,
                       double* x, const DevicePreconditioner& m, const KrylovOptions& options,
                       cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
