#pragma once
// Analysis done once per matrix and reused by every SpMV/SpMM on it: row-length statistics
// (what picks the kernel), for the load-balanced path the split of the nonzeros into equal
// chunks with the row holding each chunk's first nonzero, and for CSR-Stream the row blocks.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

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

/// CSR-Stream (Greathouse & Daga, SC14): a block of kStreamThreads threads stages the
/// products of a run of whole rows in shared memory, kStreamProductsPerThread per thread.
/// Capacity 2048: eight independent val/col loads per thread are in flight before the first
/// x gather (96 bytes a thread in fp64, far above what hides HBM latency at full occupancy),
/// and 16 KB of fp64 products a block lets 8 blocks (2048 threads) share one SM's 228 KB.
inline constexpr int kStreamThreads = 256;
inline constexpr int kStreamProductsPerThread = 8;
inline constexpr int kStreamCapacity = kStreamThreads * kStreamProductsPerThread;

/// Row blocks for CSR-Stream: block b holds rows [start[b], start[b+1]), count+1 entries,
/// start[0] = 0, start[count] = rows. A block holds at most kStreamCapacity nonzeros plus
/// rows together (so also at most that many rows); some blocks may hold no row.
struct StreamBlocks {
  std::int64_t count = 0;
  DeviceBuffer<std::int64_t> start;
};

/// Cuts on the merge-path coordinate f(r) = row_ptr[r] + r: start[b] is the first row with
/// f(r) >= b*W, W = kStreamCapacity - max_row. A block then spans f <= W + max_row =
/// kStreamCapacity. One binary search per block, on the device. Needs max_row < capacity.
StreamBlocks make_stream_blocks(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                                std::int64_t max_row, cudaStream_t stream);

/// Number of multiprocessors of the current device.
int sm_count();

enum class SpmvAlgorithm {
  automatic,  // vector unless the rows are skewed (see prefers_nnz_split)
  vector,     // a power-of-two group of threads per row, warp-shuffle reduction
  nnz_split,  // equal nonzero chunks per warp, segmented warp reduction, atomic row updates
  stream,     // CSR-Stream: blocks of whole short rows, products staged in shared memory
};

const char* to_string(SpmvAlgorithm a);

/// "auto", "vector", "nnz-split" or "stream" (the drivers' --algorithm); InputError otherwise.
SpmvAlgorithm parse_spmv_algorithm(const std::string& name);

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
  NnzChunks chunks;            // nnz_split only
  StreamBlocks stream_blocks;  // stream only
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

/// CSR-Stream can take the matrix: its longest row fills at most half a block, so every
/// block's window W = capacity - max_row is at least half the capacity (blocks stay full).
/// A plan asked for stream on a matrix that fails this takes the automatic choice among
/// vector and nnz-split instead.
bool stream_fits(const RowStats& stats);

/// Whether the automatic choice takes CSR-Stream (when it fits and the rows are not skewed):
/// rows of at most kStreamMaxMeanRow entries on average. H200 sweep (tessera-spmv --sweep,
/// FP64, % of copy bandwidth, stream vs the best vector configuration): poisson3d:256 (mean 7)
/// 82.8% vs 71.0%, poisson3d27:160 (26.7) 76.7% vs 75.1%, elasticity3d:80 (78) 81.3% vs 86.8%;
/// FP32 poisson3d:256 78.9% vs 59.3%. Short rows leave a vector group's lanes idle and its
/// loads dependent; long rows fill the lanes and the vector kernel needs no staging.
inline constexpr double kStreamMaxMeanRow = 32.0;
bool prefers_stream(const RowStats& stats);

SpmvPlan make_spmv_plan(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                        const SpmvOptions& options, cudaStream_t stream);

template <class T>
SpmvPlan make_spmv_plan(const DeviceCsr<T>& a, const SpmvOptions& options = {}, cudaStream_t stream = nullptr) {
  return make_spmv_plan(a.row_ptr.data(), a.rows, a.nnz, options, stream);
}

}  // namespace tessera::cuda
