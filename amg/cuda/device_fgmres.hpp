#pragma once
// Flexible GMRES with every vector on the device: the cycles of amg/fgmres_iteration.hpp, the
// template the host solver (amg/fgmres.cpp) runs too (right preconditioning with the
// preconditioned vectors kept, Arnoldi by classical Gram-Schmidt twice, Givens rotations, the
// true residual at each restart, the same breakdown and stagnation tests), on device vectors
// and over a DeviceOperator like device_pcg: one GPU (CsrDeviceOperator) or many ranks
// (DistDeviceOperator, dist_device_fgmres in dist_device_amg.hpp). The Krylov basis (restart + 1
// vectors) and the preconditioned vectors (restart) live on the device; the Hessenberg matrix
// and the rotations, a few hundred scalars, on the host, which steers the control flow.
// An Arnoldi step by classical Gram-Schmidt twice (the default) synchronises once: both passes
// are queued whole (their coefficients reduced, allreduced across ranks, and applied on the
// device), and the host waits only for ||w||, when the coefficients come back with it.
// Modified Gram-Schmidt (on request) waits for each of its k + 1 dots. Every decision is taken
// on allreduced values, so every rank takes the same ones.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "amg/cuda/device_operator.hpp"
#include "amg/cuda/device_pcg.hpp"
#include "amg/krylov.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/pinned_host_buffer.hpp"

namespace tessera::amg::gpu {

/// The solve's device vectors: (restart + 1) x rows of basis, restart x rows of preconditioned
/// vectors, and two staging vectors. (2 restart + 3) x rows doubles: 63 vectors at the default
/// restart of 30. Beside them, the Gram-Schmidt coefficients of both passes and the update's
/// (3 restart + 2 doubles, on the device and in page-locked host memory). A distributed caller
/// allocates it collectively (one rank out of memory must not leave the others in an allreduce).
struct FgmresWorkspace {
  FgmresWorkspace(std::int64_t rows, int restart, cudaStream_t stream);
  std::int64_t rows;
  int restart;
  tessera::cuda::DeviceBuffer<double> basis, preconditioned, r, z;
  tessera::cuda::DeviceBuffer<double> coefficients;
  tessera::cuda::PinnedHostBuffer<double> host_coefficients;
  /// Where coefficients and host_coefficients keep a Gram-Schmidt pass's (0 or 1; restart + 1
  /// each) and the update's y (restart).
  std::int64_t projection_at(int pass) const { return std::int64_t(pass) * (restart + 1); }
  std::int64_t update_at() const { return 2 * std::int64_t(restart + 1); }
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
