#pragma once
// The few BLAS-1 steps the device cycle and PCG need, on raw device pointers of length n, all
// stream-ordered. Each has a one-line host formula (the host cycle's loops in amg/cycle.cpp,
// amg/smoother.cpp and amg/pcg.cpp); beta == 0 never reads y (NaN in y is ignored, as in BLAS).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_buffer.hpp"

namespace tessera::cuda {

/// y = alpha * x + beta * y.
void axpby(std::int64_t n, double alpha, const double* x, double beta, double* y, cudaStream_t stream = nullptr);

/// y = alpha * d .* x + beta * y (d a diagonal scaling: the smoothers' D^-1 r).
void diagonal_axpby(std::int64_t n, double alpha, const double* d, const double* x, double beta, double* y,
                    cudaStream_t stream = nullptr);

/// y += alpha * sum_{i < count} c_i v_i, where v_i = vectors + i * stride (n entries each) and
/// c holds `count` coefficients in device memory (a product the stream computed, read by the
/// kernel, never by the host). Each y_j adds its terms in the order of i: count axpys' result.
/// Arnoldi's w -= V c (alpha = -1) and GMRES's x += Z y in one pass over y.
void combine(std::int64_t n, double alpha, const double* vectors, std::int64_t stride, int count,
             const double* coefficients, double* y, cudaStream_t stream = nullptr);

/// y = x (device to device).
void copy(std::int64_t n, const double* x, double* y, cudaStream_t stream = nullptr);

/// y = 0.
void zero(std::int64_t n, double* y, cudaStream_t stream = nullptr);

/// Deterministic inner product x^T y: a fixed grid of block partial sums (CUB BlockReduce),
/// then one block sums the partials, so the summation order never changes from run to run.
/// Returns to the host (one synchronisation of `stream`). `work` is reused between calls.
class DeviceDot {
 public:
  double operator()(std::int64_t n, const double* x, const double* y, cudaStream_t stream = nullptr);
  /// The same sum left on the device, without synchronising (the distributed dot reduces it
  /// over ranks in place). n == 0 gives 0. The value lives in this DeviceDot until its next call.
  double* device_sum(std::int64_t n, const double* x, const double* y, cudaStream_t stream = nullptr);
  /// The same sum written to `*total` (device memory the caller keeps: values that must outlive
  /// the next call, such as PCG's scalars), without synchronising.
  void sum_into(std::int64_t n, const double* x, const double* y, double* total, cudaStream_t stream = nullptr);

 private:
  DeviceBuffer<double> partial_;  // one per block, then the total in [0]
};

/// Deterministic inner products of one vector w with `count` vectors v_i = vectors + i * stride:
/// totals[i] = v_i^T w, all in one pass over w and the v_i (the classical Gram-Schmidt
/// projection V^T w, where modified Gram-Schmidt takes count dependent dots). Each total is
/// summed in the order DeviceDot uses for one product: the same fixed grid of block partial
/// sums, then one block per total. Left on the device, without synchronising.
class DeviceMultiDot {
 public:
  void sums_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w, double* totals,
                 cudaStream_t stream = nullptr);
  /// Allocates the partial sums of up to `count` totals now, stream-ordered. Without it the
  /// first call allocates them; a distributed caller reserves them where it allocates its other
  /// buffers collectively (one rank out of memory must not leave the others in an allreduce).
  void reserve(int count, cudaStream_t stream = nullptr);

 private:
  DeviceBuffer<double> partial_;  // count x blocks partial sums
};

}  // namespace tessera::cuda
