#pragma once
// A non-blocking CUDA stream for the distributed device tests: work left on the legacy default
// stream would race with theirs instead of being ordered before it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace tessera::amg::testing {

struct NonBlockingStream {
  cudaStream_t s = nullptr;
  NonBlockingStream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~NonBlockingStream() { cudaStreamDestroy(s); }
  NonBlockingStream(const NonBlockingStream&) = delete;
  NonBlockingStream& operator=(const NonBlockingStream&) = delete;
};

}  // namespace tessera::amg::testing
