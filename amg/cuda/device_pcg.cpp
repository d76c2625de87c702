// Host code only: the control flow of amg/pcg.cpp over device vectors and a DeviceOperator.
#include "amg/cuda/device_pcg.hpp"

#include <cmath>
#include <string>

#include "amg/cuda/device_krylov_common.hpp"
#include "amg/cuda/device_pcg_steps.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/pinned_host_buffer.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::copy;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::zero;
using detail::device_norm;

/// PCG's scalars in device memory, where the dots leave them and the updates read them, and a
/// page-locked mirror that brings them to the host in one copy. r^T z alternates between two
/// slots (the direction update reads the old and the new one).
class DeviceScalars {
 public:
  struct Values {
    double pq, rr, rz;
  };
  explicit DeviceScalars(cudaStream_t stream) : stream_(stream), device_(kCount, stream), host_(kCount) {
    device_.fill_bytes(0, stream);  // every read copies all slots, written or not yet
  }
  double* pq() { return device_.data(); }
  double* rr() { return device_.data() + 1; }
  double* rz(int iteration) { return device_.data() + 2 + (iteration & 1); }  // r^T z entering `iteration`
  /// Waits for the stream, then p^T A p, r^T r and the r^T z entering `iteration`.
  Values read(int iteration) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(host_.data(), device_.data(), kCount * sizeof(double), cudaMemcpyDeviceToHost,
                                       stream_));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return {host_[0], host_[1], host_[2 + (iteration & 1)]};
  }

 private:
  static constexpr std::size_t kCount = 4;
  cudaStream_t stream_;
  DeviceBuffer<double> device_;
  tessera::cuda::PinnedHostBuffer<double> host_;
};

/// device_pcg on b in range (detail::solve_device_in_range), ||b|| = b_norm.
SolveResult pcg_in_range(DeviceOperator& a, const double* b, double* x, double b_norm, const DevicePreconditioner& m,
                         const KrylovOptions& o) {
  const std::int64_t n = a.rows();
  const cudaStream_t stream = a.stream();
  DeviceBuffer<double> r(std::size_t(n), stream), z(std::size_t(n), stream), p(std::size_t(n), stream),
      q(std::size_t(n), stream);
  SolveResult result;
  if (b_norm == 0) {
    zero(n, x, stream);
    result.status = SolveStatus::converged;
    detail::finish_device_solve(a, b, x, b_norm, r.data(), result);
    return result;
  }
  a.residual(x, b, r.data());
  double res = device_norm(a, r.data()) / b_norm, best = res;
  int since_best = 0;
  amg::detail::FailedConfirmations failed;
  DeviceBuffer<double> x_kept;  // the iterate of the smallest failed confirmation, once there is one
  // amg/pcg.cpp's loop with its scalars left on the device: an iteration is queued whole and
  // synchronises once to read p^T A p, r^T r and the r^T z it started from (plus the true
  // residual's dot when it confirms convergence, and whatever the preconditioner itself waits
  // for, e.g. a host coarse solve). The host's tests on them come after the step instead of
  // before it, which changes nothing: pcg_step writes only where those tests pass
  // (device_pcg_steps.hpp).
  DeviceScalars s(stream);
  m(r.data(), z.data());
  a.dot_into(n, r.data(), z.data(), s.rz(1));
  copy(n, z.data(), p.data(), stream);
  for (int it = 1; res > o.rtol; ++it) {
    if (it > o.max_iterations) break;  // status stays max_iterations
    a.apply(1.0, p.data(), 0.0, q.data());
    a.dot_into(n, p.data(), q.data(), s.pq());
    pcg_step(n, s.rz(it), s.pq(), p.data(), q.data(), x, r.data(), stream);
    a.dot_into(n, r.data(), r.data(), s.rr());
    const DeviceScalars::Values v = s.read(it);
    if (!std::isfinite(v.rz)) {
      result.status = SolveStatus::breakdown;
      result.message = amg::detail::value_at(it, "non-finite r^T z", v.rz);
      break;
    }
    if (v.rz <= 0) {
      result.status = SolveStatus::indefinite_preconditioner;
      result.message =
          amg::detail::value_at(it, "r^T M^-1 r", v.rz) + ": the preconditioner is not positive definite";
      break;
    }
    if (!(v.pq > 0)) {
      result.status = std::isfinite(v.pq) ? SolveStatus::indefinite_operator : SolveStatus::breakdown;
      result.message =
          amg::detail::value_at(it, "p^T A p", v.pq) + ": A is not positive definite (singular or indefinite)";
      break;
    }
    result.iterations = it;
    res = std::sqrt(v.rr) / b_norm;
    if (o.history) result.history.push_back(res);
    bool restart = false;
    if (res <= o.rtol) {  // confirm with the true residual
      a.residual(x, b, r.data());
      res = device_norm(a, r.data()) / b_norm;
      if (res <= o.rtol) break;
      if (failed.record(res)) {
        if (x_kept.size() == 0) x_kept = DeviceBuffer<double>(std::size_t(n), stream);
        copy(n, x, x_kept.data(), stream);
      }
      if (!failed.halved) {
        result.status = SolveStatus::accuracy_limit;
        result.message = failed.limit_message("recurrence residual", o.rtol, res);
        break;
      }
      restart = true;
    }
    if (res < best) {
      best = res, since_best = 0;
    } else if (++since_best >= o.stagnation_window) {
      result.status = SolveStatus::stagnation;
      result.message = amg::detail::stagnation_message(o.stagnation_window, best);
      break;
    }
    m(r.data(), z.data());
    a.dot_into(n, r.data(), z.data(), s.rz(it + 1));
    if (restart)
      copy(n, z.data(), p.data(), stream);  // p = z: CG again from the true residual
    else
      pcg_direction(n, s.rz(it + 1), s.rz(it), z.data(), p.data(), stream);  // p = z + (rz_next / rz) p
  }
  if (res > o.rtol && failed.count > 0) {  // not converged: keep the better of the last and the kept iterate
    a.residual(x, b, r.data());
    if (device_norm(a, r.data()) / b_norm > failed.smallest) copy(n, x_kept.data(), x, stream);
  }
  if (res <= o.rtol && result.message.empty()) result.status = SolveStatus::converged;
  detail::finish_device_solve(a, b, x, b_norm, r.data(), result);
  return result;
}

}  // namespace

SolveResult device_pcg(DeviceOperator& a, const double* b, double* x, const DevicePreconditioner& m,
                       const KrylovOptions& o) {
  return detail::solve_device_in_range("device PCG", a, b, x, o, false,
                                       [&](const double* in_b, double* in_x, double b_norm) {
                                         return pcg_in_range(a, in_b, in_x, b_norm, m, o);
                                       });
}

SolveResult device_pcg(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::SpmvPlan& plan, const double* b,
                       double* x, const DevicePreconditioner& m, const KrylovOptions& o, cudaStream_t stream) {
  CsrDeviceOperator op(a, plan, stream);
  return device_pcg(op, b, x, m, o);
}

}  // namespace tessera::amg::gpu
