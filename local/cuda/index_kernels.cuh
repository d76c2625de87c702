#pragma once
// Index helpers of the device setup and product code, defined once: a lower bound in a sorted
// array, fill with 0, 1, 2, ...
// (the payload of a sort that yields a permutation), the plain gather out[k] = in[source[k]]
// (applying that permutation to values), and the starts of the runs of a sorted key array (row
// pointers read off sorted (row, column) keys), index arrays copied into another width, and
// whether two index arrays differ. dist/cuda/value_maps' gather is not this one: it reads from
// and writes to several concatenated parts. Launchers order the work on `stream` and accept
// n == 0. Include only from .cu files.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"  // grid_for

namespace tessera::cuda {
namespace index_detail {

constexpr int kThreads = 256;

template <class T>
__global__ void iota_kernel(std::int64_t n, T* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<T>(i);
}

template <class T>
__global__ void gather_kernel(std::int64_t n, const std::int64_t* source, const T* in, T* out) {
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) out[k] = in[source[k]];
}

template <class From, class To>
__global__ void convert_kernel(std::int64_t n, const From* in, To* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<To>(in[i]);
}

template <class A, class B>
__global__ void differs_kernel(std::int64_t n, const A* a, const B* b, int* differs) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && std::int64_t(a[i]) != std::int64_t(b[i])) *differs = 1;  // any writer: the same 1
}

template <class T>
__global__ void segment_starts_kernel(const T* sorted, std::int64_t n, std::int64_t segments, T key_scale,
                                      std::int64_t* starts) {
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s > segments) return;
  const T key = static_cast<T>(s) * key_scale;
  std::int64_t lo = 0, hi = n;  // the first position whose key is not below `key`
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (sorted[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  starts[s] = lo;
}

}  // namespace index_detail

/// The first index of the increasing `sorted` (n entries) whose entry is not below `value`
/// (std::lower_bound), on the device.
__device__ inline std::int64_t lower_bound_index(const std::int64_t* __restrict__ sorted, std::int64_t n,
                                                 std::int64_t value) {
  std::int64_t low = 0;
  while (n > 0) {
    const std::int64_t half = n / 2;
    if (sorted[low + half] < value) {
      low += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return low;
}

/// out[i] = i for i < n.
template <class T>
void fill_iota(std::int64_t n, T* out, cudaStream_t stream) {
  if (n <= 0) return;
  index_detail::iota_kernel<<<grid_for(n, index_detail::kThreads), index_detail::kThreads, 0, stream>>>(n, out);
  TESSERA_CHECK_LAUNCH();
}

/// out[k] = in[source[k]] for k < n.
template <class T>
void gather(std::int64_t n, const std::int64_t* source, const T* in, T* out, cudaStream_t stream) {
  if (n <= 0) return;
  index_detail::gather_kernel<<<grid_for(n, index_detail::kThreads), index_detail::kThreads, 0, stream>>>(
      n, source, in, out);
  TESSERA_CHECK_LAUNCH();
}

/// out[i] = To(in[i]) for i < n: index arrays widened or narrowed (the caller knows every value fits To).
template <class From, class To>
void convert(std::int64_t n, const From* in, To* out, cudaStream_t stream) {
  if (n <= 0) return;
  index_detail::convert_kernel<<<grid_for(n, index_detail::kThreads), index_detail::kThreads, 0, stream>>>(n, in, out);
  TESSERA_CHECK_LAUNCH();
}

/// Whether a[i] != b[i] for some i < n, the two compared as int64 (waits for `stream`).
template <class A, class B>
bool any_difference(std::int64_t n, const A* a, const B* b, cudaStream_t stream) {
  if (n <= 0) return false;
  DeviceBuffer<int> differs(1, stream);
  differs.fill_bytes(0, stream);
  index_detail::differs_kernel<<<grid_for(n, index_detail::kThreads), index_detail::kThreads, 0, stream>>>(
      n, a, b, differs.data());
  TESSERA_CHECK_LAUNCH();
  return read_scalar(differs.data(), stream) != 0;
}

/// For keys sorted ascending whose segment is key / key_scale (a row times the row's key span,
/// plus what orders entries within it): starts[s] = the position of segment s's first key, for
/// s = 0 .. segments (segments + 1 values; starts[segments] = n), empty segments included.
template <class T>
void segment_starts(const T* sorted, std::int64_t n, std::int64_t segments, T key_scale, std::int64_t* starts,
                    cudaStream_t stream) {
  index_detail::segment_starts_kernel<<<grid_for(segments + 1, index_detail::kThreads), index_detail::kThreads, 0,
                                        stream>>>(sorted, n, segments, key_scale, starts);
  TESSERA_CHECK_LAUNCH();
}

/// The number of low bits a radix sort must look at for keys up to `max_key` (at least 1).
inline int significant_bits(std::uint64_t max_key) {
  int bits = 1;
  while (bits < 64 && (max_key >> bits)) ++bits;
  return bits;
}

}  // namespace tessera::cuda
