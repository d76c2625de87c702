#pragma once
// CSR-Stream SpMV (Greathouse & Daga, SC14) for short rows, and the dispatch that every
// row-epilogue kernel (spmv, fused residual, damped Jacobi) goes through.
//
// A thread block owns a run of whole rows whose nonzeros fit in shared memory (the plan's
// StreamBlocks guarantee nonzeros + rows <= kStreamCapacity). Phase 1 streams the block's
// val and col with fully coalesced, mutually independent loads (no row_ptr on the critical
// path, no idle lanes on 7-entry rows), then gathers x and stores the products. Phase 2
// reduces each row from shared memory with one lane, or a few when the block's rows are
// long, and hands the sum to the same epilogue as csr_vector_kernel.
#include <cuda_runtime.h>

#include <cstdint>

#include "local/cuda/spmv_kernels.cuh"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::cuda::kernels {

/// Lanes per row for the reduction: a power of two up to 32, no more than the block's mean
/// row length, with every row of the block reduced in one pass when the rows allow it.
__device__ __forceinline__ int stream_lanes_per_row(int rows, int nonzeros) {
  int lanes = 1;
  while (lanes < 32 && 2 * lanes * rows <= kStreamThreads && lanes * rows < nonzeros) lanes *= 2;
  return lanes;
}

/// Phase 1: products[i] = val[base+i] * x[col[base+i]] for i < count (count <= capacity).
/// All val/col loads of a thread are issued before its first dependent x gather.
template <class T>
__device__ __forceinline__ void stage_products(std::int64_t base, int count, const std::int32_t* __restrict__ col,
                                               const T* __restrict__ val, const T* __restrict__ x, T* products) {
  T v[kStreamProductsPerThread];
  std::int32_t c[kStreamProductsPerThread];
#pragma unroll
  for (int k = 0; k < kStreamProductsPerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * kStreamThreads;
    v[k] = i < count ? load_stream(val + base + i) : T(0);
    c[k] = i < count ? load_stream(col + base + i) : 0;
  }
#pragma unroll
  for (int k = 0; k < kStreamProductsPerThread; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * kStreamThreads;
    if (i < count) products[i] = v[k] * __ldg(x + c[k]);
  }
}

template <class T, class Epilogue>
__global__ void __launch_bounds__(kStreamThreads) csr_stream_kernel(const std::int64_t* __restrict__ block_start,
                                                                    const std::int64_t* __restrict__ row_ptr,
                                                                    const std::int32_t* __restrict__ col,
                                                                    const T* __restrict__ val,
                                                                    const T* __restrict__ x, Epilogue epilogue) {
  __shared__ T products[kStreamCapacity];
  const std::int64_t first_row = __ldg(block_start + blockIdx.x), end_row = __ldg(block_start + blockIdx.x + 1);
  if (first_row == end_row) return;  // block-uniform: a block that holds no row
  const std::int64_t base = __ldg(row_ptr + first_row);
  // Both fit in int: the plan bounds nonzeros + rows of a block by kStreamCapacity.
  const int count = static_cast<int>(__ldg(row_ptr + end_row) - base);
  const int rows = static_cast<int>(end_row - first_row);
  const int lanes = stream_lanes_per_row(rows, count);  // block-uniform
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const int rows_per_pass = kStreamThreads / lanes;
  // The first pass's row bounds are loaded before the staging loads, so they are in flight
  // together instead of one more memory round trip after the barrier (usually the only pass).
  const int first_local = static_cast<int>(threadIdx.x) / lanes;
  std::int64_t first_begin = 0, first_end = 0;
  if (first_local < rows) {
    first_begin = __ldg(row_ptr + first_row + first_local);
    first_end = __ldg(row_ptr + first_row + first_local + 1);
  }
  stage_products(base, count, col, val, x, products);
  __syncthreads();

  // Every thread runs every pass (the bound is block-uniform), so the shuffles see full warps.
  for (int pass = 0; pass < rows; pass += rows_per_pass) {
    const int local = pass + first_local;
    T sum = 0;
    if (local < rows) {
      const std::int64_t row_begin = pass == 0 ? first_begin : __ldg(row_ptr + first_row + local);
      const std::int64_t row_end = pass == 0 ? first_end : __ldg(row_ptr + first_row + local + 1);
      const int begin = static_cast<int>(row_begin - base), end = static_cast<int>(row_end - base);
      for (int i = begin + lane; i < end; i += lanes) sum += products[i];
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(kFullMask, sum, offset, lanes);
    if (lane == 0 && local < rows) epilogue(first_row + local, sum);  // empty rows get epilogue(row, 0)
  }
}

template <class T, class Epilogue>
void launch_csr_stream(const StreamBlocks& blocks, const std::int64_t* row_ptr, const std::int32_t* col, const T* val,
                       const T* x, Epilogue epilogue, cudaStream_t stream) {
  if (blocks.count == 0) return;
  csr_stream_kernel<<<static_cast<unsigned>(blocks.count), kStreamThreads, 0, stream>>>(blocks.start.data(), row_ptr,
                                                                                        col, val, x, epilogue);
  TESSERA_CHECK_LAUNCH();
}

/// One pass over A with the row sums handed to `epilogue`: the stream kernel when the plan
/// chose it, the vector kernel otherwise (nnz-split plans too: its atomic row updates cannot
/// feed an epilogue that needs the complete row sum).
template <class T, class Epilogue>
void launch_csr_rows(const SpmvPlan& plan, const DeviceCsr<T>& a, const T* x, Epilogue epilogue, cudaStream_t stream) {
  if (plan.algorithm == SpmvAlgorithm::stream) {
    launch_csr_stream(plan.stream_blocks, a.row_ptr.data(), a.col_idx.data(), a.values.data(), x, epilogue, stream);
    return;
  }
  launch_csr_vector(plan.threads_per_row, plan.rows_per_group, a.rows, a.row_ptr.data(), a.col_idx.data(),
                    a.values.data(), x, epilogue, stream);
}

}  // namespace tessera::cuda::kernels
