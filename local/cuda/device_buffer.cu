#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>

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

namespace {

/// Host ranges at least this large are pinned for their copy. On an H200 host,
/// cudaHostRegister of (transparent huge page) heap memory runs at 60-80 GB/s and unregistering
/// at about 85, and a pinned copy at 55 GB/s either way, where a pageable one reaches 9 GB/s to
/// the device and 20 from it (docs/performance.md, fifteenth session): the AMG setup's uploads
/// of levels and operands are hundreds of megabytes each.
constexpr std::size_t kPinnedCopyBytes = std::size_t(8) << 20;

/// Pins [host, host + bytes) while it lives, where the driver accepts (it refuses a range that
/// overlaps memory pinned already, or a platform that cannot pin): a refused copy runs as it
/// would have without this class.
class PinnedRange {
 public:
  PinnedRange(const void* host, std::size_t bytes) : host_(const_cast<void*>(host)) {
    pinned_ = cudaHostRegister(host_, bytes, cudaHostRegisterDefault) == cudaSuccess;
    if (!pinned_) cudaGetLastError();  // not sticky: clear it so that later checks do not see it
  }
  ~PinnedRange() {
    if (pinned_) cudaHostUnregister(host_);
  }
  PinnedRange(const PinnedRange&) = delete;
  PinnedRange& operator=(const PinnedRange&) = delete;

 private:
  void* host_;
  bool pinned_ = false;
};

/// TESSERA_PIN_HOST_COPIES=0 turns the pinning off (the ablation of docs/performance.md).
bool pinning_enabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("TESSERA_PIN_HOST_COPIES");
    return !(env && std::string(env) == "0");
  }();
  return enabled;
}

std::optional<PinnedRange> pin_if_large(const void* host, std::size_t bytes) {
  if (bytes < kPinnedCopyBytes || !pinning_enabled()) return std::nullopt;
  return std::optional<PinnedRange>(std::in_place, host, bytes);
}

}  // namespace

void copy_to_device(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  const std::optional<PinnedRange> pin = pin_if_large(host, bytes);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
  // Before the range is unpinned; and where `host` was pinned already (cudaMallocHost memory,
  // which the driver will not register again) the copy is truly asynchronous: the wait keeps
  // "reusable at return", with the pinning on or off, as the header promises for large ranges.
  if (bytes >= kPinnedCopyBytes) TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_to_host(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  const std::optional<PinnedRange> pin = pin_if_large(host, bytes);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void device_free(void* p, std::size_t bytes, cudaStream_t stream) {
  cudaFreeAsync(p, stream);  // errors here are not actionable in a destructor
  DeviceMemory::add(-static_cast<std::int64_t>(bytes));
}

}  // namespace tessera::cuda
