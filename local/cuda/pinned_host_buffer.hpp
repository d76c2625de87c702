#pragma once
// PinnedHostBuffer<T>: an owning page-locked host allocation (cudaMallocHost), the target or
// source of the small copies between the device and the host that must stay asynchronous: the
// Krylov solvers' scalars, read back once an iteration. A pageable copy would block, or go
// through a staging buffer, and add its latency to every iteration.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "local/cuda/check.hpp"

namespace tessera::cuda {

template <class T>
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  /// n elements, not initialised.
  explicit PinnedHostBuffer(std::size_t n) : size_(n) {
    void* host = nullptr;
    if (n) TESSERA_CUDA_CHECK(cudaMallocHost(&host, n * sizeof(T)));
    data_ = static_cast<T*>(host);
  }
  ~PinnedHostBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer(PinnedHostBuffer&& o) noexcept { swap(o); }
  PinnedHostBuffer& operator=(PinnedHostBuffer&& o) noexcept {
    PinnedHostBuffer(std::move(o)).swap(*this);
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  void swap(PinnedHostBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tessera::cuda
