// Where a large device-to-host download's time goes, on this machine (local/cuda/device_buffer.cu).
// Downloads `mb` megabytes (default 470: P's two blocks at poisson3d:192 on one GPU) into fresh
// host memory (malloc'd, never touched: what a HostArray the setup sizes for a download holds),
// into fresh memory advised to transparent huge pages (2 MiB-aligned, madvise(MADV_HUGEPAGE)),
// and into memory touched already, several ways, five repetitions each:
//   pageable        cudaMemcpyAsync into the unpinned range
//   register        cudaHostRegister of the range, the copy, cudaHostUnregister (what
//                   copy_to_host did through the forty-third session)
//   prefault+reg    the range's pages first written by T threads (one byte a page), then as above
//   staged          through two pinned chunks of 32 MiB, each copied out by T threads while the
//                   next one arrives
//   first touch     no copy: one byte written a page by T threads (what the pages alone cost)
// Build and run (T = host threads, default 16):
//   nvcc -O2 -std=c++17 -arch=sm_90 tools/host_copy_cost.cu -o host_copy_cost && ./host_copy_cost 470 16
#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));                \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

template <class Body>
void in_parallel(int threads, std::size_t n, Body body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([=] { body(n * t / threads, n * (t + 1) / threads); });
  for (std::thread& t : pool) t.join();
}

void prefault(char* p, std::size_t bytes, int threads) {
  const std::size_t page = 4096;
  in_parallel(threads, (bytes + page - 1) / page, [=](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) p[i * page] = 0;
  });
}

struct Times {
  double prefault = 0, reg = 0, copy = 0, unreg = 0;
  double total() const { return prefault + reg + copy + unreg; }
};

Times pageable(char* host, const char* dev, std::size_t bytes, cudaStream_t s) {
  Times t;
  auto t0 = Clock::now();
  CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  t.copy = since(t0);
  return t;
}

Times registered(char* host, const char* dev, std::size_t bytes, cudaStream_t s, int prefault_threads) {
  Times t;
  auto t0 = Clock::now();
  if (prefault_threads > 0) prefault(host, bytes, prefault_threads);
  t.prefault = since(t0);
  t0 = Clock::now();
  CHECK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
  t.reg = since(t0);
  t0 = Clock::now();
  CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  t.copy = since(t0);
  t0 = Clock::now();
  CHECK(cudaHostUnregister(host));
  t.unreg = since(t0);
  return t;
}

Times staged(char* host, const char* dev, std::size_t bytes, cudaStream_t s, char* const chunk[2],
             cudaEvent_t const arrived[2], std::size_t chunk_bytes, int threads) {
  Times t;
  auto t0 = Clock::now();
  const std::size_t chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  auto start = [&](std::size_t c) {
    const std::size_t n = std::min(chunk_bytes, bytes - c * chunk_bytes);
    CHECK(cudaMemcpyAsync(chunk[c % 2], dev + c * chunk_bytes, n, cudaMemcpyDeviceToHost, s));
    CHECK(cudaEventRecord(arrived[c % 2], s));
  };
  start(0);
  for (std::size_t c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) start(c + 1);  // its buffer was copied out in step c - 1
    CHECK(cudaEventSynchronize(arrived[c % 2]));
    const std::size_t n = std::min(chunk_bytes, bytes - c * chunk_bytes);
    char* to = host + c * chunk_bytes;
    const char* from = chunk[c % 2];
    in_parallel(threads, n, [=](std::size_t b, std::size_t e) { std::memcpy(to + b, from + b, e - b); });
  }
  t.copy = since(t0);
  return t;
}

Times first_touch(char* host, std::size_t bytes, int threads) {
  Times t;
  auto t0 = Clock::now();
  prefault(host, bytes, threads);
  t.prefault = since(t0);
  return t;
}

constexpr std::size_t kHugePage = std::size_t(2) << 20;

char* huge_page_allocation(std::size_t bytes) {
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  char* p = static_cast<char*>(std::aligned_alloc(kHugePage, rounded));
  if (p && madvise(p, rounded, MADV_HUGEPAGE) != 0) std::perror("madvise");
  return p;
}

void report(const char* what, const char* memory, const Times& t, std::size_t bytes, long faults) {
  std::printf("%-14s %-8s total %.4f s (%5.1f GB/s)  prefault %.4f  register %.4f  copy %.4f  unregister %.4f  faults %ld\n",
              what, memory, t.total(), bytes / t.total() * 1e-9, t.prefault, t.reg, t.copy, t.unreg, faults);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = std::size_t(argc > 1 ? std::atol(argv[1]) : 470) << 20;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 16;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  char* dev = nullptr;
  CHECK(cudaMalloc(&dev, bytes));
  CHECK(cudaMemset(dev, 1, bytes));
  const std::size_t chunk_bytes = std::size_t(32) << 20;
  char* chunk[2];
  cudaEvent_t arrived[2];
  for (int i = 0; i < 2; ++i) {
    CHECK(cudaMallocHost(&chunk[i], chunk_bytes));
    CHECK(cudaEventCreateWithFlags(&arrived[i], cudaEventDisableTiming));
  }
  {  // the lent machines grow their memory on first touch: grow it once, before timing
    std::vector<char> warm(bytes * 4, 1);
  }
  std::printf("%zu MiB, %d host threads\n", bytes >> 20, threads);
  char* touched = static_cast<char*>(std::malloc(bytes));
  std::memset(touched, 0, bytes);
  for (int rep = 0; rep < 5; ++rep) {
    for (int way = 0; way < 5; ++way) {
      for (int memory = 0; memory < 3; ++memory) {  // fresh, fresh huge pages, touched
        if (way == 4 && memory == 2) continue;
        const bool fresh = memory < 2;
        // malloc of this size mmaps: fresh pages
        char* host = memory == 0 ? static_cast<char*>(std::malloc(bytes)) : memory == 1 ? huge_page_allocation(bytes) : touched;
        const long f0 = minor_faults();
        Times t;
        const char* name = "";
        switch (way) {
          case 0: t = pageable(host, dev, bytes, s); name = "pageable"; break;
          case 1: t = registered(host, dev, bytes, s, 0); name = "register"; break;
          case 2: t = registered(host, dev, bytes, s, threads); name = "prefault+reg"; break;
          case 3: t = staged(host, dev, bytes, s, chunk, arrived, chunk_bytes, threads); name = "staged"; break;
          case 4: t = first_touch(host, bytes, threads); name = "first touch"; break;
        }
        const long faults = minor_faults() - f0;
        if (way != 4 && (host[bytes - 1] != 1 || host[0] != 1)) {
          std::fprintf(stderr, "%s: wrong bytes downloaded\n", name);
          return 1;
        }
        report(name, memory == 0 ? "fresh" : memory == 1 ? "huge" : "touched", t, bytes, faults);
        if (fresh) std::free(host);
      }
    }
  }
  std::free(touched);
  return 0;
}
