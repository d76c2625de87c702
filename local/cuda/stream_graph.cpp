#include "local/cuda/stream_graph.hpp"

#include <exception>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::cuda {

StreamGraph::~StreamGraph() { reset(); }

void StreamGraph::reset() {
  if (exec_) cudaGraphExecDestroy(exec_);
  exec_ = nullptr;
}

bool StreamGraph::capture(cudaStream_t stream, const std::function<void()>& work, std::string& why) {
  reset();
  // Thread-local: NCCL's and the runtime's helper threads keep making CUDA calls meanwhile,
  // which a global capture would forbid.
  const cudaError_t began = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (began != cudaSuccess) {
    why = cudaGetErrorString(began);
    cudaGetLastError();
    return false;
  }
  try {
    work();
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "the captured work threw";
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (why.empty() && ended != cudaSuccess) why = cudaGetErrorString(ended);
  // Node priorities as captured: kernels queued on a high-priority stream (a halo exchange's
  // pack and NCCL kernels) keep jumping ahead of the compute stream's pending blocks when
  // replayed; without the flag the whole graph would run at the launch stream's priority.
  if (why.empty() && cudaGraphInstantiateWithFlags(&exec_, graph, cudaGraphInstantiateFlagUseNodePriority) != cudaSuccess) {
    cudaGetLastError();  // a driver without per-node priorities: one priority for the whole graph
    exec_ = nullptr;
    if (cudaGraphInstantiate(&exec_, graph, 0) != cudaSuccess) {
      why = "cudaGraphInstantiate failed";
      exec_ = nullptr;
    }
  }
  if (graph) cudaGraphDestroy(graph);
  if (why.empty()) return true;
  cudaGetLastError();  // a failed capture leaves a (non-sticky) error behind: clear it for the caller
  return false;
}

void StreamGraph::launch(cudaStream_t stream) const {
  TESSERA_ASSERT(exec_ != nullptr, "StreamGraph::launch before a successful capture");
  TESSERA_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

}  // namespace tessera::cuda
