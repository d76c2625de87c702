// DeviceBuffer's host copies (local/cuda/device_buffer.hpp): round trips below and above the
// 8 MiB at which the host range is pinned for the copy are exact; a large copy from a range that
// is not page-aligned, and one from memory pinned already (cudaMallocHost, which the driver
// refuses to register again), work too, and the host memory may be overwritten as soon as the
// copy returns.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "local/cuda/device_buffer.hpp"

namespace tessera::cuda {
namespace {

constexpr std::size_t kPinned = (std::size_t(8) << 20) / sizeof(double);  // doubles in 8 MiB

std::vector<double> pattern(std::size_t n, double shift) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = shift + 0.5 * double(i);
  return v;
}

TEST(DeviceBufferCopies, RoundTripsAreExactBelowAndAbovePinning) {
  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), kPinned - 1, kPinned, kPinned + 3,
                              3 * kPinned}) {
    SCOPED_TRACE(std::to_string(n) + " doubles");
    const std::vector<double> host = pattern(n, 1.0);
    DeviceBuffer<double> d(n);
    d.fill_bytes(0xff);  // NaN: an entry the upload missed shows
    d.upload(host);
    EXPECT_EQ(d.download(), host);
  }
}

TEST(DeviceBufferCopies, LargeCopiesFromUnalignedRanges) {
  const std::size_t n = 2 * kPinned + 5;
  const std::vector<double> source = pattern(n + 3, 2.0);
  DeviceBuffer<double> d(n);
  copy_to_device(d.data(), source.data() + 3, n * sizeof(double), nullptr);  // 24 bytes into a page
  std::vector<double> back(n + 1, -1.0);
  copy_to_host(back.data() + 1, d.data(), n * sizeof(double), nullptr);
  EXPECT_EQ(back[0], -1.0) << "wrote before the range";
  EXPECT_TRUE(std::equal(back.begin() + 1, back.end(), source.begin() + 3));
}

TEST(DeviceBufferCopies, LargeCopyFromPinnedMemoryIsDoneAtReturn) {
  const std::size_t n = 8 * kPinned;  // 64 MiB: about a millisecond of DMA
  void* allocation = nullptr;
  ASSERT_EQ(cudaMallocHost(&allocation, n * sizeof(double)), cudaSuccess);
  double* pinned = static_cast<double*>(allocation);
  const std::vector<double> values = pattern(n, 3.0);
  std::copy(values.begin(), values.end(), pinned);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    DeviceBuffer<double> d(n, stream);
    copy_to_device(d.data(), pinned, n * sizeof(double), stream);
    // Overwritten from the end, where a copy still in flight would read last.
    std::fill(std::reverse_iterator<double*>(pinned + n), std::reverse_iterator<double*>(pinned), -7.0);
    copy_to_host(pinned, d.data(), n * sizeof(double), stream);
    EXPECT_TRUE(std::equal(values.begin(), values.end(), pinned)) << "the device saw the overwritten host memory";
  }  // d is freed on `stream`, which must outlive it
  cudaStreamDestroy(stream);
  cudaFreeHost(pinned);
}

}  // namespace
}  // namespace tessera::cuda
