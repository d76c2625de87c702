// cuSPARSE SpGEMM, following the sequence of the cuSPARSE samples (spgemm, spgemm_mem):
// workEstimation (x2), [ALG2/3: getNumProducts, estimateMemory (x2)], compute (x2), getSize,
// allocate C, CsrSetPointers, copy.
#include <cusparse.h>

#include <type_traits>

#include "local/cuda/cub_call.cuh"
#include "local/cuda/cusparse_spgemm.hpp"

namespace tessera::cuda {
namespace {

/// Thrown inside cusparse_spgemm only, turned into a status there.
struct CusparseFailure {
  CusparseSpgemmStatus status;
  std::string message;
};

void check(cusparseStatus_t st, const char* call) {
  if (st == CUSPARSE_STATUS_SUCCESS) return;
  throw CusparseFailure{st == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES ? CusparseSpgemmStatus::insufficient_resources
                                                                     : CusparseSpgemmStatus::error,
                        detail::concat(call, ": ", cusparseGetErrorString(st))};
}
#define TESSERA_CUSPARSE_TRY(call) check((call), #call)

cusparseSpGEMMAlg_t to_cusparse(CusparseSpgemmAlg alg) {
  switch (alg) {
    case CusparseSpgemmAlg::alg2: return CUSPARSE_SPGEMM_ALG2;
    case CusparseSpgemmAlg::alg3: return CUSPARSE_SPGEMM_ALG3;
    default: return CUSPARSE_SPGEMM_ALG1;
  }
}

__global__ void narrow_offsets(const std::int64_t* in, std::int64_t n, std::int32_t* out) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<std::int32_t>(in[i]);
}

template <class T>
cusparseSpMatDescr_t make_descr(const DeviceCsr32<T>& m) {
  constexpr cudaDataType type = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
  cusparseSpMatDescr_t d = nullptr;
  TESSERA_CUSPARSE_TRY(cusparseCreateCsr(&d, m.rows, m.cols, m.nnz, const_cast<std::int32_t*>(m.row_ptr.data()),
                                         const_cast<std::int32_t*>(m.col_idx.data()), const_cast<T*>(m.values.data()),
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
  return d;
}

/// Owns the handle and descriptors of one run.
struct CusparseSession {
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t a = nullptr, b = nullptr, c = nullptr;
  cusparseSpGEMMDescr_t spgemm = nullptr;
  ~CusparseSession() {
    if (spgemm) cusparseSpGEMM_destroyDescr(spgemm);
    if (c) cusparseDestroySpMat(c);
    if (b) cusparseDestroySpMat(b);
    if (a) cusparseDestroySpMat(a);
    if (handle) cusparseDestroy(handle);
  }
};

template <class T>
void run_spgemm(CusparseSession& cs, const DeviceCsr32<T>& a, const DeviceCsr32<T>& b,
                const CusparseSpgemmOptions& options, cudaStream_t s, CusparseSpgemmRun<T>& run) {
  constexpr cudaDataType type = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
  const cusparseSpGEMMAlg_t alg = to_cusparse(options.alg);
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const T alpha = 1, beta = 0;
  std::size_t bytes1 = 0, bytes2 = 0, bytes3 = 0;
  TESSERA_CUSPARSE_TRY(cusparseSpGEMM_workEstimation(cs.handle, op, op, &alpha, cs.a, cs.b, &beta, cs.c, type, alg,
                                                     cs.spgemm, &bytes1, nullptr));
  DeviceBuffer<unsigned char> buffer1(bytes1, s);
  TESSERA_CUSPARSE_TRY(cusparseSpGEMM_workEstimation(cs.handle, op, op, &alpha, cs.a, cs.b, &beta, cs.c, type, alg,
                                                     cs.spgemm, &bytes1, buffer1.data()));
  if (options.alg != CusparseSpgemmAlg::alg1) {
    TESSERA_CUSPARSE_TRY(cusparseSpGEMM_getNumProducts(cs.spgemm, &run.num_products));
    TESSERA_CUSPARSE_TRY(cusparseSpGEMM_estimateMemory(cs.handle, op, op, &alpha, cs.a, cs.b, &beta, cs.c, type, alg,
                                                       cs.spgemm, options.chunk_fraction, &bytes3, nullptr, nullptr));
    DeviceBuffer<unsigned char> buffer3(bytes3, s);
    TESSERA_CUSPARSE_TRY(cusparseSpGEMM_estimateMemory(cs.handle, op, op, &alpha, cs.a, cs.b, &beta, cs.c, type, alg,
                                                       cs.spgemm, options.chunk_fraction, &bytes3, buffer3.data(),
                                                       &bytes2));
  } else {
    TESSERA_CUSPARSE_TRY(cusparseSpGEMM_compute(cs.handle, op, op, &alpha, cs.a, cs.b, &beta, cs.c, type, alg,
                                                cs.spgemm, &bytes2, nullptr));
  }
  DeviceBuffer<unsigned char> buffer2(bytes2, s);
  TESSERA_CUSPARSE_TRY(cusparseSpGEMM_compute(cs.handle, op, op, &alpha, cs.a, cs.b, &beta, cs.c, type, alg,
                                              cs.spgemm, &bytes2, buffer2.data()));
  std::int64_t rows = 0, cols = 0, nnz = 0;
  TESSERA_CUSPARSE_TRY(cusparseSpMatGetSize(cs.c, &rows, &cols, &nnz));
  run.c.rows = rows;
  run.c.cols = cols;
  run.c.nnz = nnz;
  run.c.row_ptr.allocate(rows + 1, s);
  run.c.col_idx.allocate(nnz, s);
  run.c.values.allocate(nnz, s);
  TESSERA_CUSPARSE_TRY(cusparseCsrSetPointers(cs.c, run.c.row_ptr.data(), run.c.col_idx.data(), run.c.values.data()));
  TESSERA_CUSPARSE_TRY(cusparseSpGEMM_copy(cs.handle, op, op, &alpha, cs.a, cs.b, &beta, cs.c, type, alg, cs.spgemm));
}

}  // namespace

const char* to_string(CusparseSpgemmAlg alg) {
  switch (alg) {
    case CusparseSpgemmAlg::alg2: return "ALG2";
    case CusparseSpgemmAlg::alg3: return "ALG3";
    default: return "ALG1";
  }
}

const char* to_string(CusparseSpgemmStatus status) {
  switch (status) {
    case CusparseSpgemmStatus::success: return "success";
    case CusparseSpgemmStatus::insufficient_resources: return "INSUFFICIENT_RESOURCES";
    default: return "error";
  }
}

template <class T>
DeviceCsr32<T> to_int32_offsets(const DeviceCsr<T>& a, cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(a.nnz < (std::int64_t{1} << 31), "cuSPARSE SpGEMM needs int32 offsets; the matrix has ",
                        a.nnz, " entries");
  DeviceCsr32<T> out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.nnz = a.nnz;
  out.row_ptr.allocate(a.rows + 1, s);
  narrow_offsets<<<grid_for(a.rows + 1, 256), 256, 0, s>>>(a.row_ptr.data(), a.rows + 1, out.row_ptr.data());
  TESSERA_CHECK_LAUNCH();
  out.col_idx.allocate(a.nnz, s);
  out.values.allocate(a.nnz, s);
  if (a.nnz) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(out.col_idx.data(), a.col_idx.data(), out.col_idx.bytes(),
                                       cudaMemcpyDeviceToDevice, s));
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(out.values.data(), a.values.data(), out.values.bytes(),
                                       cudaMemcpyDeviceToDevice, s));
  }
  return out;
}

template <class T>
Csr<T> download(const DeviceCsr32<T>& a, cudaStream_t s) {
  Csr<T> h;
  h.rows = a.rows;
  h.cols = a.cols;
  const auto ptr = a.row_ptr.download(s);
  h.row_ptr.assign(ptr.begin(), ptr.end());
  if (h.row_ptr.empty()) h.row_ptr.assign(1, 0);
  h.col_idx = a.col_idx.template download<HostArray<std::int32_t>>(s);
  h.values = a.values.template download<HostArray<T>>(s);
  return h;
}

template <class T>
CusparseSpgemmRun<T> cusparse_spgemm(const DeviceCsr32<T>& a, const DeviceCsr32<T>& b,
                                     const CusparseSpgemmOptions& options, cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "cuSPARSE SpGEMM: A.cols (", a.cols, ") != B.rows (", b.rows, ")");
  CusparseSpgemmRun<T> run;
  run.alg = options.alg;
  retain_pool_memory();  // same allocator behaviour as Tessera's SpGEMM
  cudaEvent_t start = nullptr, stop = nullptr;
  TESSERA_CUDA_CHECK(cudaEventCreate(&start));
  TESSERA_CUDA_CHECK(cudaEventCreate(&stop));
  try {
    CusparseSession cs;
    TESSERA_CUSPARSE_TRY(cusparseCreate(&cs.handle));
    TESSERA_CUSPARSE_TRY(cusparseSetStream(cs.handle, s));
    cs.a = make_descr(a);
    cs.b = make_descr(b);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    const std::int64_t held_before = DeviceMemory::current();
    DeviceMemory::reset_peak();
    TESSERA_CUDA_CHECK(cudaEventRecord(start, s));
    constexpr cudaDataType type = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
    TESSERA_CUSPARSE_TRY(cusparseCreateCsr(&cs.c, a.rows, b.cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
    TESSERA_CUSPARSE_TRY(cusparseSpGEMM_createDescr(&cs.spgemm));
    run_spgemm(cs, a, b, options, s, run);
    TESSERA_CUDA_CHECK(cudaEventRecord(stop, s));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    run.milliseconds = ms;
    run.peak_bytes = DeviceMemory::peak() - held_before;
    run.status = CusparseSpgemmStatus::success;
  } catch (const CusparseFailure& f) {
    run.status = f.status;
    run.message = f.message;
  } catch (const DeviceError& e) {  // our allocation of its buffers failed: out of memory
    run.status = CusparseSpgemmStatus::insufficient_resources;
    run.message = e.what();
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (run.status != CusparseSpgemmStatus::success) run.c = DeviceCsr32<T>{};
  return run;
}

template DeviceCsr32<double> to_int32_offsets(const DeviceCsr<double>&, cudaStream_t);
template DeviceCsr32<float> to_int32_offsets(const DeviceCsr<float>&, cudaStream_t);
template Csr<double> download(const DeviceCsr32<double>&, cudaStream_t);
template Csr<float> download(const DeviceCsr32<float>&, cudaStream_t);
template CusparseSpgemmRun<double> cusparse_spgemm(const DeviceCsr32<double>&, const DeviceCsr32<double>&,
                                                   const CusparseSpgemmOptions&, cudaStream_t);
template CusparseSpgemmRun<float> cusparse_spgemm(const DeviceCsr32<float>&, const DeviceCsr32<float>&,
                                                  const CusparseSpgemmOptions&, cudaStream_t);

}  // namespace tessera::cuda
