#include "amg/cuda/device_row_kernels.hpp"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <limits>

#include "amg/node_hashes.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;
using tessera::cuda::grid_for;

constexpr int kThreads = 256;
constexpr std::int64_t kAllGood = std::numeric_limits<std::int64_t>::max();

/// Writes 1/a_ii; rows with a bad diagonal (or a non-finite entry) race their index into `bad`
/// with atomicMin, so the first bad row is reported as the host check reports it.
__global__ void inverse_diagonal_kernel(std::int64_t rows, const std::int64_t* row_ptr, const std::int32_t* col,
                                        const double* val, double* inv_diag, unsigned long long* bad) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  double d = 0.0;
  bool finite = true;
  for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
    finite = finite && isfinite(val[p]);
    if (col[p] == i) d = val[p];
  }
  if (!finite || !(d > 0.0) || !isfinite(d)) atomicMin(bad, static_cast<unsigned long long>(i));
  inv_diag[i] = 1.0 / d;
}

/// The same test over a distributed operator's two blocks, without the inverse: a row with a
/// non-finite entry in either block, or no positive finite a_ii in the owned one, races its
/// index into `bad`.
__global__ void unfit_row_kernel(std::int64_t rows, const std::int64_t* local_ptr, const std::int32_t* local_col,
                                 const double* local_val, const std::int64_t* ghost_ptr, const double* ghost_val,
                                 unsigned long long* bad) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  double d = 0.0;
  bool finite = true;
  for (std::int64_t p = local_ptr[i]; p < local_ptr[i + 1]; ++p) {
    finite = finite && isfinite(local_val[p]);
    if (local_col[p] == i) d = local_val[p];
  }
  for (std::int64_t p = ghost_ptr[i]; p < ghost_ptr[i + 1]; ++p) finite = finite && isfinite(ghost_val[p]);
  if (!finite || !(d > 0.0)) atomicMin(bad, static_cast<unsigned long long>(i));
}

__global__ void l1_inverse_diagonal_kernel(std::int64_t rows, const std::int64_t* row_ptr, const std::int32_t* col,
                                           const double* val, double* inv_l1) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  double l1 = 0.0;
  for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) l1 += col[p] == i ? val[p] : fabs(val[p]);
  inv_l1[i] = 1.0 / l1;
}

/// inv_diag_i * sum_j |a_ij| of each row, summed left to right: first over `first_ptr`/`first_val`
/// if given (a distributed operator's non-local block), then over row_ptr/val.
__global__ void scaled_row_sum_kernel(std::int64_t rows, const std::int64_t* first_ptr, const double* first_val,
                                      const std::int64_t* row_ptr, const double* val, const double* inv_diag,
                                      double* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  double sum = 0.0;
  if (first_ptr)
    for (std::int64_t p = first_ptr[i]; p < first_ptr[i + 1]; ++p) sum += fabs(first_val[p]);
  for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) sum += fabs(val[p]);
  out[i] = sum * inv_diag[i];
}

__global__ void lanczos_start_kernel(std::int64_t first_row, std::int64_t n, double* v) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) v[i] = lanczos_start_entry(static_cast<std::uint64_t>(first_row + i));
}

__global__ void lanczos_normalize_start_kernel(std::int64_t n, const double* sum, double* v) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] / sqrt(*sum);
}

__global__ void lanczos_update_kernel(std::int64_t n, LanczosScalars s, int j, const double* alpha_sum,
                                      const double* v, const double* u, double* w) {
  if (*s.taken != 0.0) return;  // stopped at an earlier step
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const double a = *alpha_sum, b = j > 0 ? s.beta[j - 1] : 0.0;
  if (i == 0) s.alpha[j] = a;
  if (i < n) w[i] = __dsub_rn(w[i], __dadd_rn(__dmul_rn(a, v[i]), __dmul_rn(b, u[i])));
}

__global__ void lanczos_record_norm_kernel(LanczosScalars s, int j, const double* norm_sum) {
  if (*s.taken != 0.0) return;
  const double norm = sqrt(*norm_sum);
  if (j + 1 == s.steps || norm <= 1e-12 * fabs(s.alpha[j])) *s.taken = j + 1;
  else s.beta[j] = norm;
}

__global__ void lanczos_next_vector_kernel(std::int64_t n, LanczosScalars s, int j, const double* w, double* v) {
  if (*s.taken != 0.0) return;
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) v[i] = w[i] / s.beta[j];
}

__global__ void sqrt_kernel(std::int64_t n, const double* x, double* y) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sqrt(x[i]);
}

}  // namespace

DeviceBuffer<double> device_inverse_diagonal(const DeviceCsr<double>& a, const char* what, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, what, " must be square, it is ", a.rows, "x", a.cols);
  DeviceBuffer<double> inv(std::size_t(a.rows), stream);
  if (a.rows == 0) return inv;
  DeviceBuffer<unsigned long long> bad(1, stream);
  const unsigned long long none = kAllGood;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(bad.data(), &none, sizeof none, cudaMemcpyHostToDevice, stream));
  inverse_diagonal_kernel<<<grid_for(a.rows, kThreads), kThreads, 0, stream>>>(
      a.rows, a.row_ptr.data(), a.col_idx.data(), a.values.data(), inv.data(), bad.data());
  TESSERA_CHECK_LAUNCH();
  const unsigned long long first_bad = tessera::cuda::read_scalar(bad.data(), stream);
  TESSERA_REQUIRE_INPUT(first_bad == none, what, ": row ", first_bad,
                        " has a missing, non-positive or non-finite diagonal, or a non-finite entry");
  return inv;
}

std::int64_t device_first_unfit_row(const DeviceCsr<double>& local, const DeviceCsr<double>& nonlocal,
                                    cudaStream_t stream) {
  TESSERA_ASSERT(local.rows == nonlocal.rows, "device_first_unfit_row: blocks of ", local.rows, " and ", nonlocal.rows,
                 " rows");
  if (local.rows == 0) return -1;
  DeviceBuffer<unsigned long long> bad(1, stream);
  const unsigned long long none = kAllGood;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(bad.data(), &none, sizeof none, cudaMemcpyHostToDevice, stream));
  unfit_row_kernel<<<grid_for(local.rows, kThreads), kThreads, 0, stream>>>(
      local.rows, local.row_ptr.data(), local.col_idx.data(), local.values.data(), nonlocal.row_ptr.data(),
      nonlocal.values.data(), bad.data());
  TESSERA_CHECK_LAUNCH();
  const unsigned long long first_bad = tessera::cuda::read_scalar(bad.data(), stream);
  return first_bad == none ? -1 : static_cast<std::int64_t>(first_bad);
}

DeviceBuffer<double> device_l1_inverse_diagonal(const DeviceCsr<double>& a, cudaStream_t stream) {
  DeviceBuffer<double> inv(std::size_t(a.rows), stream);
  if (a.rows == 0) return inv;
  l1_inverse_diagonal_kernel<<<grid_for(a.rows, kThreads), kThreads, 0, stream>>>(
      a.rows, a.row_ptr.data(), a.col_idx.data(), a.values.data(), inv.data());
  TESSERA_CHECK_LAUNCH();
  return inv;
}

namespace {

/// *max = the largest scaled row sum (scaled_row_sum_kernel) over rows >= 1 rows.
void scaled_row_sum_max(std::int64_t rows, const DeviceCsr<double>* first, const DeviceCsr<double>& a,
                        const double* inv_diag, double* max, cudaStream_t stream) {
  DeviceBuffer<double> row_bound(std::size_t(rows), stream);
  scaled_row_sum_kernel<<<grid_for(rows, kThreads), kThreads, 0, stream>>>(
      rows, first ? first->row_ptr.data() : nullptr, first ? first->values.data() : nullptr, a.row_ptr.data(),
      a.values.data(), inv_diag, row_bound.data());
  TESSERA_CHECK_LAUNCH();
  tessera::cuda::cub_call(stream, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceReduce::Max(temp, bytes, row_bound.data(), max, rows, stream);
  });
}

}  // namespace

void device_gershgorin_max(const DeviceCsr<double>& a, const double* inv_diag, double* max, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(a.rows > 0, "device_gershgorin_max: no rows");
  scaled_row_sum_max(a.rows, nullptr, a, inv_diag, max, stream);
}

double device_dist_gershgorin_bound(const DeviceCsr<double>& local, const DeviceCsr<double>& nonlocal,
                                    const double* inv_diag, cudaStream_t stream) {
  if (local.rows == 0) return 0.0;
  TESSERA_ASSERT(nonlocal.rows == local.rows, "a distributed operator's blocks have ", local.rows, " and ",
                 nonlocal.rows, " rows");
  DeviceBuffer<double> max(1, stream);
  scaled_row_sum_max(local.rows, nonlocal.nnz > 0 ? &nonlocal : nullptr, local, inv_diag, max.data(), stream);
  return std::max(0.0, tessera::cuda::read_scalar(max.data(), stream));  // the host's bound starts from 0
}

namespace {

__global__ void uniform_nodes_kernel(std::int64_t count, int block_size, std::int64_t* nodes) {
  const std::int64_t n = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n < count) nodes[n] = n * block_size;
}

__global__ void constant_near_null_kernel(std::int64_t entries, int block_size, double* b) {
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < entries) b[e] = (e / block_size) % block_size == e % block_size ? 1.0 : 0.0;
}

}  // namespace

DeviceBuffer<std::int64_t> device_uniform_nodes(std::int64_t rows, int block_size, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(block_size >= 1 && rows % block_size == 0, "AMG: block size ", block_size,
                        " does not divide the ", rows, " rows");
  const std::int64_t count = rows / block_size + 1;
  DeviceBuffer<std::int64_t> nodes(std::size_t(count), stream);
  uniform_nodes_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(count, block_size, nodes.data());
  TESSERA_CHECK_LAUNCH();
  return nodes;
}

DeviceBuffer<double> device_constant_near_null_space(std::int64_t rows, int block_size, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(block_size >= 1 && rows % block_size == 0, "AMG: block size ", block_size,
                        " does not divide the ", rows, " rows");
  const std::int64_t entries = rows * block_size;
  DeviceBuffer<double> b(std::size_t(entries), stream);
  if (entries == 0) return b;
  constant_near_null_kernel<<<grid_for(entries, kThreads), kThreads, 0, stream>>>(entries, block_size, b.data());
  TESSERA_CHECK_LAUNCH();
  return b;
}

void device_lanczos_start(std::int64_t first_row, std::int64_t n, double* v, cudaStream_t stream) {
  if (n == 0) return;
  lanczos_start_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(first_row, n, v);
  TESSERA_CHECK_LAUNCH();
}

void device_lanczos_normalize_start(std::int64_t n, const double* sum, double* v, cudaStream_t stream) {
  if (n == 0) return;
  lanczos_normalize_start_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(n, sum, v);
  TESSERA_CHECK_LAUNCH();
}

void device_lanczos_update(std::int64_t n, LanczosScalars s, int j, const double* alpha_sum, const double* v,
                           const double* u, double* w, cudaStream_t stream) {
  lanczos_update_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(n, s, j, alpha_sum, v, u, w);
  TESSERA_CHECK_LAUNCH();
}

void device_lanczos_record_norm(LanczosScalars s, int j, const double* norm_sum, cudaStream_t stream) {
  lanczos_record_norm_kernel<<<1, 1, 0, stream>>>(s, j, norm_sum);
  TESSERA_CHECK_LAUNCH();
}

void device_lanczos_next_vector(std::int64_t n, LanczosScalars s, int j, const double* w, double* v,
                                cudaStream_t stream) {
  if (n == 0) return;
  lanczos_next_vector_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(n, s, j, w, v);
  TESSERA_CHECK_LAUNCH();
}

void device_sqrt(std::int64_t n, const double* x, double* y, cudaStream_t stream) {
  if (n == 0) return;
  sqrt_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(n, x, y);
  TESSERA_CHECK_LAUNCH();
}

}  // namespace tessera::amg::gpu
