#pragma once
// Flexible GMRES with every vector on the device: the cycles of amg/fgmres_iteration.hpp, the
// template the host solver (amg/fgmres.cpp) runs too (right preconditioning with the
// preconditioned vectors kept, Arnoldi by modified Gram-Schmidt, Givens rotations, the true
// residual at each restart, the same breakdown and stagnation tests), on device vectors and
// over a DeviceOperator like device_pcg: one GPU (CsrDeviceOperator) or many ranks (DistDeviceOperator, dist_device_fgmres in dist_device_amg.hpp). The Krylov basis
// (restart + 1 vectors) and the preconditioned vectors (restart) live on the device; the
// Hessenberg matrix and the rotations, a few hundred scalars, on the host, which steers the
// control flow from the dots. Each dot returns to the host (modified Gram-Schmidt takes them
// one after the other); with a distributed operator they are allreduced first, so every rank
// takes the same decisions.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "amg/cuda/device_operator.hpp"
#include "amg/cuda/device_pcg.hpp"
#include "amg/krylov.hpp"
#include "local/cuda/device_buffer.hpp"

namespace tessera::amg::gpu {

/// The solve's device vectors: (restart + 1) x rows of basis, restart x rows of preconditioned
/// vectors, and two staging vectors. (2 restart + 3) x rows doubles: 63 vectors at the default
/// restart of 30. A distributed caller allocates it collectively (one rank out of memory must
/// not leave the others in an allreduce).
struct FgmresWorkspace {
  FgmresWorkspace(std::int64_t rows, int restart, cudaStream_t stream);
  std::int64_t rows;
  int restart;
  tessera::cuda::DeviceBuffer<double> basis, preconditioned, r, z;
};

/// Solves A x = b from the initial guess in x; b and x are device vectors of a.rows() entries.
/// InputError if A is not square, the options are invalid (restart >= 1), or b or x holds a
/// non-finite value (checked on reduced scalars: alike on every rank). `workspace` (sized for
/// a.rows() and options.restart) is allocated here when null.
SolveResult device_fgmres(DeviceOperator& a, const double* b, double* x, const DevicePreconditioner& m,
                          const KrylovOptions& options, FgmresWorkspace* workspace = nullptr);

/// One GPU: the same on a DeviceCsr and its SpMV plan.
SolveResult device_fgmres(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan,
                          const double* b, double* x, const DevicePreconditioner& m, const KrylovOptions& options,
                          cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
