#pragma once
// PCG with every vector on one GPU: amg/pcg.cpp step for step (same breakdown checks, the
// recurrence residual confirmed by the true residual before stopping, the true residual
// recomputed at the end), with the SpMV and fused residual kernels of tessera_local and the
// deterministic device dot of device_vector.hpp. Each iteration synchronises with the host
// three times (the dots r^T r, p^T A p, r^T z: the scalars steer the control flow).
#include <cuda_runtime_api.h>

#include <functional>

#include "amg/krylov.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::amg::gpu {

/// z = M^-1 r on device vectors.
using DevicePreconditioner = std::function<void(const double* r, double* z)>;

/// Solves A x = b from the initial guess in x; b and x are device vectors of a.rows entries.
/// InputError if A is not square, rtol/limits are invalid, or b or x holds a non-finite value.
SolveResult device_pcg(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan, const double* b,
                       double* x, const DevicePreconditioner& m, const KrylovOptions& options,
                       cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
