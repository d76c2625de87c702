#include <cusparse.h>

#include <limits>
#include <type_traits>

#include "local/cuda/cusparse_spmv.hpp"

#define TESSERA_CUSPARSE_CHECK(call)                                                                      \
  do {                                                                                                    \
    const cusparseStatus_t tessera_sp_ = (call);                                                          \
    if (tessera_sp_ != CUSPARSE_STATUS_SUCCESS)                                                           \
      throw ::tessera::DeviceError(::tessera::detail::concat(#call, " failed at ", __FILE__, ":", __LINE__, \
                                                             ": ", cusparseGetErrorString(tessera_sp_),   \
                                                             tessera_sp_ == CUSPARSE_STATUS_NOT_SUPPORTED \
                                                                 ? " (not supported)"                      \
                                                                 : ""));                                   \
  } while (0)

namespace tessera::cuda {
namespace {

template <class T>
constexpr cudaDataType value_type() { return std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F; }

__global__ void narrow_offsets_kernel(std::int64_t n, const std::int64_t* in, std::int32_t* out) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<std::int32_t>(in[i]);
}

// The handle, the CSR descriptor over the caller's arrays, and the narrowed offsets.
template <class T>
struct CsrDescriptor {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat = nullptr;
  DeviceBuffer<std::int32_t> offsets32;

  CsrDescriptor(const DeviceCsr<T>& a, cudaStream_t stream) {
    TESSERA_CUSPARSE_CHECK(cusparseCreate(&handle));
    TESSERA_CUSPARSE_CHECK(cusparseSetStream(handle, stream));
    void* vals = const_cast<T*>(a.values.data());
    if (a.nnz < std::numeric_limits<std::int32_t>::max()) {
      offsets32.allocate(static_cast<std::size_t>(a.rows + 1), stream);
      narrow_offsets_kernel<<<static_cast<unsigned>((a.rows + 256) / 256), 256, 0, stream>>>(
          a.rows + 1, a.row_ptr.data(), offsets32.data());
      TESSERA_CHECK_LAUNCH();
      TESSERA_CUSPARSE_CHECK(cusparseCreateCsr(&mat, a.rows, a.cols, a.nnz, offsets32.data(),
                                               const_cast<std::int32_t*>(a.col_idx.data()), vals, CUSPARSE_INDEX_32I,
                                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, value_type<T>()));
    } else {
      throw DeviceError(detail::concat("cuSPARSE baseline: nnz ", a.nnz,
                                       " needs 64-bit column indices; not set up in this benchmark"));
    }
  }
  ~CsrDescriptor() {
    if (mat) cusparseDestroySpMat(mat);
    if (handle) cusparseDestroy(handle);
  }
};

}  // namespace

template <class T>
struct CusparseSpmv<T>::Impl {
  CsrDescriptor<T> a;
  cusparseDnVecDescr_t x = nullptr, y = nullptr;
  cusparseSpMVAlg_t alg;
  DeviceBuffer<char> work;
  std::string name;
  Impl(const DeviceCsr<T>& m, cudaStream_t s) : a(m, s) {}
  ~Impl() {
    if (x) cusparseDestroyDnVec(x);
    if (y) cusparseDestroyDnVec(y);
  }
};

template <class T>
CusparseSpmv<T>::CusparseSpmv(const DeviceCsr<T>& a, const std::string& alg, const T* x, T* y, cudaStream_t stream)
    : impl_(std::make_unique<Impl>(a, stream)) {
  TESSERA_REQUIRE_INPUT(alg == "default" || alg == "csr_alg2", "cuSPARSE SpMV algorithm must be default or csr_alg2, got ",
                        alg);
  Impl& d = *impl_;
  d.alg = alg == "default" ? CUSPARSE_SPMV_ALG_DEFAULT : CUSPARSE_SPMV_CSR_ALG2;
  d.name = "cusparse-spmv-" + alg;
  TESSERA_CUSPARSE_CHECK(cusparseCreateDnVec(&d.x, a.cols, const_cast<T*>(x), value_type<T>()));
  TESSERA_CUSPARSE_CHECK(cusparseCreateDnVec(&d.y, a.rows, y, value_type<T>()));
  const T one = 1, zero = 0;
  std::size_t bytes = 0;
  TESSERA_CUSPARSE_CHECK(cusparseSpMV_bufferSize(d.a.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a.mat, d.x,
                                                 &zero, d.y, value_type<T>(), d.alg, &bytes));
  d.work.allocate(bytes, stream);
}

template <class T>
CusparseSpmv<T>::~CusparseSpmv() = default;

template <class T>
void CusparseSpmv<T>::run(T alpha, T beta) {
  Impl& d = *impl_;
  TESSERA_CUSPARSE_CHECK(cusparseSpMV(d.a.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, d.a.mat, d.x, &beta, d.y,
                                      value_type<T>(), d.alg, d.work.data()));
}

template <class T>
const std::string& CusparseSpmv<T>::name() const { return impl_->name; }

template <class T>
struct CusparseSpmm<T>::Impl {
  CsrDescriptor<T> a;
  cusparseDnMatDescr_t x = nullptr, y = nullptr;
  cusparseSpMMAlg_t alg;
  DeviceBuffer<char> work;
  std::string name;
  Impl(const DeviceCsr<T>& m, cudaStream_t s) : a(m, s) {}
  ~Impl() {
    if (x) cusparseDestroyDnMat(x);
    if (y) cusparseDestroyDnMat(y);
  }
};

template <class T>
CusparseSpmm<T>::CusparseSpmm(const DeviceCsr<T>& a, std::int64_t k, Layout layout, const std::string& alg, const T* x,
                              T* y, cudaStream_t stream)
    : impl_(std::make_unique<Impl>(a, stream)) {
  Impl& d = *impl_;
  if (alg == "default") d.alg = CUSPARSE_SPMM_ALG_DEFAULT;
  else if (alg == "csr_alg1") d.alg = CUSPARSE_SPMM_CSR_ALG1;
  else if (alg == "csr_alg2") d.alg = CUSPARSE_SPMM_CSR_ALG2;
  else if (alg == "csr_alg3") d.alg = CUSPARSE_SPMM_CSR_ALG3;
  else throw InputError("cuSPARSE SpMM algorithm must be default, csr_alg1, csr_alg2 or csr_alg3, got " + alg);
  d.name = "cusparse-spmm-" + alg;
  const bool row_major = layout == Layout::row_major;
  const cusparseOrder_t order = row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
  TESSERA_CUSPARSE_CHECK(cusparseCreateDnMat(&d.x, a.cols, k, row_major ? k : a.cols, const_cast<T*>(x),
                                             value_type<T>(), order));
  TESSERA_CUSPARSE_CHECK(cusparseCreateDnMat(&d.y, a.rows, k, row_major ? k : a.rows, y, value_type<T>(), order));
  const T one = 1, zero = 0;
  std::size_t bytes = 0;
  TESSERA_CUSPARSE_CHECK(cusparseSpMM_bufferSize(d.a.handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                 CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a.mat, d.x, &zero, d.y,
                                                 value_type<T>(), d.alg, &bytes));
  d.work.allocate(bytes, stream);
  if (d.alg == CUSPARSE_SPMM_CSR_ALG3)  // ALG3 requires its preprocessing step once
    TESSERA_CUSPARSE_CHECK(cusparseSpMM_preprocess(d.a.handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                   CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a.mat, d.x, &zero, d.y,
                                                   value_type<T>(), d.alg, d.work.data()));
}

template <class T>
CusparseSpmm<T>::~CusparseSpmm() = default;

template <class T>
void CusparseSpmm<T>::run(T alpha, T beta) {
  Impl& d = *impl_;
  TESSERA_CUSPARSE_CHECK(cusparseSpMM(d.a.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      &alpha, d.a.mat, d.x, &beta, d.y, value_type<T>(), d.alg, d.work.data()));
}

template <class T>
const std::string& CusparseSpmm<T>::name() const { return impl_->name; }

template class CusparseSpmv<double>;
template class CusparseSpmv<float>;
template class CusparseSpmm<double>;
template class CusparseSpmm<float>;

}  // namespace tessera::cuda
