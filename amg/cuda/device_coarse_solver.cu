#include "amg/cuda/device_coarse_solver.hpp"

#include <cusolverDn.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

void check_cusolver(cusolverStatus_t status, const char* call, int line) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw DeviceError(detail::concat(call, " failed at ", __FILE__, ":", line, ": cuSOLVER status ", int(status)));
}
#define TESSERA_CUSOLVER_CHECK(call) check_cusolver((call), #call, __LINE__)

/// Keeps `buffer` when it already holds n elements: a re-setup of the same level reallocates nothing.
template <class T>
void ensure_size(tessera::cuda::DeviceBuffer<T>& buffer, std::size_t n, cudaStream_t stream) {
  if (buffer.size() != n) buffer.allocate(n, stream);
}

/// dense(col, row) = a(row, col), column-major with leading dimension n (dense zeroed before).
__global__ void scatter_to_dense(std::int64_t n, const std::int64_t* row_ptr, const std::int32_t* col_idx,
                                 const double* values, double* dense) {
  for (std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; row < n;
       row += std::int64_t(gridDim.x) * blockDim.x)
    for (std::int64_t p = row_ptr[row]; p < row_ptr[row + 1]; ++p) dense[col_idx[p] * n + row] = values[p];
}

struct AbsValue {
  __host__ __device__ double operator()(double v) const { return fabs(v); }
};

/// max |a_ij|: the scale of the host's drop tolerance n * eps * max|a_ij|.
double max_abs_value(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  const double* v = a.values.data();
  return thrust::transform_reduce(thrust::cuda::par.on(stream), v, v + a.nnz, AbsValue{}, 0.0,
                                  thrust::maximum<double>());
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

void DeviceCoarseSolver::factor(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "device coarse solver: the operator must be square, it is ", a.rows, "x",
                        a.cols);
  // cuSOLVER's legacy API takes int sizes, and n*n entries are indexed in int by its kernels.
  TESSERA_REQUIRE_INPUT(a.rows <= 46340, "device coarse solver: ", a.rows,
                        " rows is too many for a dense factorisation (at most 46340)");
  n_ = a.rows;
  host_.reset();
  if (n_ == 0) {
    kind_ = Kind::none, method_ = "none (0 rows)";
    return;
  }
  if (!handle_) handle_ = std::make_unique<Handle>();
  TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(handle_->h, stream));
  ensure_size(dense_, std::size_t(n_ * n_), stream);
  ensure_size(info_, 1, stream);
  if (try_cholesky(a, stream)) {
    kind_ = Kind::cholesky, method_ = "cholesky (cuSOLVER)";
  } else if (try_lu(a, stream)) {
    kind_ = Kind::lu, method_ = "lu (cuSOLVER)";
  } else {
    factor_on_host(a, stream);
    kind_ = Kind::host;
    method_ = host_->method() + " (host fallback: cuSOLVER LU met a pivot below n*eps*max|a_ij|)";
  }
}

void DeviceCoarseSolver::scatter(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  TESSERA_CUDA_CHECK(cudaMemsetAsync(dense_.data(), 0, dense_.bytes(), stream));
  const int threads = 256;
  const int blocks = int(std::min<std::int64_t>((n_ + threads - 1) / threads, 4096));
  scatter_to_dense<<<blocks, threads, 0, stream>>>(n_, a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                                                   dense_.data());
  TESSERA_CHECK_LAUNCH();
}

bool DeviceCoarseSolver::try_cholesky(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  const int n = int(n_);
  scatter(a, stream);
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

bool DeviceCoarseSolver::try_lu(const tessera::cuda::DeviceCsr<double>& a, cudaStream_t stream) {
  const int n = int(n_);
  scatter(a, stream);  // potrf overwrote part of the matrix before it stopped
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
  const double tiny = double(n_) * std::numeric_limits<double>::epsilon() * max_abs_value(a, stream);
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
