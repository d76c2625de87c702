#pragma once
// Device timing for the benchmarks: the median of event-timed repetitions after warm-up, and
// the device's copy bandwidth (the ceiling every SpMV/SpMM figure is a fraction of).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

namespace tessera::cuda {

/// Median over `reps` runs (after `warmup` untimed runs) of the device time of `work`, in
/// seconds, each run bracketed by events on `stream`.
double median_device_seconds(const std::function<void()>& work, int warmup, int reps, cudaStream_t stream = nullptr);

/// Device-to-device cudaMemcpyAsync of `bytes`, median of `reps`: (bytes read + bytes written)
/// per second.
double measure_copy_bandwidth(std::size_t bytes = std::size_t{1} << 30, int reps = 20, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
