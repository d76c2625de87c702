#pragma once
// DeviceBuffer<T>: an owning, stream-ordered device allocation (cudaMallocAsync from the
// device's default memory pool, so the allocations that SpGEMM's timing includes are cheap).
// Out-of-memory is a DeviceError that names the request and what is free, never a crash.
// DeviceMemory tracks current and peak bytes held through DeviceBuffer, for the peak-memory
// figures the benchmarks report.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "local/cuda/check.hpp"
#include "local/cuda/host_copy.hpp"

namespace tessera::cuda {

struct DeviceMemory {
  static std::int64_t current();
  static std::int64_t peak();
  static void reset_peak();  // peak := current
  static void add(std::int64_t bytes);
};

/// Bytes a DeviceBuffer could still get: the device's free memory plus what the default pool
/// holds unused (retain_pool_memory keeps freed memory there, invisible to cudaMemGetInfo).
std::int64_t available_device_bytes();

/// Allocates `bytes` on `stream`; throws DeviceError with the free/total figures if it fails.
void* device_allocate(std::size_t bytes, cudaStream_t stream);
void device_free(void* p, std::size_t bytes, cudaStream_t stream);

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n, cudaStream_t stream = nullptr) { allocate(n, stream); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }

  /// Drops the old contents and holds room for n elements.
  void allocate(std::size_t n, cudaStream_t stream = nullptr) {
    release();
    stream_ = stream;
    size_ = n;
    if (n) data_ = static_cast<T*>(device_allocate(n * sizeof(T), stream));
  }
  void release() {
    if (data_) device_free(data_, size_ * sizeof(T), stream_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  cudaStream_t stream() const { return stream_; }
  /// Frees on `stream` from now on, ordered after that stream's work: for a buffer handed to an
  /// owner whose work runs there. The caller orders the buffer's writes before that work.
  void release_on(cudaStream_t stream) { stream_ = stream; }

  /// Copy of `host` (copy_to_device: `host` may be reused at return; 8 MiB and more wait for
  /// `stream`).
  template <class Allocator>
  void upload(const std::vector<T, Allocator>& host, cudaStream_t stream = nullptr) {
    if (host.size() != size_) allocate(host.size(), stream);
    if (size_) copy_to_device(data_, host.data(), bytes(), stream);
  }
  /// Synchronous copy back (waits for `stream`), into a std::vector or a HostArray (which is
  /// not zero-filled first).
  template <class Container = std::vector<T>>
  Container download(cudaStream_t stream = nullptr) const {
    Container host;
    host.resize(size_);
    if (size_)
      copy_to_host(host.data(), data_, bytes(), stream);  // waits for the stream
    else
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }
  /// Fills every byte with `byte` (tests poison outputs with 0xff = NaN for floating types).
  void fill_bytes(int byte, cudaStream_t stream = nullptr) {
    if (size_) TESSERA_CUDA_CHECK(cudaMemsetAsync(data_, byte, bytes(), stream));
  }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(stream_, o.stream_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace tessera::cuda
