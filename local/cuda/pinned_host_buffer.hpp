#pragma once
// PinnedHostBuffer<T>: an owning page-locked host allocation, the target or source of the small
// copies between the device and the host that must stay asynchronous: the Krylov solvers'
// scalars, read back once an iteration. A pageable copy would block, or go through a staging
// buffer, and add its latency to every iteration.
//
// Blocks of up to kPooledPinnedBytes come from a process-wide pool and go back to it, for the
// next buffer of their size class: a solve allocates its scalars' mirror, and cudaMallocHost of
// 32 bytes took 1.2 ms (cudaFreeHost 0.6 ms) on the H100 hosts whenever no other small pinned
// block was alive (the driver, presumably, mapping a fresh region and unmapping it again): 1.8 ms
// of a 22 ms one-GPU solve (docs/performance.md, eightieth session). Larger blocks are cudaMallocHost'd and
// freed as asked. The owner of a buffer makes sure no copy into or out of it is in flight when
// it is destroyed, as cudaFreeHost required.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace tessera::cuda {

/// The largest block the pool keeps: the solvers' scalars and coefficients are far smaller.
constexpr std::size_t kPooledPinnedBytes = std::size_t(1) << 20;

namespace detail {
/// `bytes` of page-locked memory (at least 1): a pooled block where bytes <= kPooledPinnedBytes.
/// Throws DeviceError where the driver refuses.
void* pinned_allocate(std::size_t bytes);
/// Gives back what pinned_allocate(bytes) returned.
void pinned_release(void* block, std::size_t bytes) noexcept;
}  // namespace detail

template <class T>
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  /// n elements, not initialised.
  explicit PinnedHostBuffer(std::size_t n) : size_(n) {
    if (n) data_ = static_cast<T*>(detail::pinned_allocate(n * sizeof(T)));
  }
  ~PinnedHostBuffer() {
    if (data_) detail::pinned_release(data_, size_ * sizeof(T));
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
