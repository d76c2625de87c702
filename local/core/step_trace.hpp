#pragma once
// Opt-in wall-clock accounting of named host steps, per process: where a distributed setup's
// time goes on each rank, without a profiler (the GPU machines have none for host code), and
// where it touches fresh memory (each step's host page faults, local/core/page_faults.hpp).
// Off by default; a step then costs a call and a branch. Turned on by `set_enabled(true)` (the
// drivers' `--trace`) or the environment variable TESSERA_TRACE=1.
//
//   { TESSERA_TRACE_STEP("ptap.bucket"); ... }   // adds the scope's seconds to "ptap.bucket"
//
// Steps nest: a step opened inside another is recorded under its path, "galerkin/ptap.bucket",
// so the time of a shared step (an MPI collective, an assembly) is attributed to its callers.
// A parent's time includes its children's. Not thread-safe: open steps on the rank's calling
// thread only, around a threaded loop (local/core/host_ranges.hpp), never inside its ranges.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace tessera::trace {

struct StepTotal {
  std::string path;  // the step's name under its enclosing steps' names, joined by '/'
  long long calls = 0;
  double seconds = 0;
  long long page_faults = 0;  // the process's, all threads, while the step was open
};

bool enabled();
void set_enabled(bool on);
/// Forgets every total (the start of a new measurement).
void reset();
/// Every step recorded since the last reset, sorted by path.
std::vector<StepTotal> totals();

class Step {
 public:
  explicit Step(const char* name);
  ~Step();
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
  bool on_;
  std::size_t parent_length_ = 0;  // the enclosing path's length, restored on exit
  std::chrono::steady_clock::time_point start_;
  long long start_faults_ = 0;
};

}  // namespace tessera::trace

#define TESSERA_TRACE_CONCAT2(a, b) a##b
#define TESSERA_TRACE_CONCAT(a, b) TESSERA_TRACE_CONCAT2(a, b)
#define TESSERA_TRACE_STEP(name) ::tessera::trace::Step TESSERA_TRACE_CONCAT(tessera_trace_step_, __LINE__)(name)
