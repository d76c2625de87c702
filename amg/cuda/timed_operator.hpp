#pragma once
// Device-time measurement of a solve's parts without a profiler (the GPU machines have no
// nsys): StreamTimer sums CUDA-event-timed sections of one stream; TimedOperator wraps a
// DeviceOperator and times each of its products. The distributed preconditioner uses them for
// its timeline (DistDeviceAmgPreconditioner::enable_timeline): which level and which product
// the time of an iteration goes to, on one GPU and on many.
// A section lasts from the moment its stream reaches the begin event to the end of its last
// work on that stream: a distributed product's wait for its halo exchange is inside; on a GPU
// that waits for the host, so is the host's launch time. Events recorded while a stream is
// captured into a CUDA graph time nothing (the replays do not record them): time eager
// launches only.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "amg/cuda/device_operator.hpp"

namespace tessera::amg::gpu {

class StreamTimer {
 public:
  explicit StreamTimer(cudaStream_t stream) : stream_(stream) {}
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  /// Times its scope: a begin event now, the end event when it ends (also on an exception,
  /// so that every later section stays paired).
  class Section {
   public:
    explicit Section(StreamTimer& timer) : timer_(timer) { timer_.record(); }
    ~Section() { timer_.record_noexcept(); }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

   private:
    StreamTimer& timer_;
  };
  /// Synchronises with the last section; its events are then reused. Total seconds so far.
  double seconds();
  std::int64_t sections() const { return sections_; }

 private:
  void record();
  void record_noexcept() noexcept;  // a failed record leaves the section unpaired: seconds() drops it

  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;  // begin, end, begin, end, ... of the sections not yet summed
  std::size_t recorded_ = 0;
  double seconds_ = 0;
  std::int64_t sections_ = 0;
};

/// A DeviceOperator that times another one's apply() and residual() (the dots are
/// passed through).
/// Keeps a reference to `inner`, which must outlive it.
class TimedOperator final : public DeviceOperator {
 public:
  explicit TimedOperator(DeviceOperator& inner) : inner_(inner), timer_(inner.stream()) {}

  std::int64_t rows() const override { return inner_.rows(); }
  std::int64_t cols() const override { return inner_.cols(); }
  void apply(double alpha, const double* x, double beta, double* y) override;
  void residual(const double* x, const double* b, double* r) override;
  double dot(std::int64_t n, const double* x, const double* y) override { return inner_.dot(n, x, y); }
  void dot_into(std::int64_t n, const double* x, const double* y, double* result) override {
    inner_.dot_into(n, x, y, result);
  }
  void dots_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                 double* results) override {
    inner_.dots_into(n, vectors, stride, count, w, results);
  }
  cudaStream_t stream() const override { return inner_.stream(); }

  StreamTimer& timer() { return timer_; }

 private:
  DeviceOperator& inner_;
  StreamTimer timer_;
};

}  // namespace tessera::amg::gpu
