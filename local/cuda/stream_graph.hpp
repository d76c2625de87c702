#pragma once
// StreamGraph: the work a callable enqueues on a stream, captured once into a CUDA graph and
// replayed by one launch. For fixed sequences of many small steps -- an AMG cycle's kernels
// and, across ranks, its NCCL calls, whose host side (group start/end, plan building) costs
// tens of microseconds each -- where the host, not the GPU, would set the pace.
// What the callable enqueues must not synchronise or depend on host values that change between
// replays, and must read and write the same buffers every time. Streams it forks from the
// captured stream (an event recorded there, waited on elsewhere) must join back before it returns.
#include <cuda_runtime_api.h>

#include <functional>
#include <string>

namespace tessera::cuda {

class StreamGraph {
 public:
  StreamGraph() = default;
  ~StreamGraph();
  StreamGraph(const StreamGraph&) = delete;
  StreamGraph& operator=(const StreamGraph&) = delete;

  /// Records what `work` enqueues on `stream` (nothing runs) and instantiates it (keeping the
  /// priorities of the streams the kernels were queued on), replacing any previous graph. Never
  /// throws: false, with the reason in `why` and the CUDA error state cleared, when some step
  /// could not be captured or work threw (then check that streams work forked are not left
  /// capturing: cudaStreamIsCapturing).
  bool capture(cudaStream_t stream, const std::function<void()>& work, std::string& why);
  /// Runs the captured work on `stream` (ordered after what is already queued there).
  void launch(cudaStream_t stream) const;
  bool ready() const { return exec_ != nullptr; }
  void reset();

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace tessera::cuda
