#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "local/core/host_ranges.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/host_copy.hpp"

namespace tessera::cuda {

namespace {

/// Copies at least this large take the chosen path; below it, pinning or staging costs more than
/// the pageable copy it would save.
constexpr std::size_t kLargeCopyBytes = std::size_t(8) << 20;
/// A staging chunk: its DMA (0.6 ms at 55 GB/s) is short against the host threads' copy of it,
/// which the other chunk's DMA overlaps.
constexpr std::size_t kChunkBytes = std::size_t(32) << 20;
/// Host threads from which the automatic path stages: measured faster with 4 and 16, slower with 1.
constexpr int kStagingThreads = 4;
/// Bytes a host thread copies at least: starting threads costs microseconds.
constexpr std::int64_t kMinBytesPerThread = std::int64_t(1) << 20;

constexpr int kUnset = -1;
std::atomic<int> g_path{kUnset};

HostCopyPath path_from_environment() {
  const char* env = std::getenv("TESSERA_HOST_COPIES");
  return env && *env ? host_copy_path_from_name(env) : HostCopyPath::automatic;
}

/// Two pinned chunks and an event each (its last DMA), kept for the process's life: pinned
/// memory is slow to allocate, and freeing it from a static destructor would run after the CUDA
/// runtime's own teardown. One copy uses them at a time, and every copy returns with no DMA of
/// them in flight.
class StagingChunks {
 public:
  /// nullptr where the chunks cannot be pinned (a pinned-memory limit): copies then register
  /// their host range instead.
  static StagingChunks* get() {
    static StagingChunks* chunks = [] {
      auto* c = new StagingChunks();
      if (c->allocated()) return c;
      delete c;
      return static_cast<StagingChunks*>(nullptr);
    }();
    return chunks;
  }
  std::mutex& in_use() { return mutex_; }
  char* chunk(std::size_t i) { return chunk_[i % 2]; }
  cudaEvent_t dma_done(std::size_t i) { return dma_done_[i % 2]; }

 private:
  StagingChunks() {
    for (int i = 0; i < 2; ++i) {
      if (cudaHostAlloc(reinterpret_cast<void**>(&chunk_[i]), kChunkBytes, cudaHostAllocPortable) != cudaSuccess ||
          cudaEventCreateWithFlags(&dma_done_[i], cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();  // not sticky: clear it so that later checks do not see it
        return;
      }
    }
  }
  ~StagingChunks() {
    for (int i = 0; i < 2; ++i) {
      if (chunk_[i]) cudaFreeHost(chunk_[i]);
      if (dma_done_[i]) cudaEventDestroy(dma_done_[i]);
    }
  }
  bool allocated() const { return chunk_[1] && dma_done_[1]; }

  std::mutex mutex_;
  char* chunk_[2] = {nullptr, nullptr};
  cudaEvent_t dma_done_[2] = {nullptr, nullptr};
};

/// memcpy on the rank's host threads: their page faults on fresh memory run in parallel too.
void parallel_memcpy(char* to, const char* from, std::size_t bytes) {
  host::for_ranges(
      static_cast<std::int64_t>(bytes), [=](std::int64_t b, std::int64_t e) { std::memcpy(to + b, from + b, e - b); },
      kMinBytesPerThread);
}

std::size_t chunk_count(std::size_t bytes) { return (bytes + kChunkBytes - 1) / kChunkBytes; }
std::size_t chunk_size(std::size_t c, std::size_t bytes) { return std::min(kChunkBytes, bytes - c * kChunkBytes); }

/// Chunk c goes host -> pinned (host threads) while chunk c - 1 goes pinned -> device (DMA).
void staged_to_device(StagingChunks& st, char* device, const char* host, std::size_t bytes, cudaStream_t stream) {
  for (std::size_t c = 0; c < chunk_count(bytes); ++c) {
    const std::size_t offset = c * kChunkBytes, n = chunk_size(c, bytes);
    TESSERA_CUDA_CHECK(cudaEventSynchronize(st.dma_done(c)));  // chunk c - 2's DMA has read the buffer
    parallel_memcpy(st.chunk(c), host + offset, n);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(device + offset, st.chunk(c), n, cudaMemcpyHostToDevice, stream));
    TESSERA_CUDA_CHECK(cudaEventRecord(st.dma_done(c), stream));
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

/// Chunk c + 1 goes device -> pinned (DMA) while chunk c goes pinned -> host (host threads).
void staged_to_host(StagingChunks& st, char* host, const char* device, std::size_t bytes, cudaStream_t stream) {
  const std::size_t chunks = chunk_count(bytes);
  const auto fetch = [&](std::size_t c) {
    // The buffer's last DMA is done (this call's chunk c - 2, copied out already, or a copy
    // that failed midway).
    TESSERA_CUDA_CHECK(cudaEventSynchronize(st.dma_done(c)));
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(st.chunk(c), device + c * kChunkBytes, chunk_size(c, bytes),
                                       cudaMemcpyDeviceToHost, stream));
    TESSERA_CUDA_CHECK(cudaEventRecord(st.dma_done(c), stream));
  };
  fetch(0);
  for (std::size_t c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) fetch(c + 1);  // into the buffer whose chunk c - 1 was copied out last step
    TESSERA_CUDA_CHECK(cudaEventSynchronize(st.dma_done(c)));
    parallel_memcpy(host + c * kChunkBytes, st.chunk(c), chunk_size(c, bytes));
  }
}

/// Pins [host, host + bytes) while it lives, where the driver accepts (a refused range is copied
/// pageable).
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

bool pinned_already(const void* host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

/// The copy as one cudaMemcpyAsync, the range pinned for it on the registered path.
void direct_copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
                 bool register_host) {
  const void* host = kind == cudaMemcpyHostToDevice ? from : to;
  std::optional<PinnedRange> pin;
  if (register_host) pin.emplace(host, bytes);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, stream));
  // Before the range is unpinned; and from memory pinned already the copy is truly asynchronous:
  // the wait keeps "reusable at return" on every path.
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

/// The staging chunks where this copy takes the staged path (nullptr otherwise).
StagingChunks* staging_for(const void* host, std::size_t bytes) {
  if (bytes < kLargeCopyBytes || host_copy_path_taken() != HostCopyPath::staged || pinned_already(host)) return nullptr;
  return StagingChunks::get();
}

bool register_for(const void* host, std::size_t bytes) {
  return bytes >= kLargeCopyBytes && host_copy_path_taken() != HostCopyPath::pageable && !pinned_already(host);
}

}  // namespace

const char* to_string(HostCopyPath path) {
  switch (path) {
    case HostCopyPath::automatic: return "auto";
    case HostCopyPath::staged: return "staged";
    case HostCopyPath::registered: return "registered";
    case HostCopyPath::pageable: return "pageable";
  }
  return "?";
}

HostCopyPath host_copy_path_from_name(const std::string& name) {
  for (const HostCopyPath path :
       {HostCopyPath::automatic, HostCopyPath::staged, HostCopyPath::registered, HostCopyPath::pageable})
    if (name == to_string(path)) return path;
  throw InputError("TESSERA_HOST_COPIES=" + name + ": the host copy path is auto, staged, registered or pageable");
}

HostCopyPath host_copy_path() {
  int path = g_path.load();
  if (path == kUnset) {
    static const HostCopyPath from_environment = path_from_environment();
    path = static_cast<int>(from_environment);
  }
  return static_cast<HostCopyPath>(path);
}

void set_host_copy_path(HostCopyPath path) { g_path.store(static_cast<int>(path)); }

HostCopyPath host_copy_path_taken() {
  const HostCopyPath chosen = host_copy_path();
  if (chosen != HostCopyPath::automatic) return chosen;
  return host::threads() >= kStagingThreads ? HostCopyPath::staged : HostCopyPath::registered;
}

void copy_to_device(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  if (StagingChunks* st = staging_for(host, bytes)) {
    const std::lock_guard<std::mutex> lock(st->in_use());
    staged_to_device(*st, static_cast<char*>(device), static_cast<const char*>(host), bytes, stream);
    return;
  }
  if (bytes < kLargeCopyBytes) {  // the driver stages it and returns
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  direct_copy(device, host, bytes, cudaMemcpyHostToDevice, stream, register_for(host, bytes));
}

void copy_to_host(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  if (StagingChunks* st = staging_for(host, bytes)) {
    const std::lock_guard<std::mutex> lock(st->in_use());
    staged_to_host(*st, static_cast<char*>(host), static_cast<const char*>(device), bytes, stream);
    return;
  }
  direct_copy(host, device, bytes, cudaMemcpyDeviceToHost, stream, register_for(host, bytes));
}

}  // namespace tessera::cuda
