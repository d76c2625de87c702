// Host code only: fgmres_iteration.hpp's cycles over device vectors and a DeviceOperator.
#include "amg/cuda/device_fgmres.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "amg/cuda/device_krylov_common.hpp"
#include "amg/fgmres_iteration.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::axpby;
using tessera::cuda::combine;
using tessera::cuda::copy;
using tessera::cuda::zero;

/// The restart is checked before anything is sized by it (the same on every rank).
int checked_restart(int restart) {
  TESSERA_REQUIRE_INPUT(restart >= 1, "device FGMRES: need restart >= 1, got ", restart);
  return restart;
}

/// fgmres_iteration.hpp's space on device vectors (pointers into the workspace): each step is
/// one of the existing kernels, ordered on the operator's stream.
struct DeviceFgmresSpace {
  DeviceOperator& a;
  const double* b;
  double* x;
  const DevicePreconditioner& m;
  FgmresWorkspace& w;
  std::int64_t n = a.rows();
  cudaStream_t stream = a.stream();

  double* basis(int i) const { return w.basis.data() + std::int64_t(i) * n; }
  double* preconditioned(int i) const { return w.preconditioned.data() + std::int64_t(i) * n; }
  double* residual_vector() const { return w.r.data(); }
  void residual(double* r) const { a.residual(x, b, r); }
  double dot(const double* p, const double* q) const { return a.dot(n, p, q); }
  void divide(const double* p, double s, double* q) const { axpby(n, 1.0 / s, p, 0.0, q, stream); }
  void precondition(const double* v, double* z) const {
    // The preconditioner always sees the same two vectors (w.r in, w.z out), so one that
    // replays a CUDA graph captured on its vectors (DistDeviceAmgPreconditioner) replays it
    // here too; two device copies an iteration instead of a cycle launched kernel by kernel.
    // w.r is free here: the residual is read only at a cycle's start and written at its end.
    copy(n, v, w.r.data(), stream);
    m(w.r.data(), w.z.data());
    copy(n, w.z.data(), z, stream);
  }
  void apply(const double* z, double* v) const { a.apply(1.0, z, 0.0, v); }
  void subtract(double* v, double h, const double* u) const { axpby(n, -h, u, 1.0, v, stream); }
  /// c = V^T v (one pass, allreduced on the device), its copy to the host queued, v -= V c: the
  /// host waits for none of it (projection() reads the copy after the next dot has returned).
  void project(int count, double* v, int pass) const {
    double* c = w.coefficients.data() + w.projection_at(pass);
    a.dots_into(n, basis(0), n, count, v, c);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(w.host_coefficients.data() + w.projection_at(pass), c,
                                       std::size_t(count) * sizeof(double), cudaMemcpyDeviceToHost, stream));
    combine(n, -1.0, basis(0), n, count, c, v, stream);
  }
  const double* projection(int pass) const {
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // done already after a dot: a formality
    return w.host_coefficients.data() + w.projection_at(pass);
  }
  void update_x(const std::vector<double>& y, int k) const {  // x += Z y, each x_j in the order of i
    double* host_y = w.host_coefficients.data() + w.update_at();
    std::copy(y.begin(), y.begin() + k, host_y);
    double* device_y = w.coefficients.data() + w.update_at();
    TESSERA_CUDA_CHECK(
        cudaMemcpyAsync(device_y, host_y, std::size_t(k) * sizeof(double), cudaMemcpyHostToDevice, stream));
    combine(n, 1.0, preconditioned(0), n, k, device_y, x, stream);
  }
};

/// device_fgmres on b in range (detail::solve_device_in_range), ||b|| = b_norm.
SolveResult fgmres_in_range(DeviceOperator& a, const double* b, double* x, double b_norm, const DevicePreconditioner& m,
                            const KrylovOptions& o, FgmresWorkspace* workspace) {
  const std::int64_t n = a.rows();
  const cudaStream_t stream = a.stream();
  std::optional<FgmresWorkspace> own;
  if (!workspace) workspace = &own.emplace(n, o.restart, stream);
  TESSERA_REQUIRE_INPUT(workspace->rows == n && workspace->restart == o.restart, "device FGMRES: a workspace for ",
                        workspace->rows, " rows and restart ", workspace->restart, ", the solve has ", n, " and ",
                        o.restart);
  SolveResult result;
  if (b_norm == 0) zero(n, x, stream);
  DeviceFgmresSpace space{a, b, x, m, *workspace};
  fgmres_iterations(space, b_norm, o, result);
  detail::finish_device_solve(a, b, x, b_norm, workspace->r.data(), result);
  return result;
}

}  // namespace

FgmresWorkspace::FgmresWorkspace(std::int64_t rows, int restart, cudaStream_t stream)
    : rows(rows),
      restart(checked_restart(restart)),
      basis(std::size_t(rows) * std::size_t(restart + 1), stream),
      preconditioned(std::size_t(rows) * std::size_t(restart), stream),
      r(std::size_t(rows), stream),
      z(std::size_t(rows), stream),
      coefficients(std::size_t(3 * restart + 2), stream),
      host_coefficients(std::size_t(3 * restart + 2)) {}

SolveResult device_fgmres(DeviceOperator& a, const double* b, double* x, const DevicePreconditioner& m,
                          const KrylovOptions& o, FgmresWorkspace* workspace) {
  return detail::solve_device_in_range("device FGMRES", a, b, x, o, true,
                                       [&](const double* in_b, double* in_x, double b_norm) {
                                         return fgmres_in_range(a, in_b, in_x, b_norm, m, o, workspace);
                                       });
}

SolveResult device_fgmres(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan,
                          const double* b, double* x, const DevicePreconditioner& m, const KrylovOptions& options,
                          cudaStream_t stream) {
  CsrDeviceOperator op(a, plan, stream);
  return device_fgmres(op, b, x, m, options);
}

}  // namespace tessera::amg::gpu
