#pragma once
// Host wall-clock timer (for host work; device work is timed with CUDA events): the drivers'
// timings and the per-phase seconds of the distributed products' statistics.
#include <chrono>

namespace tessera {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  void restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tessera
