#include <algorithm>
#include <vector>

#include "local/cuda/bandwidth.hpp"
#include "local/cuda/device_buffer.hpp"

namespace tessera::cuda {
namespace {

class Event {
 public:
  Event() { TESSERA_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_{};
};

}  // namespace

double median_device_seconds(const std::function<void()>& work, int warmup, int reps, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(reps >= 1, "repetitions must be at least 1, got ", reps);
  for (int i = 0; i < warmup; ++i) work();
  Event start, stop;
  std::vector<double> seconds;
  for (int i = 0; i < reps; ++i) {
    TESSERA_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    work();
    TESSERA_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    seconds.push_back(1e-3 * ms);
  }
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  return seconds[seconds.size() / 2];
}

double measure_copy_bandwidth(std::size_t bytes, int reps, cudaStream_t stream) {
  DeviceBuffer<char> src(bytes, stream), dst(bytes, stream);
  src.fill_bytes(1, stream);
  const double s = median_device_seconds(
      [&] { TESSERA_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream)); }, 3,
      reps, stream);
  return 2.0 * static_cast<double>(bytes) / s;
}

}  // namespace tessera::cuda
