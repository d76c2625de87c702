// Host code only: the pool behind PinnedHostBuffer's small blocks.
#include <array>
#include <mutex>
#include <vector>

#include "local/cuda/check.hpp"
#include "local/cuda/pinned_host_buffer.hpp"

namespace tessera::cuda::detail {
namespace {

/// Size classes are powers of two from kSmallestClass bytes up to kPooledPinnedBytes.
constexpr std::size_t kSmallestClass = 256;
constexpr int kClasses = 13;  // 256 B, 512 B, ..., 1 MiB
static_assert(kSmallestClass << (kClasses - 1) == kPooledPinnedBytes, "the classes end at the pooled limit");

int size_class(std::size_t bytes) {
  int c = 0;
  while ((kSmallestClass << c) < bytes) ++c;
  return c;
}

/// Freed blocks by size class, kept for the process's life: freeing them from a static
/// destructor would run after the CUDA runtime's own teardown (as host_copy.cu's staging
/// chunks). What it holds is bounded by the most buffers of a class alive at once.
class PinnedPool {
 public:
  static PinnedPool& get() {
    static PinnedPool* pool = new PinnedPool();  // never destroyed: see above
    return *pool;
  }
  void* take(int c) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (free_[c].empty()) return nullptr;
    void* block = free_[c].back();
    free_[c].pop_back();
    return block;
  }
  void give(int c, void* block) {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_[c].push_back(block);
  }

 private:
  std::mutex mutex_;
  std::array<std::vector<void*>, kClasses> free_;
};

}  // namespace

void* pinned_allocate(std::size_t bytes) {
  const bool pooled = bytes <= kPooledPinnedBytes;
  const int c = pooled ? size_class(bytes) : 0;
  if (pooled)
    if (void* block = PinnedPool::get().take(c)) return block;
  void* block = nullptr;
  TESSERA_CUDA_CHECK(cudaMallocHost(&block, pooled ? kSmallestClass << c : bytes));
  return block;
}

void pinned_release(void* block, std::size_t bytes) noexcept {
  if (bytes > kPooledPinnedBytes) {
    cudaFreeHost(block);  // errors here are not actionable in a destructor
    return;
  }
  try {
    PinnedPool::get().give(size_class(bytes), block);
  } catch (...) {  // no memory for the free list: give the block back to the driver instead
    cudaFreeHost(block);
  }
}

}  // namespace tessera::cuda::detail
