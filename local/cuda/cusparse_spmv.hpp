#pragma once
// cuSPARSE baselines on the same device arrays as Tessera's kernels (values and column
// indices shared, not copied). cuSPARSE needs row offsets and column indices of one index
// type, so the int64 row offsets are narrowed to an int32 copy (fewer bytes for cuSPARSE to
// read: the comparison does not favour Tessera); nnz >= 2^31 is a DeviceError (would need
// int64 column indices, not set up).
// The work buffer is allocated once at construction, outside the timed calls.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "local/cuda/device_matrix.hpp"
#include "local/formats/dense.hpp"

namespace tessera::cuda {

/// y = alpha*A*x + beta*y with cusparseSpMV. alg: "default" or "csr_alg2".
template <class T>
class CusparseSpmv {
 public:
  CusparseSpmv(const DeviceCsr<T>& a, const std::string& alg, const T* x, T* y, cudaStream_t stream = nullptr);
  ~CusparseSpmv();
  void run(T alpha, T beta);
  const std::string& name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Y = alpha*A*X + beta*Y with cusparseSpMM, X and Y dense in `layout` (leading dimension k
/// row-major, rows column-major). alg: "default", "csr_alg1", "csr_alg2" or "csr_alg3";
/// a combination cuSPARSE rejects is a DeviceError whose message contains "not supported".
template <class T>
class CusparseSpmm {
 public:
  CusparseSpmm(const DeviceCsr<T>& a, std::int64_t k, Layout layout, const std::string& alg, const T* x, T* y,
               cudaStream_t stream = nullptr);
  ~CusparseSpmm();
  void run(T alpha, T beta);
  const std::string& name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::cuda
