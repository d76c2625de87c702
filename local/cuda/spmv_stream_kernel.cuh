#pragma once
// CSR-Stream SpMV (Greathouse & Daga, SC14) for short rows, and the dispatch that every
// row-epilogue kernel (spmv, fused residual, damped Jacobi) goes through.
//
// A thread block owns a run of whole rows whose nonzeros fit in shared memory (the plan's
// StreamBlocks guarantee nonzeros + rows <= the capacity of the plan's shape). Phase 1 streams the block's
// val and col with fully coalesced, mutually independent loads (no row_ptr on the critical
// path, no idle lanes on 7-entry rows), then gathers x and stores the products. Phase 2
// reduces each row from shared memory with one lane, or a few when the block's rows are
// long, and hands the sum to the same epilogue as csr_vector_kernel. The block shape
// (threads x products per thread, spmv_plan.hpp) is a template pair, picked from the plan;
// so is the width of the row bounds the reduction reads (int64 row_ptr, or the plan's 16-bit
// offsets from the block's first nonzero: 2 bytes a row instead of 8).
#include <cuda_runtime.h>

#include <cstdint>

#include "local/cuda/spmv_kernels.cuh"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::cuda::kernels {

/// Static shared memory stops at 48 KB; a larger staging array is dynamic, with the opt-in.
inline constexpr std::size_t kStaticSharedLimit = 48 * 1024;

template <class T, int Threads, int PerThread>
inline constexpr std::size_t kStreamStagingBytes = std::size_t{Threads} * PerThread * sizeof(T);

template <class T, int Threads, int PerThread>
inline constexpr bool kStreamStagingIsDynamic = kStreamStagingBytes<T, Threads, PerThread> > kStaticSharedLimit;

/// The block's product array: capacity = Threads * PerThread entries of T.
template <class T, int Threads, int PerThread>
__device__ __forceinline__ T* stream_staging() {
  if constexpr (kStreamStagingIsDynamic<T, Threads, PerThread>) {
    extern __shared__ __align__(16) unsigned char stream_dynamic_staging[];
    return reinterpret_cast<T*>(stream_dynamic_staging);
  } else {
    __shared__ T staged[Threads * PerThread];
    return staged;
  }
}

/// Lanes per row for the reduction: a power of two up to 32, no more than the block's mean
/// row length, with every row of the block reduced in one pass when the rows allow it.
template <int Threads>
__device__ __forceinline__ int stream_lanes_per_row(int rows, int nonzeros) {
  int lanes = 1;
  while (lanes < 32 && 2 * lanes * rows <= Threads && lanes * rows < nonzeros) lanes *= 2;
  return lanes;
}

/// Phase 1: products[i] = val[base+i] * x[col[base+i]] for i < count (count <= capacity).
/// All val/col loads of a thread are issued before its first dependent x gather.
template <int Threads, int PerThread, class T>
__device__ __forceinline__ void stage_products(std::int64_t base, int count, const std::int32_t* __restrict__ col,
                                               const T* __restrict__ val, const T* __restrict__ x, T* products) {
  T v[PerThread];
  std::int32_t c[PerThread];
#pragma unroll
  for (int k = 0; k < PerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * Threads;
    v[k] = i < count ? load_stream(val + base + i) : T(0);
    c[k] = i < count ? load_stream(col + base + i) : 0;
  }
#pragma unroll
  for (int k = 0; k < PerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * Threads;
    if (i < count) products[i] = v[k] * __ldg(x + c[k]);
  }
}

/// Row `local` of the block's start: row_ptr[first_row + local] (int64), or with Offsets16 its
/// 16-bit offset from the block's first nonzero (`count` past the last row).
template <bool Offsets16>
__device__ __forceinline__ std::int64_t stream_row_bound(const std::int64_t* __restrict__ row_ptr,
                                                         const std::uint16_t* __restrict__ local_offset,
                                                         std::int64_t first_row, int local, int rows, int count) {
  if constexpr (Offsets16) return local == rows ? count : __ldg(local_offset + first_row + local);
  else return __ldg(row_ptr + first_row + local);
}

template <int Threads, int PerThread, bool Offsets16, class T, class Epilogue>
__global__ void __launch_bounds__(Threads) csr_stream_kernel(const std::int64_t* __restrict__ block_start,
                                                             const std::int64_t* __restrict__ row_ptr,
                                                             const std::uint16_t* __restrict__ local_offset,
                                                             const std::int32_t* __restrict__ col,
                                                             const T* __restrict__ val, const T* __restrict__ x,
                                                             Epilogue epilogue) {
  T* products = stream_staging<T, Threads, PerThread>();
  const std::int64_t first_row = __ldg(block_start + blockIdx.x), end_row = __ldg(block_start + blockIdx.x + 1);
  if (first_row == end_row) return;  // block-uniform: a block that holds no row
  const std::int64_t base = __ldg(row_ptr + first_row);
  // Both fit in int: the plan bounds nonzeros + rows of a block by the shape's capacity.
  const int count = static_cast<int>(__ldg(row_ptr + end_row) - base);
  const int rows = static_cast<int>(end_row - first_row);
  const int lanes = stream_lanes_per_row<Threads>(rows, count);  // block-uniform
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const int rows_per_pass = Threads / lanes;
  // The first pass's row bounds are loaded before the staging loads, so they are in flight
  // together instead of one more memory round trip after the barrier (usually the only pass).
  const int first_local = static_cast<int>(threadIdx.x) / lanes;
  const std::int64_t bias = Offsets16 ? 0 : base;  // what a row bound is relative to
  std::int64_t first_begin = 0, first_end = 0;
  if (first_local < rows) {
    first_begin = stream_row_bound<Offsets16>(row_ptr, local_offset, first_row, first_local, rows, count);
    first_end = stream_row_bound<Offsets16>(row_ptr, local_offset, first_row, first_local + 1, rows, count);
  }
  stage_products<Threads, PerThread>(base, count, col, val, x, products);
  __syncthreads();

  // Every thread runs every pass (the bound is block-uniform), so the shuffles see full warps.
  for (int pass = 0; pass < rows; pass += rows_per_pass) {
    const int local = pass + first_local;
    T sum = 0;
    if (local < rows) {
      const std::int64_t row_begin =
          pass == 0 ? first_begin : stream_row_bound<Offsets16>(row_ptr, local_offset, first_row, local, rows, count);
      const std::int64_t row_end =
          pass == 0 ? first_end : stream_row_bound<Offsets16>(row_ptr, local_offset, first_row, local + 1, rows, count);
      const int begin = static_cast<int>(row_begin - bias), end = static_cast<int>(row_end - bias);
      for (int i = begin + lane; i < end; i += lanes) sum += products[i];
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(kFullMask, sum, offset, lanes);
    if (lane == 0 && local < rows) epilogue(first_row + local, sum);  // empty rows get epilogue(row, 0)
  }
}

template <StreamShape Shape, bool Offsets16, class T, class Epilogue>
void launch_csr_stream_shape(const StreamBlocks& blocks, const std::int64_t* row_ptr, const std::int32_t* col,
                             const T* val, const T* x, Epilogue epilogue, cudaStream_t stream) {
  constexpr int Threads = stream_threads(Shape), PerThread = stream_products_per_thread(Shape);
  constexpr bool dynamic = kStreamStagingIsDynamic<T, Threads, PerThread>;
  constexpr std::size_t dynamic_bytes = dynamic ? kStreamStagingBytes<T, Threads, PerThread> : 0;
  auto* kernel = csr_stream_kernel<Threads, PerThread, Offsets16, T, Epilogue>;
  // Per device and kernel; cheap, and setting it on every launch stays right on any device.
  if constexpr (dynamic)
    TESSERA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(dynamic_bytes)));
  kernel<<<static_cast<unsigned>(blocks.count), Threads, dynamic_bytes, stream>>>(
      blocks.start.data(), row_ptr, blocks.local_offset.data(), col, val, x, epilogue);
  TESSERA_CHECK_LAUNCH();
}

template <bool Offsets16, class T, class Epilogue>
void launch_csr_stream_offsets(StreamShape shape, const StreamBlocks& blocks, const std::int64_t* row_ptr,
                               const std::int32_t* col, const T* val, const T* x, Epilogue epilogue,
                               cudaStream_t stream) {
  switch (shape) {
    case StreamShape::automatic: break;  // resolved by the caller
    case StreamShape::t256x8:
      launch_csr_stream_shape<StreamShape::t256x8, Offsets16>(blocks, row_ptr, col, val, x, epilogue, stream);
      break;
    case StreamShape::t256x16:
      launch_csr_stream_shape<StreamShape::t256x16, Offsets16>(blocks, row_ptr, col, val, x, epilogue, stream);
      break;
    case StreamShape::t512x8:
      launch_csr_stream_shape<StreamShape::t512x8, Offsets16>(blocks, row_ptr, col, val, x, epilogue, stream);
      break;
    case StreamShape::t512x16:
      launch_csr_stream_shape<StreamShape::t512x16, Offsets16>(blocks, row_ptr, col, val, x, epilogue, stream);
      break;
  }
}

/// CSR-Stream with the plan's shape (and row offsets); the blocks must have been cut for that
/// shape's capacity.
template <class T, class Epilogue>
void launch_csr_stream(StreamShape shape, const StreamBlocks& blocks, const std::int64_t* row_ptr,
                       const std::int32_t* col, const T* val, const T* x, Epilogue epilogue, cudaStream_t stream) {
  if (blocks.count == 0) return;
  if (shape == StreamShape::automatic) shape = kDefaultStreamShape;
  TESSERA_ASSERT(blocks.capacity == stream_capacity(shape), "CSR-Stream blocks cut for capacity ", blocks.capacity,
                 " launched with shape ", to_string(shape));
  if (blocks.offsets16()) launch_csr_stream_offsets<true>(shape, blocks, row_ptr, col, val, x, epilogue, stream);
  else launch_csr_stream_offsets<false>(shape, blocks, row_ptr, col, val, x, epilogue, stream);
}

/// One pass over A with the row sums handed to `epilogue`: the stream kernel when the plan
/// chose it, the vector kernel otherwise (nnz-split plans too: it adds rows into a y scaled
/// beforehand, crossing rows in a second pass, so no pass holds every complete row sum).
template <class T, class Epilogue>
void launch_csr_rows(const SpmvPlan& plan, const DeviceCsr<T>& a, const T* x, Epilogue epilogue, cudaStream_t stream) {
  if (plan.algorithm == SpmvAlgorithm::stream) {
    launch_csr_stream(plan.stream_shape, plan.stream_blocks, a.row_ptr.data(), a.col_idx.data(), a.values.data(), x,
                      epilogue, stream);
    return;
  }
  launch_csr_vector(plan.threads_per_row, plan.rows_per_group, a.rows, a.row_ptr.data(), a.col_idx.data(),
                    a.values.data(), x, epilogue, stream);
}

}  // namespace tessera::cuda::kernels
