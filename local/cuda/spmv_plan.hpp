#pragma once
// Analysis done once per matrix and reused by every SpMV/SpMM on it: row-length statistics
// (what picks the kernel) and, for the load-balanced path, the split of the nonzeros into
// equal chunks with the row holding each chunk's first nonzero.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_matrix.hpp"

namespace tessera::cuda {

/// Row-length statistics of a CSR pattern.
struct RowStats {
  std::int64_t rows = 0, nnz = 0, max_row = 0, empty_rows = 0;
  double mean = 0;  // nnz / rows
  double cv = 0;    // coefficient of variation: standard deviation / mean (0 when mean is 0)
};

/// One pass over row_ptr on the device (reads rows+1 offsets, returns after a sync).
RowStats row_stats(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz, cudaStream_t stream);

/// Nonzeros split into chunks of `chunk_nnz`; first_row[c] is the row of nonzero
/// min(c*chunk_nnz, nnz-1), for c = 0..count (count+1 entries), so every nonzero of chunk c
/// lies in a row of [first_row[c], first_row[c+1]].
struct NnzChunks {
  std::int64_t chunk_nnz = 0, count = 0;
  DeviceBuffer<std::int64_t> first_row;
};

NnzChunks make_nnz_chunks(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                          std::int64_t chunk_nnz, cudaStream_t stream);

/// Number of multiprocessors of the current device.
int sm_count();

enum class SpmvAlgorithm {
  automatic,  // vector unless the rows are skewed (see prefers_nnz_split)
  vector,     // a power-of-two group of threads per row, warp-shuffle reduction
  nnz_split,  // equal nonzero chunks per warp, segmented warp reduction, atomic row updates
};

const char* to_string(SpmvAlgorithm a);

struct SpmvOptions {
  SpmvAlgorithm algorithm = SpmvAlgorithm::automatic;
  int threads_per_row = 0;       // vector path: 2..32 (power of two); 0 picks it from the mean
  int rows_per_group = 0;        // vector path: 1, 2, 4 or 8 rows per group of lanes; 0 = automatic
  std::int64_t chunk_nnz = 0;    // nnz_split path: nonzeros per warp (multiple of 32); 0 = 256
};

struct SpmvPlan {
  RowStats stats;
  SpmvAlgorithm algorithm = SpmvAlgorithm::vector;
  int threads_per_row = 2;
  int rows_per_group = 4;
  NnzChunks chunks;  // nnz_split only
};

/// Smallest power of two >= the mean row length (>= half of it past 16), clamped to [2, 32]:
/// one or two passes of the group cover a typical row.
int threads_per_row_for(double mean_row_length);

/// Rows per group of lanes for the vector kernel (2: measured, see spmv_plan.cu).
int rows_per_group_for(int threads_per_row);

/// The load-balanced path wins when row lengths vary a lot (cv > 1), when one row is far
/// longer than the rest (max > 32*mean and > 1024: one group would serialise on it), or when
/// few long rows leave most of the chip idle (fewer warps than 4 per SM at mean > 64).
bool prefers_nnz_split(const RowStats& stats, int threads_per_row, int sms);

SpmvPlan make_spmv_plan(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                        const SpmvOptions& options, cudaStream_t stream);

template <class T>
SpmvPlan make_spmv_plan(const DeviceCsr<T>& a, const SpmvOptions& options = {}, cudaStream_t stream = nullptr) {
  return make_spmv_plan(a.row_ptr.data(), a.rows, a.nnz, options, stream);
}

}  // namespace tessera::cuda
