// Host code only: the control flow of amg/fgmres.cpp over device vectors and a DeviceOperator.
#include "amg/cuda/device_fgmres.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "amg/cuda/device_krylov_common.hpp"
#include "amg/gmres_least_squares.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::axpby;
using tessera::cuda::copy;
using tessera::cuda::zero;

/// The restart is checked before anything is sized by it (the same on every rank).
int checked_restart(int restart) {
  TESSERA_REQUIRE_INPUT(restart >= 1, "device FGMRES: need restart >= 1, got ", restart);
  return restart;
}

}  // namespace

FgmresWorkspace::FgmresWorkspace(std::int64_t rows, int restart, cudaStream_t stream)
    : rows(rows),
      restart(checked_restart(restart)),
      basis(std::size_t(rows) * std::size_t(restart + 1), stream),
      preconditioned(std::size_t(rows) * std::size_t(restart), stream),
      r(std::size_t(rows), stream),
      z(std::size_t(rows), stream) {}

SolveResult device_fgmres(DeviceOperator& a, const double* b, double* x, const DevicePreconditioner& m,
                          const KrylovOptions& o, FgmresWorkspace* workspace) {
  const std::int64_t n = a.rows();
  const cudaStream_t stream = a.stream();
  const double b_norm = detail::check_device_system("device FGMRES", a, b, x, o, true);
  const int k_max = o.restart;
  std::optional<FgmresWorkspace> own;
  if (!workspace) workspace = &own.emplace(n, k_max, stream);
  TESSERA_REQUIRE_INPUT(workspace->rows == n && workspace->restart == k_max, "device FGMRES: a workspace for ",
                        workspace->rows, " rows and restart ", workspace->restart, ", the solve has ", n, " and ",
                        k_max);
  FgmresWorkspace& w = *workspace;
  const auto v = [&](int i) { return w.basis.data() + std::int64_t(i) * n; };
  const auto z = [&](int i) { return w.preconditioned.data() + std::int64_t(i) * n; };
  double* r = w.r.data();
  SolveResult result;
  if (b_norm == 0) zero(n, x, stream);
  GmresLeastSquares ls(k_max);
  a.residual(x, b, r);
  double beta = detail::device_norm(a, r), best = beta;
  int since_best = 0;
  while (b_norm > 0 && beta > o.rtol * b_norm && result.iterations < o.max_iterations) {
    axpby(n, 1.0 / beta, r, 0.0, v(0), stream);
    ls.start(beta);
    int k = 0;
    bool broke_down = false;
    while (k < k_max && result.iterations < o.max_iterations) {
      // The preconditioner always sees the same two vectors (r in, w.z out), so one that
      // replays a CUDA graph captured on its vectors (DistDeviceAmgPreconditioner) replays it
      // here too; two device copies an iteration instead of a cycle launched kernel by kernel.
      copy(n, v(k), r, stream);
      m(r, w.z.data());
      copy(n, w.z.data(), z(k), stream);
      a.apply(1.0, z(k), 0.0, v(k + 1));
      for (int i = 0; i <= k; ++i) {  // modified Gram-Schmidt, as the host
        const double h_ik = ls.h(i, k) = a.dot(n, v(k + 1), v(i));
        axpby(n, -h_ik, v(i), 1.0, v(k + 1), stream);
      }
      ls.h(k + 1, k) = std::sqrt(a.dot(n, v(k + 1), v(k + 1)));
      const double subdiagonal = ls.rotate_column(k);
      ++k, ++result.iterations;
      if (o.history) result.history.push_back(std::abs(ls.residual(k)) / b_norm);
      if (ls.broke_down(k)) {
        broke_down = true;
        break;
      }
      if (std::abs(ls.residual(k)) <= o.rtol * b_norm || subdiagonal == 0) break;
      axpby(n, 1.0 / subdiagonal, v(k), 0.0, v(k), stream);
    }
    if (broke_down) {
      result.status = SolveStatus::breakdown;
      result.message = "GMRES breakdown at iteration " + std::to_string(result.iterations) +
                       " (singular Hessenberg or non-finite value)";
      --k;  // drop the failed column
    }
    const std::vector<double>& y = ls.solve(k);
    for (int i = 0; i < k; ++i) axpby(n, y[i], z(i), 1.0, x, stream);  // x adds its terms in the order of i
    a.residual(x, b, r);
    beta = detail::device_norm(a, r);
    if (broke_down) break;
    if (beta < best) {
      best = beta, since_best = 0;
    } else if ((since_best += k) >= o.stagnation_window) {
      result.status = SolveStatus::stagnation;
      result.message = "GMRES: no progress over " + std::to_string(since_best) + " iterations";
      break;
    }
  }
  if (b_norm == 0 || beta <= o.rtol * b_norm) result.status = SolveStatus::converged, result.message.clear();
  detail::finish_device_solve(a, b, x, b_norm, r, result);
  return result;
}

SolveResult device_fgmres(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan,
                          const double* b, double* x, const DevicePreconditioner& m, const KrylovOptions& options,
                          cudaStream_t stream) {
  CsrDeviceOperator op(a, plan, stream);
  return device_fgmres(op, b, x, m, options);
}

}  // namespace tessera::amg::gpu
