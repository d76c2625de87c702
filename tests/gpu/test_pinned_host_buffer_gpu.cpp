// PinnedHostBuffer (local/cuda/pinned_host_buffer.hpp): its blocks are page-locked, a small
// block given back is handed to the next buffer of its size class (a solve's scalars no longer
// cost a cudaMallocHost and a cudaFreeHost), buffers alive at once never share a block, moves
// hand the block over, and asynchronous copies through buffers of every size round-trip exactly,
// below, at and above the pooled limit.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#include "local/cuda/device_buffer.hpp"
#include "local/cuda/pinned_host_buffer.hpp"

namespace tessera::cuda {
namespace {

bool page_locked(const void* p) {
  cudaPointerAttributes attributes{};
  return cudaPointerGetAttributes(&attributes, p) == cudaSuccess && attributes.type == cudaMemoryTypeHost;
}

TEST(PinnedHostBuffer, SmallBlockGivenBackIsReusedWithinItsSizeClass) {
  const void* first = nullptr;
  {
    PinnedHostBuffer<double> scalars(4);  // 32 bytes: the smallest class (256 bytes)
    ASSERT_NE(scalars.data(), nullptr);
    EXPECT_TRUE(page_locked(scalars.data()));
    first = scalars.data();
  }
  PinnedHostBuffer<char> same_class(200);
  EXPECT_EQ(static_cast<const void*>(same_class.data()), first) << "a block of the same class was not reused";
  EXPECT_TRUE(page_locked(same_class.data()));
  PinnedHostBuffer<double> alive_at_once(4);  // the only pooled block of the class is in use
  EXPECT_NE(static_cast<const void*>(alive_at_once.data()), static_cast<const void*>(same_class.data()));
  PinnedHostBuffer<char> next_class(300);  // 512 bytes
  EXPECT_NE(static_cast<const void*>(next_class.data()), static_cast<const void*>(same_class.data()));
  EXPECT_NE(static_cast<const void*>(next_class.data()), static_cast<const void*>(alive_at_once.data()));
  EXPECT_TRUE(page_locked(next_class.data()));
}

TEST(PinnedHostBuffer, MovesHandTheBlockOver) {
  PinnedHostBuffer<double> a(16);
  double* block = a.data();
  PinnedHostBuffer<double> b(std::move(a));
  EXPECT_EQ(b.data(), block);
  EXPECT_EQ(b.size(), 16u);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  PinnedHostBuffer<double> c(3);
  c = std::move(b);  // c's old block goes back to the pool; b's moves in
  EXPECT_EQ(c.data(), block);
  EXPECT_EQ(c.size(), 16u);
  PinnedHostBuffer<double> empty(0);
  EXPECT_EQ(empty.data(), nullptr);
}

TEST(PinnedHostBuffer, AsynchronousRoundTripsAreExactBelowAtAndAboveThePooledLimit) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const std::size_t at_limit = kPooledPinnedBytes / sizeof(double);
  for (const std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33), at_limit - 1,
                              at_limit, at_limit + 1, 3 * at_limit + 7}) {
    SCOPED_TRACE(std::to_string(n) + " doubles");
    PinnedHostBuffer<double> out(n), back(n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = 0.25 * double(i) - double(n);
      back[i] = std::numeric_limits<double>::quiet_NaN();  // an entry the copy missed shows
    }
    {
      DeviceBuffer<double> d(n, stream);
      d.fill_bytes(0xff, stream);
      const std::size_t bytes = n * sizeof(double);
      ASSERT_EQ(cudaMemcpyAsync(d.data(), out.data(), bytes, cudaMemcpyHostToDevice, stream), cudaSuccess);
      ASSERT_EQ(cudaMemcpyAsync(back.data(), d.data(), bytes, cudaMemcpyDeviceToHost, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    }
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += back[i] != out[i];
    EXPECT_EQ(wrong, 0u);
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace tessera::cuda
