// DeviceBuffer's host copies (local/cuda/host_copy.hpp), on each path (automatic, staged,
// registered, pageable) and with 1, 3 and 4 host threads: round trips below and above the 8 MiB
// at which a copy takes its path, and across several staging chunks with a ragged last one, are
// exact; a large copy to and from ranges that are not page-aligned writes nothing outside them;
// one from memory pinned already (cudaMallocHost, which the driver refuses to register again)
// works too, and the host memory may be overwritten as soon as the copy returns. The automatic
// path stages from 4 host threads.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/host_copy.hpp"

namespace tessera::cuda {
namespace {

constexpr std::size_t kPinned = (std::size_t(8) << 20) / sizeof(double);  // doubles in 8 MiB: a large copy
constexpr std::size_t kChunk = (std::size_t(32) << 20) / sizeof(double);  // doubles in a staging chunk

/// Runs `body` once for every path and host thread count, restoring both afterwards.
template <class Body>
void for_every_setting(Body body) {
  const HostCopyPath path = host_copy_path();
  const int threads = host::threads();
  for (const HostCopyPath p :
       {HostCopyPath::automatic, HostCopyPath::staged, HostCopyPath::registered, HostCopyPath::pageable})
    for (const int t : {1, 3, 4}) {
      SCOPED_TRACE(std::string(to_string(p)) + ", " + std::to_string(t) + " host threads");
      set_host_copy_path(p);
      host::set_threads(t);
      body();
    }
  set_host_copy_path(path);
  host::set_threads(threads);
}

std::vector<double> pattern(std::size_t n, double shift) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = shift + 0.5 * double(i);
  return v;
}

TEST(DeviceBufferCopies, RoundTripsAreExactBelowAndAboveLargeAndAcrossChunks) {
  for_every_setting([] {
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), kPinned - 1, kPinned,
                                kPinned + 3, kChunk, 2 * kChunk + 5}) {
      SCOPED_TRACE(std::to_string(n) + " doubles");
      const std::vector<double> host = pattern(n, 1.0 + double(n));
      DeviceBuffer<double> d(n);
      d.fill_bytes(0xff);  // NaN: an entry the upload missed shows
      d.upload(host);
      EXPECT_EQ(d.download(), host);
    }
  });
}

TEST(DeviceBufferCopies, LargeCopiesToAndFromUnalignedRanges) {
  for_every_setting([] {
    const std::size_t n = kChunk + kPinned + 5;  // a full chunk and a ragged one
    const std::vector<double> source = pattern(n + 3, 2.0);
    DeviceBuffer<double> d(n);
    d.fill_bytes(0xff);
    copy_to_device(d.data(), source.data() + 3, n * sizeof(double), nullptr);  // 24 bytes into a page
    std::vector<double> back(n + 2, -1.0);
    copy_to_host(back.data() + 1, d.data(), n * sizeof(double), nullptr);
    EXPECT_EQ(back.front(), -1.0) << "wrote before the range";
    EXPECT_EQ(back.back(), -1.0) << "wrote after the range";
    EXPECT_TRUE(std::equal(back.begin() + 1, back.end() - 1, source.begin() + 3));
  });
}

TEST(DeviceBufferCopies, AutomaticPathStagesFromFourHostThreads) {
  const HostCopyPath path = host_copy_path();
  const int threads = host::threads();
  set_host_copy_path(HostCopyPath::automatic);
  for (const int t : {1, 2, 3, 4, 16}) {
    host::set_threads(t);
    const int now = host::threads();  // t, or 1 in a build without OpenMP
    EXPECT_EQ(host_copy_path_taken(), now >= 4 ? HostCopyPath::staged : HostCopyPath::registered) << now << " threads";
  }
  set_host_copy_path(HostCopyPath::pageable);
  EXPECT_EQ(host_copy_path_taken(), HostCopyPath::pageable);
  set_host_copy_path(path);
  host::set_threads(threads);
}

TEST(DeviceBufferCopies, PathNamesAndAnUnknownOne) {
  EXPECT_EQ(host_copy_path_from_name("auto"), HostCopyPath::automatic);
  EXPECT_EQ(host_copy_path_from_name("staged"), HostCopyPath::staged);
  EXPECT_EQ(host_copy_path_from_name("registered"), HostCopyPath::registered);
  EXPECT_EQ(host_copy_path_from_name("pageable"), HostCopyPath::pageable);
  try {
    host_copy_path_from_name("pinned");
    ADD_FAILURE() << "an unknown path was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("auto, staged, registered or pageable"), std::string::npos) << e.what();
  }
}

TEST(DeviceBufferCopies, LargeCopyFromPinnedMemoryIsDoneAtReturn) {
  const std::size_t n = 8 * kPinned;  // 64 MiB: about a millisecond of DMA
  void* allocation = nullptr;
  ASSERT_EQ(cudaMallocHost(&allocation, n * sizeof(double)), cudaSuccess);
  double* pinned = static_cast<double*>(allocation);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for_every_setting([&] {
    const std::vector<double> values = pattern(n, 3.0 + host::threads());
    std::copy(values.begin(), values.end(), pinned);
    DeviceBuffer<double> d(n, stream);
    copy_to_device(d.data(), pinned, n * sizeof(double), stream);
    // Overwritten from the end, where a copy still in flight would read last.
    std::fill(std::reverse_iterator<double*>(pinned + n), std::reverse_iterator<double*>(pinned), -7.0);
    copy_to_host(pinned, d.data(), n * sizeof(double), stream);
    EXPECT_TRUE(std::equal(values.begin(), values.end(), pinned)) << "the device saw the overwritten host memory";
  });  // each d is freed on `stream`, which must outlive it
  cudaStreamDestroy(stream);
  cudaFreeHost(pinned);
}

}  // namespace
}  // namespace tessera::cuda
