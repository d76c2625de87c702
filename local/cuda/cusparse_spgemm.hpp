#pragma once
// cuSPARSE SpGEMM baseline (C = A*B, CSR, FP64 or FP32) for the benchmarks and the tests:
// each algorithm (ALG1; ALG2 and ALG3 sized by cusparseSpGEMM_estimateMemory with a chunk
// fraction) is timed with all its allocations (work buffers and the output), and its peak
// memory measured through DeviceBuffer. A failure is a status, never an exception, so a
// benchmark reports "cuSPARSE ALG1: INSUFFICIENT_RESOURCES" and goes on.
// cuSPARSE's SpGEMM takes int32 row offsets: convert with to_int32_offsets (not timed).
#include <cstdint>
#include <string>

#include "local/cuda/device_matrix.hpp"

namespace tessera::cuda {

enum class CusparseSpgemmAlg { alg1, alg2, alg3 };
enum class CusparseSpgemmStatus { success, insufficient_resources, error };

const char* to_string(CusparseSpgemmAlg alg);
const char* to_string(CusparseSpgemmStatus status);

/// CSR with int32 offsets as cuSPARSE's SpGEMM wants it. The values are owned here too.
template <class T>
struct DeviceCsr32 {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  DeviceBuffer<std::int32_t> row_ptr, col_idx;
  DeviceBuffer<T> values;
};

/// Copy of `a` with int32 offsets; InputError if nnz does not fit in int32.
template <class T>
DeviceCsr32<T> to_int32_offsets(const DeviceCsr<T>& a, cudaStream_t stream = nullptr);

/// Host copy (int64 offsets) of a cuSPARSE result, for checks.
template <class T>
Csr<T> download(const DeviceCsr32<T>& a, cudaStream_t stream = nullptr);

template <class T>
struct CusparseSpgemmRun {
  CusparseSpgemmAlg alg = CusparseSpgemmAlg::alg1;
  CusparseSpgemmStatus status = CusparseSpgemmStatus::error;
  std::string message;          // empty on success
  double milliseconds = 0;      // whole product, allocations included (device events)
  std::int64_t peak_bytes = 0;  // work buffers + output, above what was held before
  std::int64_t num_products = 0;
  DeviceCsr32<T> c;             // the product (on success)
};

struct CusparseSpgemmOptions {
  CusparseSpgemmAlg alg = CusparseSpgemmAlg::alg1;
  float chunk_fraction = 0.2f;  // ALG2/ALG3: share of the products processed per chunk
};

/// C = A*B with cuSPARSE; every failure (CUDA or cuSPARSE, out of memory included) is
/// returned in the status. The cuSPARSE handle is created before the timed region.
template <class T>
CusparseSpgemmRun<T> cusparse_spgemm(const DeviceCsr32<T>& a, const DeviceCsr32<T>& b,
                                     const CusparseSpgemmOptions& options = {}, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
