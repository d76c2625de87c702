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
// When asked (CoarseForm::inverse_if_accurate, the default), after a device factorisation the
// solver forms the explicit inverse X = A^-1 and keeps it in place of the factor when
// ||I - A X||_inf <= kInverseTolerance and the device has room for the two extra n x n buffers
// this takes. A solve is then one dense matrix-vector product, where the factor's two
// triangular solves take many short dependent steps (on an H100, 89-95 us against 7.4-8.4 us
// for 550-594 rows: docs/performance.md). X is formed, tested and applied by Tessera's own
// kernels (dense_inverse.hpp, which says why not cuBLAS) for Cholesky factors up to
// kOwnInverseMaxRows, by cuSOLVER's solves on the identity otherwise.
// Why a tolerance on the residual, and this one: an AMG coarse solve needs a small forward
// error, not backward stability; a solve through X has a relative residual of at most about
// 2 * kInverseTolerance and a forward error of the factor's order (n * eps * cond(A)); 1e-8 is
// far below what a V-cycle's own error reduction (about 0.1 a cycle) could notice. An operator
// that misses the test (cond(A) near 1e8 / (n * eps)) keeps the factor and the backward-stable
// triangular solves.
// solve() is stream-ordered and does not synchronise on the device paths.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "amg/coarse_solver.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// How solves apply the factorisation (see above).
enum class CoarseForm { factor, inverse_if_accurate };

class DeviceCoarseSolver {
 public:
  /// The largest ||I - A X||_inf (max row sum) for which the explicit inverse X is kept.
  static constexpr double kInverseTolerance = 1e-8;

  DeviceCoarseSolver();
  ~DeviceCoarseSolver();
  DeviceCoarseSolver(DeviceCoarseSolver&&) noexcept;
  DeviceCoarseSolver& operator=(DeviceCoarseSolver&&) noexcept;

  /// Factors the square `a` (device) on `stream`; waits for it (the pivot checks are read back).
  /// Buffers are kept when the size does not change (re-setup). InputError: not square, or too
  /// large for cuSOLVER's 32-bit sizes.
  void factor(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream = nullptr,
              CoarseForm form = CoarseForm::inverse_if_accurate);
  /// x = A^-1 b on device vectors of rows() entries, ordered on `stream` (x may not alias b).
  void solve(const double* b, double* x, cudaStream_t stream = nullptr) const;

  /// "cholesky (cuSOLVER)" or "lu (cuSOLVER)", each followed by kAppliedAsInverse when the
  /// explicit inverse is kept; the host solver's method with "(host fallback ...)"; or
  /// "none (0 rows)".
  static constexpr const char* kAppliedAsInverse = ", applied as its explicit inverse";
  const std::string& method() const { return method_; }
  /// The method as a level table prints it ("dense cholesky (cuSOLVER)", ...), as the host solver's.
  std::string describe() const { return "dense " + method_; }
  /// Pivots dropped by the host fallback (0 on the device paths).
  int dropped_pivots() const { return host_ ? host_->dropped_pivots() : 0; }
  std::int64_t rows() const { return n_; }
  /// True when solves run on the device (false: empty, or the host fallback).
  bool on_device() const { return kind_ == Kind::cholesky || kind_ == Kind::lu; }
  /// True when solves are one product with the explicit inverse (on_device() is then true too).
  bool applies_inverse() const { return on_device() && explicit_inverse_; }
  /// ||I - A X||_inf of the last inverse formed (kept or not); NaN when none was formed (the
  /// host fallback, or no room on the device).
  double inverse_residual() const { return inverse_residual_; }
  std::int64_t device_bytes() const;

 private:
  enum class Kind { none, cholesky, lu, host };
  struct Handle;  // the cuSOLVER handle, created on the first factor()

  void scatter(const tessera::cuda::DeviceCsr<double>& a, tessera::cuda::DeviceBuffer<double>& dense,
               cudaStream_t stream) const;
  /// dense_ (scattered from `a`) within kCoarseSymmetryTolerance of symmetric (synchronises).
  bool is_symmetric(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  bool try_cholesky(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  bool try_lu(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  bool try_inverse(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  void factor_on_host(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream);
  void solve_on_host(const double* b, double* x, cudaStream_t stream) const;

  std::unique_ptr<Handle> handle_;
  Kind kind_ = Kind::none;
  std::int64_t n_ = 0;
  std::string method_ = "none";
  bool explicit_inverse_ = false;
  double inverse_residual_ = std::numeric_limits<double>::quiet_NaN();
  tessera::cuda::DeviceBuffer<double> dense_;      // n x n: L (Cholesky), L\U (LU) column-major, or A^-1 row-major
  tessera::cuda::DeviceBuffer<double> workspace_;  // potrf / getrf scratch
  tessera::cuda::DeviceBuffer<int> pivots_;        // getrf row interchanges
  mutable tessera::cuda::DeviceBuffer<int> info_;  // cuSOLVER's status word (factor and solve)
  std::unique_ptr<DenseCoarseSolver> host_;        // singular fallback only
  mutable std::vector<double> host_b_, host_x_;    // its staging vectors
};

}  // namespace tessera::amg::gpu
