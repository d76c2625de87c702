#include "local/cuda/owned_stream.hpp"

#include "local/cuda/check.hpp"

namespace tessera::cuda {

OwnedStream::OwnedStream() {
  TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  if (const cudaError_t e = cudaEventCreateWithFlags(&event_, cudaEventDisableTiming); e != cudaSuccess) {
    cudaStreamDestroy(stream_);
    TESSERA_CUDA_CHECK(e);
  }
}

OwnedStream::~OwnedStream() {
  cudaEventDestroy(event_);
  cudaStreamDestroy(stream_);  // returns at once; work still queued there completes first
}

void OwnedStream::wait_for(cudaStream_t other) {
  TESSERA_CUDA_CHECK(cudaEventRecord(event_, other));
  TESSERA_CUDA_CHECK(cudaStreamWaitEvent(stream_, event_, 0));
}

void OwnedStream::make_wait(cudaStream_t other) {
  TESSERA_CUDA_CHECK(cudaEventRecord(event_, stream_));
  TESSERA_CUDA_CHECK(cudaStreamWaitEvent(other, event_, 0));
}

}  // namespace tessera::cuda
