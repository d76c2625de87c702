#include <atomic>

#include "local/cuda/device_buffer.hpp"

namespace tessera::cuda {

namespace {
std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
}  // namespace

std::int64_t DeviceMemory::current() { return g_current.load(); }
std::int64_t DeviceMemory::peak() { return g_peak.load(); }
void DeviceMemory::reset_peak() { g_peak.store(g_current.load()); }
void DeviceMemory::add(std::int64_t bytes) {
  const std::int64_t now = g_current.fetch_add(bytes) + bytes;
  std::int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

std::int64_t available_device_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  TESSERA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  int device = 0;
  cudaMemPool_t pool = nullptr;
  std::uint64_t reserved = 0, used = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  TESSERA_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  TESSERA_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  return std::int64_t(free_bytes) + std::int64_t(reserved > used ? reserved - used : 0);
}

void* device_allocate(std::size_t bytes, cudaStream_t stream) {
  void* p = nullptr;
  const cudaError_t status = cudaMallocAsync(&p, bytes, stream);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state of a failed allocation
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw DeviceError(detail::concat("device allocation of ", bytes, " bytes failed (", cudaGetErrorString(status),
                                     "); ", free_bytes >> 20, " MiB free of ", total_bytes >> 20,
                                     " MiB: the problem does not fit on this GPU"));
  }
  DeviceMemory::add(static_cast<std::int64_t>(bytes));
  return p;
}

void device_free(void* p, std::size_t bytes, cudaStream_t stream) {
  cudaFreeAsync(p, stream);  // errors here are not actionable in a destructor
  DeviceMemory::add(-static_cast<std::int64_t>(bytes));
}

}  // namespace tessera::cuda
