// A GPU timeline for machines without Nsight Systems (the lent H100s have ncu but no nsys): a
// CUPTI activity recorder that the CUDA driver loads into any program, untouched, through
// CUDA_INJECTION64_PATH. ncu times kernels one at a time; this records when each kernel, copy
// and memset ran on the GPU and when the host called the runtime, so the GPU's idle time between
// them (and the host call it waited for) can be read off (tools/gpu_timeline_gaps.py).
//
// Build and run:
//   g++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include tools/gpu_timeline.cpp
//       -L<the folder of libcupti.so> -lcupti -o libgpu_timeline.so   (one line)
//   CUDA_INJECTION64_PATH=$PWD/libgpu_timeline.so GPU_TIMELINE=run.csv ./program ...
//   python3 tools/gpu_timeline_gaps.py run.csv 11step_kernel   (device PCG's step: one an iteration)
// GPU_TIMELINE_HOST=0 leaves the runtime calls out (their recording costs the host time).
// One CSV line a record, the name last (kernel names hold commas):
//   kind,start_ns,end_ns,stream,correlation,name
// kind is K (kernel), C (copy), S (memset) or R (runtime API call, on the host; stream 0); a
// runtime call and the GPU work it launched share `correlation`. The clock is CUPTI's, the same
// for both.
//
// What the recording costs: host time at each launch, most at a graph's (CUPTI instruments its
// kernels). So idle gaps that wait on a launch are overstated. In the eightieth session, the gap
// before each PCG iteration's cycle graph read 47 us with kernels recorded and 139 us with runtime
// calls too; queuing that graph ahead of the host's wait (which closed the gap to 15 us in the
// recording) changed the untraced solve by nothing measurable (docs/performance.md). Compare runs
// recorded alike, and confirm a gap's cost with untraced timings. Gaps around host work (a
// cudaMallocHost, a host phase) are not affected.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

std::FILE* g_out = nullptr;
std::mutex g_write;
constexpr std::size_t kBufferBytes = 8 << 20;

#define CUPTI_OR_WARN(call)                                                       \
  do {                                                                            \
    const CUptiResult r_ = (call);                                                \
    if (r_ != CUPTI_SUCCESS) {                                                    \
      const char* s_ = nullptr;                                                   \
      cuptiGetResultString(r_, &s_);                                              \
      std::fprintf(stderr, "gpu_timeline: %s: %s\n", #call, s_ ? s_ : "unknown"); \
    }                                                                             \
  } while (0)

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;  // none: CUPTI drops the records (and counts them)
  *max_records = 0;  // as many as fit
}

void write_record(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      std::fprintf(g_out, "K,%llu,%llu,%u,%u,%s\n", (unsigned long long)k->start, (unsigned long long)k->end,
                   k->streamId, k->correlationId, k->name ? k->name : "?");
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      std::fprintf(g_out, "C,%llu,%llu,%u,%u,copy kind %u %llu bytes\n", (unsigned long long)c->start,
                   (unsigned long long)c->end, c->streamId, c->correlationId, unsigned(c->copyKind),
                   (unsigned long long)c->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      std::fprintf(g_out, "S,%llu,%llu,%u,%u,memset %llu bytes\n", (unsigned long long)m->start,
                   (unsigned long long)m->end, m->streamId, m->correlationId, (unsigned long long)m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const char* name = nullptr;
      cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name);
      std::fprintf(g_out, "R,%llu,%llu,0,%u,%s\n", (unsigned long long)a->start, (unsigned long long)a->end,
                   a->correlationId, name ? name : "?");
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    const std::lock_guard<std::mutex> lock(g_write);
    CUpti_Activity* record = nullptr;
    while (g_out && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) write_record(record);
  }
  std::free(buffer);
}

void flush_at_exit() {
  cuptiActivityFlushAll(1);
  const std::lock_guard<std::mutex> lock(g_write);
  if (g_out) std::fclose(g_out);
  g_out = nullptr;
}

}  // namespace

/// Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library.
extern "C" int InitializeInjection(void) {
  const char* path = std::getenv("GPU_TIMELINE");
  g_out = std::fopen(path && *path ? path : "gpu_timeline.csv", "w");
  if (!g_out) {
    std::fprintf(stderr, "gpu_timeline: cannot write %s\n", path ? path : "gpu_timeline.csv");
    return 0;
  }
  CUPTI_OR_WARN(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
    CUPTI_OR_WARN(cuptiActivityEnable(kind));
  const char* host = std::getenv("GPU_TIMELINE_HOST");
  if (!host || std::string(host) != "0") CUPTI_OR_WARN(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  std::atexit(flush_at_exit);
  return 1;
}
