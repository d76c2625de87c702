#include "local/cuda/fused_smoother.hpp"
#include "local/cuda/spmv_kernels.cuh"
#include "local/cuda/spmv_stream_kernel.cuh"

namespace tessera::cuda {
namespace {

template <class T>
struct ResidualEpilogue {
  const T* b;
  T* r;
  __device__ void operator()(std::int64_t i, T ax) const { r[i] = b[i] - ax; }
};

template <class T>
struct JacobiEpilogue {
  const T *x, *b, *dinv;
  T omega;
  T* x_new;
  __device__ void operator()(std::int64_t i, T ax) const { x_new[i] = x[i] + omega * dinv[i] * (b[i] - ax); }
};

// Columns are sorted, so the diagonal is found by binary search in the row.
template <class T>
__global__ void diagonal_inverse_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr,
                                        const std::int32_t* __restrict__ col, const T* __restrict__ val, T* dinv,
                                        unsigned long long* bad_rows) {
  const std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  std::int64_t lo = row_ptr[r], hi = row_ptr[r + 1];
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (col[mid] < r) lo = mid + 1; else hi = mid;
  }
  const T d = (lo < row_ptr[r + 1] && col[lo] == r) ? val[lo] : T(0);
  if (d == T(0)) atomicAdd(bad_rows, 1ull);
  dinv[r] = d == T(0) ? T(0) : T(1) / d;
}

template <class T>
void check(const SpmvPlan& plan, const DeviceCsr<T>& a, const char* who) {
  require_plan_of(plan, a, who);
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "smoother needs a square matrix, got ", a.rows, " x ", a.cols);
}

}  // namespace

template <class T>
DeviceBuffer<T> diagonal_inverse(const DeviceCsr<T>& a, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "diagonal inverse needs a square matrix, got ", a.rows, " x ", a.cols);
  DeviceBuffer<T> dinv(static_cast<std::size_t>(a.rows), stream);
  if (a.rows == 0) return dinv;
  DeviceBuffer<unsigned long long> bad(1, stream);
  bad.fill_bytes(0, stream);
  diagonal_inverse_kernel<<<kernels::blocks_for(a.rows), kernels::kBlock, 0, stream>>>(
      a.rows, a.row_ptr.data(), a.col_idx.data(), a.values.data(), dinv.data(), bad.data());
  TESSERA_CHECK_LAUNCH();
  const unsigned long long bad_rows = bad.download(stream)[0];
  TESSERA_REQUIRE_INPUT(bad_rows == 0, "Jacobi needs a nonzero diagonal: ", bad_rows, " of ", a.rows,
                        " rows have a missing or zero diagonal entry");
  return dinv;
}

template <class T>
void residual(const SpmvPlan& plan, const DeviceCsr<T>& a, const T* x, const T* b, T* r, cudaStream_t stream) {
  check(plan, a, "residual");
  TESSERA_REQUIRE_INPUT(r != x || a.rows == 0, "residual: r must not alias x (x is read at every column)");
  kernels::launch_csr_rows(plan, a, x, ResidualEpilogue<T>{b, r}, stream);
}

template <class T>
void jacobi_sweep(const SpmvPlan& plan, const DeviceCsr<T>& a, const T* dinv, T omega, const T* x, const T* b,
                  T* x_new, cudaStream_t stream) {
  check(plan, a, "jacobi_sweep");
  TESSERA_REQUIRE_INPUT(x_new != x || a.rows == 0,
                        "jacobi_sweep: x_new must not alias x (other rows still read the old x)");
  kernels::launch_csr_rows(plan, a, x, JacobiEpilogue<T>{x, b, dinv, omega, x_new}, stream);
}

#define TESSERA_INSTANTIATE_SMOOTHER(T)                                                                       \
  template DeviceBuffer<T> diagonal_inverse<T>(const DeviceCsr<T>&, cudaStream_t);                            \
  template void residual<T>(const SpmvPlan&, const DeviceCsr<T>&, const T*, const T*, T*, cudaStream_t);       \
  template void jacobi_sweep<T>(const SpmvPlan&, const DeviceCsr<T>&, const T*, T, const T*, const T*, T*,     \
                                cudaStream_t);
TESSERA_INSTANTIATE_SMOOTHER(double)
TESSERA_INSTANTIATE_SMOOTHER(float)
#undef TESSERA_INSTANTIATE_SMOOTHER

}  // namespace tessera::cuda
