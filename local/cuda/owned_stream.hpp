#pragma once
// OwnedStream: a non-blocking CUDA stream and an event, destroyed with their holder, for work
// that needs a stream of its own yet must stay in order with a caller's stream -- a CUDA graph
// capture, which the legacy default stream cannot host. wait_for() and make_wait() are the two
// halves of a fork and join: each costs an event record and a stream wait, a few microseconds.
#include <cuda_runtime_api.h>

namespace tessera::cuda {

class OwnedStream {
 public:
  OwnedStream();
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;

  cudaStream_t get() const { return stream_; }
  /// Work queued here from now on runs after the work `other` holds now.
  void wait_for(cudaStream_t other);
  /// Work queued on `other` from now on runs after the work held here now.
  void make_wait(cudaStream_t other);

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t event_ = nullptr;  // reused: a wait takes the event's state at the time of the call
};

}  // namespace tessera::cuda
