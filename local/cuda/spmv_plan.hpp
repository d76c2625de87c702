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
  /// Scratch of the nnz-split products (spmv_kernels.cuh): chunk c's partial sums, `columns`
  /// of them (T = double or float), of the row that goes on past its end. Every product on the
  /// plan writes it, so products with one plan must not run concurrently (order the streams).
  mutable DeviceBuffer<double> tails;
  template <class T>
  T* tail_data() const { return reinterpret_cast<T*>(tails.data()); }
};

/// `columns`: the number of right-hand sides the tails hold (1 for SpMV, k for SpMM).
NnzChunks make_nnz_chunks(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                          std::int64_t chunk_nnz, cudaStream_t stream, std::int64_t columns = 1);

/// CSR-Stream (Greathouse & Daga, SC14): a block of `threads` threads stages the products of a
/// run of whole rows in shared memory, `products_per_thread` per thread; capacity = their
/// product. The default for large matrices is 512 x 8 = 4096, for small ones 256 x 8 = 2048
/// (see automatic_stream_shape): with 8 products a thread, eight independent val/col loads are
/// in flight before the first x gather (96 bytes a thread in fp64), and 64 bytes of staged fp64
/// products a thread (16 KB a 256-thread block, 32 KB a 512-thread one) let 2048 threads share
/// one SM's 228 KB. Every shape is compiled, for the sweep (tessera-spmv --sweep) that picks the
/// defaults: 16 products a thread put twice the bytes in flight, 512 threads halve the blocks
/// (and the per-block row-bound reads and barriers) for the same per-thread staging. 512 x 16
/// in fp64 stages 64 KB, past the 48 KB static limit: it uses dynamic shared memory with the
/// opt-in attribute (3 blocks per SM).
enum class StreamShape {
  automatic,  // the default below (what the plan stores is never automatic)
  t256x8,
  t256x16,
  t512x8,
  t512x16,
};
/// H100 sweep (2026-11-22, tessera-spmv --sweep, FP64, % of copy bandwidth; docs/performance.md):
///   shape     poisson3d:256  poisson3d27:160  elasticity3d:80
///   256x8        93.2%          87.1%            88.3%
///   256x16       77.7%          77.2%            79.6%
///   512x8        97.7%          95.1%            95.7%
///   512x16       89.0%          86.7%            85.8%
/// 512 x 8 stages as many products per thread as 256 x 8 (eight independent loads in flight)
/// with half the blocks, so half the per-block row-bound reads, barriers and tail imbalance;
/// with 16 products a thread ptxas chose 32-40 registers, too few to hold sixteen loads in
/// flight, and those shapes measured slower. The automatic shape is 512 x 8 when the matrix gives every SM a few
/// such blocks, else 256 x 8 (small matrices, coarse AMG levels: twice the blocks).
inline constexpr StreamShape kDefaultStreamShape = StreamShape::t512x8;
inline constexpr StreamShape kSmallMatrixStreamShape = StreamShape::t256x8;
inline constexpr int kStreamBlocksPerSmForLargeShape = 4;

/// Threads per block and products per thread of a shape; automatic = the default.
constexpr int stream_threads(StreamShape shape) {
  switch (shape) {
    case StreamShape::automatic: return stream_threads(kDefaultStreamShape);
    case StreamShape::t256x8: case StreamShape::t256x16: return 256;
    case StreamShape::t512x8: case StreamShape::t512x16: return 512;
  }
  return 0;  // not a shape (make_spmv_plan refuses it)
}
constexpr int stream_products_per_thread(StreamShape shape) {
  switch (shape) {
    case StreamShape::automatic: return stream_products_per_thread(kDefaultStreamShape);
    case StreamShape::t256x8: case StreamShape::t512x8: return 8;
    case StreamShape::t256x16: case StreamShape::t512x16: return 16;
  }
  return 0;
}
constexpr int stream_capacity(StreamShape shape) { return stream_threads(shape) * stream_products_per_thread(shape); }

/// "256x8", ...; parse_stream_shape also takes "auto" (InputError otherwise).
const char* to_string(StreamShape shape);
StreamShape parse_stream_shape(const std::string& name);

/// Every concrete shape, in the enum's order (the sweep and the tests run them all; the
/// defaults are kDefaultStreamShape and kSmallMatrixStreamShape above).
inline constexpr StreamShape kStreamShapes[] = {StreamShape::t256x8, StreamShape::t256x16, StreamShape::t512x8,
                                                StreamShape::t512x16};

/// The default shape's numbers (what the tests and the messages without a plan refer to).
inline constexpr int kStreamThreads = stream_threads(kDefaultStreamShape);
inline constexpr int kStreamProductsPerThread = stream_products_per_thread(kDefaultStreamShape);
inline constexpr int kStreamCapacity = stream_capacity(kDefaultStreamShape);

/// Row blocks for CSR-Stream: block b holds rows [start[b], start[b+1]), count+1 entries,
/// start[0] = 0, start[count] = rows. A block holds at most `capacity` nonzeros plus rows
/// together (so also at most that many rows); some blocks may hold no row.
struct StreamBlocks {
  std::int64_t count = 0;
  int capacity = 0;  // what the blocks were cut for: the kernel's staging must hold that many
  DeviceBuffer<std::int64_t> start;
  /// Optional (SpmvOptions::stream_offsets16): for every row, row_ptr[r] - row_ptr[first row of
  /// its block], in 16 bits (a block spans fewer than capacity <= 8192 nonzeros). The kernel
  /// then reads 2 bytes a row instead of 8, and row_ptr only at the block's two ends.
  DeviceBuffer<std::uint16_t> local_offset;
  bool offsets16() const { return local_offset.size() > 0; }
};

/// Cuts on the merge-path coordinate f(r) = row_ptr[r] + r: start[b] is the first row with
/// f(r) >= b*W, W = capacity - max_row. A block then spans f <= W + max_row = capacity. One
/// binary search per block, on the device. Needs max_row < capacity.
StreamBlocks make_stream_blocks(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                                std::int64_t max_row, int capacity, cudaStream_t stream);

/// Fills blocks.local_offset (rows entries) from the blocks' starts: one thread block per
/// stream block.
void make_stream_local_offsets(StreamBlocks& blocks, const std::int64_t* row_ptr, std::int64_t rows,
                               cudaStream_t stream);

/// Number of multiprocessors of the current device.
int sm_count();

enum class SpmvAlgorithm {
  automatic,  // vector unless the rows are skewed (see prefers_nnz_split)
  vector,     // a power-of-two group of threads per row, warp-shuffle reduction
  nnz_split,  // equal nonzero chunks per warp, segmented warp reduction, fixed-order fix-up of split rows
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
  StreamShape stream_shape = StreamShape::automatic;  // stream path: block shape; automatic = default
  bool stream_offsets16 = false;  // stream path: 16-bit row offsets within a block (sweep variant)
  int value_bytes = 8;            // 8 (FP64) or 4 (FP32): the automatic shape depends on it
};

/// A plan belongs to the row_ptr it was analysed from: its stats, chunks and blocks describe
/// that pattern. Entry points that take a plan refuse it for another matrix (InputError),
/// checked by the device address of row_ptr plus rows and nnz. Moving a DeviceCsr keeps its
/// buffers (the plan stays valid); a copy or re-upload has new ones and needs a new plan. The
/// check is best-effort: once the plan's matrix is freed, the stream-ordered pool may give its
/// row_ptr block to a new matrix, which then passes as the plan's own if rows and nnz match.
struct SpmvPlan {
  RowStats stats;
  const std::int64_t* row_ptr = nullptr;  // identity only, never read through
  StreamShape stream_shape = kDefaultStreamShape;
  SpmvAlgorithm algorithm = SpmvAlgorithm::vector;
  int threads_per_row = 2;
  int rows_per_group = 4;
  NnzChunks chunks;            // nnz_split only
  StreamBlocks stream_blocks;  // stream only
  /// Device bytes the plan holds (its chunk or block tables).
  std::int64_t bytes() const {
    return std::int64_t(chunks.first_row.bytes() + chunks.tails.bytes() + stream_blocks.start.bytes() +
                        stream_blocks.local_offset.bytes());
  }
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

/// CSR-Stream of this shape can take the matrix: its longest row fills at most half a block,
/// so every block's window W = capacity - max_row is at least half the capacity (blocks stay
/// full). A plan asked for stream on a matrix that fails this takes the automatic choice
/// among vector and nnz-split instead.
bool stream_fits(const RowStats& stats, StreamShape shape = kDefaultStreamShape);

/// Whether the automatic choice takes CSR-Stream (when it fits and the rows are not skewed):
/// rows of at most kStreamMaxMeanRow entries on average. H100 sweep with the 512 x 8 shape
/// (FP64, % of copy bandwidth, stream vs the best vector configuration): poisson3d:256 (mean 7)
/// 97.7% vs 85.6%, poisson3d27:160 (26.7) 95.1% vs 83.1%, elasticity3d:80 (78) 95.7% vs 84.7%
/// (with 256 x 8 on an H200 elasticity had gone the other way: 81.3% vs 86.8%, hence the old
/// threshold of 32). Longer mean rows were not measured: past 128 the vector kernel keeps them.
inline constexpr double kStreamMaxMeanRow = 128.0;
bool prefers_stream(const RowStats& stats);

/// FP32 stages half the bytes a product: the large shape that keeps as many bytes in flight a
/// thread is 512 x 16, with 16-bit row offsets (H100 sweep, FP32, % of copy bandwidth:
/// poisson3d:256 512x8 83.8%, 512x16 87.5%, 512x16 with 16-bit offsets 96.9%, cuSPARSE 84.3%;
/// poisson3d27:160 75.9%, 82.0%, 90.6%, cuSPARSE 85.4%).
inline constexpr StreamShape kFp32StreamShape = StreamShape::t512x16;

/// The shape an automatic plan takes: the large shape (kDefaultStreamShape, or kFp32StreamShape
/// for 4-byte values) when nnz + rows fill at least kStreamBlocksPerSmForLargeShape of its
/// blocks per SM or a row is too long for the small shape, else kSmallMatrixStreamShape.
StreamShape automatic_stream_shape(const RowStats& stats, int sms, int value_bytes = 8);

SpmvPlan make_spmv_plan(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                        const SpmvOptions& options, cudaStream_t stream);

template <class T>
SpmvPlan make_spmv_plan(const DeviceCsr<T>& a, SpmvOptions options = {}, cudaStream_t stream = nullptr) {
  options.value_bytes = int(sizeof(T));
  return make_spmv_plan(a.row_ptr.data(), a.rows, a.nnz, options, stream);
}

/// InputError naming `who` unless `plan` was made from this row_ptr (same address, rows, nnz).
void require_plan_of(const SpmvPlan& plan, const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                     const char* who);

template <class T>
void require_plan_of(const SpmvPlan& plan, const DeviceCsr<T>& a, const char* who) {
  require_plan_of(plan, a.row_ptr.data(), a.rows, a.nnz, who);
}

}  // namespace tessera::cuda
