#pragma once
// Direct solve of the coarsest AMG level on the device: the device twin of DenseCoarseSolver
// (amg/coarse_solver.hpp), so that neither the setup nor a cycle sends the coarse level to the
// host. The CSR operator is scattered into a dense column-major matrix on the device, then
//   1. cuSOLVER Cholesky (potrf on the lower triangle, as the host ignores the upper one);
//   2. if a pivot is not positive, cuSOLVER LU with partial pivoting (getrf);
//   3. if LU meets a pivot the host would drop (|u_kk| <= n * eps * max|a_ij|, exact zeros
//      included), the matrix is singular to working precision: the host DenseCoarseSolver
//      factors it (dropping those pivots, one particular solution of a consistent system) and
//      each solve goes through the host. method() says so; this is the rare case (a coarse
//      Neumann operator that Cholesky did not get through), never the SPD one.
// solve() is stream-ordered and does not synchronise on the device paths.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "amg/coarse_solver.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

class DeviceCoarseSolver {
 public:
  DeviceCoarseSolver();
  ~DeviceCoarseSolver();
  DeviceCoarseSolver(DeviceCoarseSolver&&) noexcept;
  DeviceCoarseSolver& operator=(DeviceCoarseSolver&&) noexcept;

  /// Factors the square `a` (device) on `stream`; waits for it (the pivot checks are read back).
  /// Buffers are kept when the size does not change (re-setup). InputError: not square, or too
  /// large for cuSOLVER's 32-bit sizes.
  void factor(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream = nullptr);
  /// x = A^-1 b on device vectors of rows() entries, ordered on `stream` (x may not alias b).
  void solve(const double* b, double* x, cudaStream_t stream = nullptr) const;

  /// "cholesky (cuSOLVER)", "lu (cuSOLVER)", the host solver's method with "(host fallback ...)",
  /// or "none (0 rows)".
  const std::string& method() const { return method_; }
  /// Pivots dropped by the host fallback (0 on the device paths).
  int dropped_pivots() const { return host_ ? host_->dropped_pivots() : 0; }
  std::int64_t rows() const { return n_; }
  /// True when solves run on the device (false: empty, or the host fallback).
  bool on_device() const { return kind_ == Kind::cholesky || kind_ == Kind::lu; }
  std::int64_t device_bytes() const;

 private:
  enum class Kind { none, cholesky, lu, host };
  struct Handle;  // the cuSOLVER handle, created on the first factor()

  void scatter(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  bool try_cholesky(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  bool try_lu(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  void factor_on_host(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  void solve_on_host(const double* b, double* x, cudaStream_t stream) const;

  std::unique_ptr<Handle> handle_;
  Kind kind_ = Kind::none;
  std::int64_t n_ = 0;
  std::string method_ = "none";
  tessera::cuda::DeviceBuffer<double> dense_;      // n x n column-major: L (Cholesky) or L\U (LU)
  tessera::cuda::DeviceBuffer<double> workspace_;  // potrf / getrf scratch
  tessera::cuda::DeviceBuffer<int> pivots_;        // getrf row interchanges
  mutable tessera::cuda::DeviceBuffer<int> info_;  // cuSOLVER's status word (factor and solve)
  std::unique_ptr<DenseCoarseSolver> host_;        // singular fallback only
  mutable std::vector<double> host_b_, host_x_;    // its staging vectors
};

}  // namespace tessera::amg::gpu
