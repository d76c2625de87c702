#include "amg/cuda/device_coarse_solver.hpp"

#include <cusolverDn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "amg/cuda/dense_inverse.hpp"
#include "amg/cuda/device_setup_phases.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

void check_cusolver(cusolverStatus_t status, const char* call, int line) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw DeviceError(detail::concat(call, " failed at ", __FILE__, ":", line, ": cuSOLVER status ", int(status)));
}
#define TESSERA_CUSOLVER_CHECK(call) check_cusolver((call), #call, __LINE__)

constexpr int kThreads = 256;
constexpr int kWarp = 32;

int blocks_for(std::int64_t n) { return int(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 4096)); }

/// Keeps `buffer` when it already holds n elements: a re-setup of the same level reuses the
/// matrix buffer (the inverse's temporaries are allocated afresh, from the stream-ordered pool).
template <class T>
void ensure_size(tessera::cuda::DeviceBuffer<T>& buffer, std::size_t n, cudaStream_t stream) {
  if (buffer.size() != n) buffer.allocate(n, stream);
}

/// dense(row, col) = a(row, col), column-major with leading dimension n (dense zeroed before):
/// a warp a row, its lanes over the row's entries. (A thread a row took 71-208 us at 550-1429
/// rows: a few thousand threads, each walking a row of up to a few hundred entries.)
__global__ void scatter_to_dense(std::int64_t n, const std::int64_t* row_ptr, const std::int32_t* col_idx,
                                 const double* values, double* dense) {
  const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  if (row >= n) return;
  for (std::int64_t p = row_ptr[row] + threadIdx.x % kWarp; p < row_ptr[row + 1]; p += kWarp)
    dense[col_idx[p] * n + row] = values[p];
}

/// The n x n column-major identity (x zeroed before).
__global__ void set_unit_diagonal(std::int64_t n, double* x) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    x[i * n + i] = 1.0;
}

/// *worst = max over i, j of |d(i, j) - d(j, i)| (column-major n x n), kept as the bits of a
/// non-negative double, which order like the doubles: atomicMax gives the maximum whatever the
/// order the blocks arrive in. Block (bi, bj), bi >= bj, compares the 32 x 32 tile at rows bi,
/// columns bj with the one at rows bj, columns bi, both read down their columns (coalesced)
/// into shared memory. (Reading d(j, i) straight from memory, n doubles apart for neighbouring
/// threads, took 195-202 us at 550-1429 rows.)
__global__ void max_asymmetry(std::int64_t n, const double* dense, unsigned long long* worst) {
  __shared__ double lower[kWarp][kWarp + 1], upper[kWarp][kWarp + 1];  // [column][row] of each tile
  if (blockIdx.y > blockIdx.x) return;  // the tile pair is block (y, x)'s (whole block alike)
  const std::int64_t r0 = std::int64_t(blockIdx.x) * kWarp, c0 = std::int64_t(blockIdx.y) * kWarp;
  for (int c = threadIdx.y; c < kWarp; c += blockDim.y) {
    const std::int64_t i = threadIdx.x;
    if (r0 + i < n && c0 + c < n) lower[c][i] = dense[(c0 + c) * n + r0 + i];  // d(r0 + i, c0 + c)
    if (c0 + i < n && r0 + c < n) upper[c][i] = dense[(r0 + c) * n + c0 + i];  // d(c0 + i, r0 + c)
  }
  __syncthreads();
  unsigned long long mine = 0;
  for (int c = threadIdx.y; c < kWarp; c += blockDim.y) {
    const int i = threadIdx.x;  // d(r0 + i, c0 + c) against d(c0 + c, r0 + i)
    if (r0 + i < n && c0 + c < n)
      mine = max(mine, static_cast<unsigned long long>(__double_as_longlong(fabs(lower[c][i] - upper[i][c]))));
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) mine = max(mine, __shfl_down_sync(0xffffffffu, mine, offset));
  if (threadIdx.x == 0) atomicMax(worst, mine);
}

int read_info(const tessera::cuda::DeviceBuffer<int>& info, cudaStream_t stream) {
  int value = 0;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&value, info.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace

struct DeviceCoarseSolver::Handle {
  cusolverDnHandle_t h = nullptr;
  Handle() { TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&h)); }
  ~Handle() { cusolverDnDestroy(h); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

DeviceCoarseSolver::DeviceCoarseSolver() = default;
DeviceCoarseSolver::~DeviceCoarseSolver() = default;
DeviceCoarseSolver::DeviceCoarseSolver(DeviceCoarseSolver&&) noexcept = default;
DeviceCoarseSolver& DeviceCoarseSolver::operator=(DeviceCoarseSolver&&) noexcept = default;

void DeviceCoarseSolver::factor(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream, CoarseForm form) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "device coarse solver: the operator must be square, it is ", a.rows, "x",
                        a.cols);
  // cuSOLVER's legacy API takes int sizes, and n*n entries are indexed in int by its kernels.
  TESSERA_REQUIRE_INPUT(a.rows <= 46340, "device coarse solver: ", a.rows,
                        " rows is too many for a dense factorisation (at most 46340)");
  n_ = a.rows;
  host_.reset();
  explicit_inverse_ = false;
  inverse_residual_ = std::numeric_limits<double>::quiet_NaN();
  if (n_ == 0) {
    kind_ = Kind::none, method_ = "none (0 rows)";
    return;
  }
  std::optional<trace::Step> step(std::in_place, "coarse_factor.handles");
  if (!handle_) handle_ = std::make_unique<Handle>();
  TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(handle_->h, stream));
  ensure_size(dense_, std::size_t(n_ * n_), stream);
  ensure_size(info_, 1, stream);
  step.emplace("coarse_factor.factor");
  if (try_cholesky(a, stream)) {
    kind_ = Kind::cholesky, method_ = "cholesky (cuSOLVER)";
  } else if (try_lu(a, stream)) {
    kind_ = Kind::lu, method_ = "lu (cuSOLVER)";
  } else {
    factor_on_host(a, stream);
    kind_ = Kind::host;
    method_ = host_->method() + " (host fallback: cuSOLVER LU met a pivot below n*eps*max|a_ij|)";
    return;
  }
  step.emplace("coarse_factor.inverse");
  if (form == CoarseForm::inverse_if_accurate && try_inverse(a, stream)) method_ += kAppliedAsInverse;
}

void DeviceCoarseSolver::scatter(const tessera::cuda::DeviceCsr<double>& a, tessera::cuda::DeviceBuffer<double>& dense,
                                 cudaStream_t stream) const {
  TESSERA_CUDA_CHECK(cudaMemsetAsync(dense.data(), 0, dense.bytes(), stream));
  const unsigned warp_blocks = unsigned((n_ * kWarp + kThreads - 1) / kThreads);
  scatter_to_dense<<<warp_blocks, kThreads, 0, stream>>>(n_, a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                                                         dense.data());
  TESSERA_CHECK_LAUNCH();
}

// X = A^-1 from the factor in dense_, then ||I - A X||_inf against the sparse A. Kept (in
// dense_, in place of the factor, row-major) within kInverseTolerance; otherwise the factor
// stays. Cholesky factors up to kOwnInverseMaxRows go through dense_inverse.hpp's kernels (no
// library kernel loaded on first use: the reason is there); larger ones and LU through
// cuSOLVER's solves on the identity. Setup-time cost: 2n^3/3 flops for X (2n^3 through
// cuSOLVER), 2 nnz(A) n for the test, and up to two n x n buffers for its duration.
bool DeviceCoarseSolver::try_inverse(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  const int n = int(n_);
  const std::size_t entries = std::size_t(n_) * std::size_t(n_);
  // The inverse is an optimisation: without room for its two buffers (and as much again to
  // spare for the solve's own vectors) the factor serves, rather than an out-of-memory error.
  if (std::int64_t(4 * entries * sizeof(double)) > tessera::cuda::available_device_bytes()) return false;
  tessera::cuda::DeviceBuffer<double> inverse(entries, stream);
  if (kind_ == Kind::cholesky && n_ <= kOwnInverseMaxRows) {
    tessera::cuda::DeviceBuffer<double> factor_rows(entries, stream);
    inverse_from_cholesky(n_, dense_.data(), factor_rows.data(), inverse.data(), stream);
  } else {
    // A^T Y = I: Y = A^-T column-major, which read row-major is A^-1 (A^T = A for Cholesky).
    TESSERA_CUDA_CHECK(cudaMemsetAsync(inverse.data(), 0, inverse.bytes(), stream));
    set_unit_diagonal<<<blocks_for(n_), kThreads, 0, stream>>>(n_, inverse.data());
    TESSERA_CHECK_LAUNCH();
    if (kind_ == Kind::cholesky)
      TESSERA_CUSOLVER_CHECK(cusolverDnDpotrs(handle_->h, CUBLAS_FILL_MODE_LOWER, n, n, dense_.data(), n,
                                              inverse.data(), n, info_.data()));
    else
      TESSERA_CUSOLVER_CHECK(cusolverDnDgetrs(handle_->h, CUBLAS_OP_T, n, n, dense_.data(), n, pivots_.data(),
                                              inverse.data(), n, info_.data()));
    const int info = read_info(info_, stream);
    TESSERA_ASSERT(info == 0, "cuSOLVER rejected argument ", -info, " of the inverse's solve");
  }
  tessera::cuda::DeviceBuffer<double> row_sums(std::size_t(n_), stream);
  inverse_residual_row_sums(a, inverse.data(), row_sums.data(), stream);
  const std::vector<double> sums = row_sums.download(stream);
  const bool finite = std::all_of(sums.begin(), sums.end(), [](double v) { return std::isfinite(v); });
  inverse_residual_ = finite ? *std::max_element(sums.begin(), sums.end()) : std::numeric_limits<double>::infinity();
  if (inverse_residual_ > kInverseTolerance) return false;  // the factor stays
  dense_ = std::move(inverse);
  workspace_.release(), pivots_.release();
  explicit_inverse_ = true;
  return true;
}

bool DeviceCoarseSolver::try_cholesky(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  const int n = int(n_);
  scatter(a, dense_, stream);
  if (!is_symmetric(a, stream)) return false;  // potrf would factor the lower triangle's matrix
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(
      cusolverDnDpotrf_bufferSize(handle_->h, CUBLAS_FILL_MODE_LOWER, n, dense_.data(), n, &lwork));
  ensure_size(workspace_, std::size_t(std::max(lwork, 1)), stream);
  TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf(handle_->h, CUBLAS_FILL_MODE_LOWER, n, dense_.data(), n,
                                          workspace_.data(), lwork, info_.data()));
  const int info = read_info(info_, stream);
  TESSERA_ASSERT(info >= 0, "cusolverDnDpotrf rejected argument ", -info);
  return info == 0;  // info > 0: the leading minor of order info is not positive definite
}

bool DeviceCoarseSolver::is_symmetric(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  tessera::cuda::DeviceBuffer<unsigned long long> worst(1, stream);
  worst.fill_bytes(0, stream);
  const unsigned tiles = unsigned((n_ + kWarp - 1) / kWarp);
  max_asymmetry<<<dim3(tiles, tiles), dim3(kWarp, 8), 0, stream>>>(n_, dense_.data(), worst.data());
  TESSERA_CHECK_LAUNCH();
  const unsigned long long bits = worst.download(stream)[0];
  double asymmetry = 0;
  std::memcpy(&asymmetry, &bits, sizeof asymmetry);
  return asymmetry <= kCoarseSymmetryTolerance * device_max_abs(a.values.data(), a.nnz, stream);
}

bool DeviceCoarseSolver::try_lu(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  const int n = int(n_);
  scatter(a, dense_, stream);  // potrf overwrote part of the matrix before it stopped
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(handle_->h, n, n, dense_.data(), n, &lwork));
  if (workspace_.size() < std::size_t(lwork)) workspace_.allocate(std::size_t(lwork), stream);
  ensure_size(pivots_, std::size_t(n), stream);
  TESSERA_CUSOLVER_CHECK(
      cusolverDnDgetrf(handle_->h, n, n, dense_.data(), n, workspace_.data(), pivots_.data(), info_.data()));
  // The host drops pivots |u_kk| <= n * eps * max|a_ij| (exact zeros, getrf's info > 0, included).
  std::vector<double> diagonal(static_cast<std::size_t>(n_));
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(diagonal.data(), sizeof(double), dense_.data(), (n_ + 1) * sizeof(double),
                                       sizeof(double), std::size_t(n_), cudaMemcpyDeviceToHost, stream));
  const double tiny =
      double(n_) * std::numeric_limits<double>::epsilon() * device_max_abs(a.values.data(), a.nnz, stream);
  const int info = read_info(info_, stream);  // synchronises: `diagonal` is filled
  TESSERA_ASSERT(info >= 0, "cusolverDnDgetrf rejected argument ", -info);
  return info == 0 && std::all_of(diagonal.begin(), diagonal.end(), [&](double u) { return std::abs(u) > tiny; });
}

void DeviceCoarseSolver::factor_on_host(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  host_ = std::make_unique<DenseCoarseSolver>();
  host_->factor(tessera::cuda::download(a, stream));
  host_b_.assign(std::size_t(n_), 0.0);
  host_x_.assign(std::size_t(n_), 0.0);
  // The dense device copy is of no use now: give the memory back.
  dense_.release(), workspace_.release(), pivots_.release();
}

void DeviceCoarseSolver::solve(const double* b, double* x, cudaStream_t stream) const {
  if (kind_ == Kind::none) return;
  if (kind_ == Kind::host) return solve_on_host(b, x, stream);
  const int n = int(n_);
  if (explicit_inverse_) return dense_multiply(n_, dense_.data(), b, x, stream);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, b, std::size_t(n_) * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(handle_->h, stream));
  // potrs/getrs report only invalid arguments in info, which the sizes above rule out: it is
  // not read back, so the solve stays asynchronous.
  if (kind_ == Kind::cholesky)
    TESSERA_CUSOLVER_CHECK(
        cusolverDnDpotrs(handle_->h, CUBLAS_FILL_MODE_LOWER, n, 1, dense_.data(), n, x, n, info_.data()));
  else
    TESSERA_CUSOLVER_CHECK(
        cusolverDnDgetrs(handle_->h, CUBLAS_OP_N, n, 1, dense_.data(), n, pivots_.data(), x, n, info_.data()));
}

void DeviceCoarseSolver::solve_on_host(const double* b, double* x, cudaStream_t stream) const {
  const std::size_t bytes = host_b_.size() * sizeof(double);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(host_b_.data(), b, bytes, cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  host_->solve(host_b_, host_x_);
  // host_x_ is pageable: cudaMemcpyAsync from it returns once staged, so it may be reused.
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(x, host_x_.data(), bytes, cudaMemcpyHostToDevice, stream));
}

std::int64_t DeviceCoarseSolver::device_bytes() const {
  return std::int64_t(dense_.bytes() + workspace_.bytes() + pivots_.bytes() + info_.bytes());
}

}  // namespace tessera::amg::gpu
