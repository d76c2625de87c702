#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <string>

#include "local/cuda/spmv_kernels.cuh"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::cuda {
namespace {

constexpr std::int64_t kDefaultChunkNnz = 256;

struct LengthMoments {
  double sum_sq;
  long long max_len, empty;
};

struct CombineMoments {
  __device__ LengthMoments operator()(const LengthMoments& a, const LengthMoments& b) const {
    return {a.sum_sq + b.sum_sq, a.max_len > b.max_len ? a.max_len : b.max_len, a.empty + b.empty};
  }
};

__global__ void row_moments_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr, double* sum_sq,
                                   unsigned long long* max_len, unsigned long long* empty) {
  LengthMoments m{0.0, 0, 0};
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const long long len = row_ptr[r + 1] - row_ptr[r];
    m.sum_sq += static_cast<double>(len) * static_cast<double>(len);
    m.max_len = len > m.max_len ? len : m.max_len;
    m.empty += len == 0;
  }
  using Reduce = cub::BlockReduce<LengthMoments, kernels::kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const LengthMoments total = Reduce(storage).Reduce(m, CombineMoments{});
  if (threadIdx.x == 0) {
    atomicAdd(sum_sq, total.sum_sq);
    atomicMax(max_len, static_cast<unsigned long long>(total.max_len));
    atomicAdd(empty, static_cast<unsigned long long>(total.empty));
  }
}

__global__ void chunk_first_row_kernel(std::int64_t chunks, std::int64_t chunk_nnz, std::int64_t nnz, std::int64_t rows,
                                       const std::int64_t* __restrict__ row_ptr, std::int64_t* first_row) {
  const std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (c > chunks) return;
  const std::int64_t idx = min(c * chunk_nnz, nnz - 1);
  first_row[c] = kernels::row_of(row_ptr, idx, 0, rows - 1);
}

/// First row r in [0, rows] with row_ptr[r] + r >= target (rows when there is none); the
/// merge-path coordinate row_ptr[r] + r grows strictly, one per row and one per nonzero.
__device__ std::int64_t first_row_at_or_past(const std::int64_t* __restrict__ row_ptr, std::int64_t rows,
                                             std::int64_t target) {
  std::int64_t lo = 0, hi = rows;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (row_ptr[mid] + mid < target) lo = mid + 1; else hi = mid;
  }
  return lo;
}

__global__ void stream_block_start_kernel(std::int64_t blocks, std::int64_t window, std::int64_t rows,
                                          const std::int64_t* __restrict__ row_ptr, std::int64_t* start) {
  const std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (b > blocks) return;
  // The last end is pinned to `rows` so trailing empty rows (f = nnz + r) are always covered.
  start[b] = b == blocks ? rows : first_row_at_or_past(row_ptr, rows, b * window);
}

// One thread block per stream block: its rows' starts relative to its first nonzero.
__global__ void stream_local_offset_kernel(const std::int64_t* __restrict__ start,
                                           const std::int64_t* __restrict__ row_ptr, std::uint16_t* local_offset) {
  const std::int64_t first = start[blockIdx.x], end = start[blockIdx.x + 1], base = row_ptr[first];
  for (std::int64_t r = first + threadIdx.x; r < end; r += blockDim.x)
    local_offset[r] = static_cast<std::uint16_t>(row_ptr[r] - base);
}

}  // namespace

RowStats row_stats(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz, cudaStream_t stream) {
  RowStats s;
  s.rows = rows;
  s.nnz = nnz;
  if (rows == 0) return s;
  DeviceBuffer<double> sum_sq(1, stream);
  DeviceBuffer<unsigned long long> counters(2, stream);  // max length, empty rows
  sum_sq.fill_bytes(0, stream);
  counters.fill_bytes(0, stream);
  const unsigned grid = std::min<unsigned>(kernels::blocks_for(rows), 4u * sm_count());
  row_moments_kernel<<<grid, kernels::kBlock, 0, stream>>>(rows, row_ptr, sum_sq.data(), counters.data(),
                                                           counters.data() + 1);
  TESSERA_CHECK_LAUNCH();
  const double squares = sum_sq.download(stream)[0];
  const std::vector<unsigned long long> c = counters.download(stream);
  s.max_row = static_cast<std::int64_t>(c[0]);
  s.empty_rows = static_cast<std::int64_t>(c[1]);
  s.mean = static_cast<double>(nnz) / static_cast<double>(rows);
  const double variance = std::max(0.0, squares / static_cast<double>(rows) - s.mean * s.mean);
  s.cv = s.mean > 0 ? std::sqrt(variance) / s.mean : 0.0;
  return s;
}

NnzChunks make_nnz_chunks(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz, std::int64_t chunk_nnz,
                          cudaStream_t stream, std::int64_t columns) {
  TESSERA_ASSERT(chunk_nnz > 0 && columns > 0, "chunk size and columns must be positive");
  NnzChunks c;
  c.chunk_nnz = chunk_nnz;
  c.count = nnz == 0 ? 0 : (nnz + chunk_nnz - 1) / chunk_nnz;
  if (c.count == 0) return c;
  c.first_row.allocate(static_cast<std::size_t>(c.count + 1), stream);
  c.tails.allocate(static_cast<std::size_t>(c.count * columns), stream);
  chunk_first_row_kernel<<<kernels::blocks_for(c.count + 1), kernels::kBlock, 0, stream>>>(
      c.count, chunk_nnz, nnz, rows, row_ptr, c.first_row.data());
  TESSERA_CHECK_LAUNCH();
  return c;
}

StreamBlocks make_stream_blocks(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                                std::int64_t max_row, int capacity, cudaStream_t stream) {
  TESSERA_ASSERT(max_row >= 0 && max_row < capacity, "CSR-Stream needs rows shorter than ", capacity,
                 " nonzeros, got a row of ", max_row);
  StreamBlocks blocks;
  blocks.capacity = capacity;
  const std::int64_t window = capacity - max_row;     // >= 1
  blocks.count = (nnz + rows + window - 1) / window;  // f(rows) = nnz + rows <= count * window
  TESSERA_ASSERT(blocks.count < (std::int64_t{1} << 31), "CSR-Stream: ", blocks.count, " blocks exceed the grid");
  if (blocks.count == 0) return blocks;
  blocks.start.allocate(static_cast<std::size_t>(blocks.count + 1), stream);
  stream_block_start_kernel<<<kernels::blocks_for(blocks.count + 1), kernels::kBlock, 0, stream>>>(
      blocks.count, window, rows, row_ptr, blocks.start.data());
  TESSERA_CHECK_LAUNCH();
  return blocks;
}

void make_stream_local_offsets(StreamBlocks& blocks, const std::int64_t* row_ptr, std::int64_t rows,
                               cudaStream_t stream) {
  TESSERA_ASSERT(blocks.capacity <= 65536, "16-bit block offsets need a capacity <= 65536, got ", blocks.capacity);
  if (blocks.count == 0 || rows == 0) return;
  blocks.local_offset.allocate(static_cast<std::size_t>(rows), stream);
  stream_local_offset_kernel<<<static_cast<unsigned>(blocks.count), kernels::kBlock, 0, stream>>>(
      blocks.start.data(), row_ptr, blocks.local_offset.data());
  TESSERA_CHECK_LAUNCH();
}

const char* to_string(StreamShape shape) {
  switch (shape) {
    case StreamShape::automatic: return "auto";
    case StreamShape::t256x8: return "256x8";
    case StreamShape::t256x16: return "256x16";
    case StreamShape::t512x8: return "512x8";
    case StreamShape::t512x16: return "512x16";
  }
  return "?";
}

StreamShape parse_stream_shape(const std::string& name) {
  if (name == "auto") return StreamShape::automatic;
  for (StreamShape shape : kStreamShapes)
    if (name == to_string(shape)) return shape;
  throw InputError("unknown CSR-Stream shape '" + name + "': expected auto, 256x8, 256x16, 512x8 or 512x16");
}

int sm_count() {
  int device = 0, sms = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

const char* to_string(SpmvAlgorithm a) {
  switch (a) {
    case SpmvAlgorithm::automatic: return "auto";
    case SpmvAlgorithm::vector: return "csr-vector";
    case SpmvAlgorithm::nnz_split: return "csr-nnz-split";
    case SpmvAlgorithm::stream: return "csr-stream";
  }
  return "?";
}

SpmvAlgorithm parse_spmv_algorithm(const std::string& name) {
  if (name == "auto") return SpmvAlgorithm::automatic;
  if (name == "vector") return SpmvAlgorithm::vector;
  if (name == "nnz-split") return SpmvAlgorithm::nnz_split;
  if (name == "stream") return SpmvAlgorithm::stream;
  throw InputError("unknown SpMV algorithm '" + name + "': expected auto, vector, nnz-split or stream");
}

int threads_per_row_for(double mean_row_length) {
  // Past 16 nonzeros a row, two passes of half as many lanes beat one pass (H100 sweep:
  // 27-point stencil, mean 26.7: 16 lanes 0.570 ms, 32 lanes 0.622 ms).
  const double target = mean_row_length > 16 ? mean_row_length / 2 : mean_row_length;
  int t = 2;
  while (t < 32 && t < target) t *= 2;
  return t;
}

// Two rows per group was fastest for every threads-per-row the plan picks on the H100 sweep
// (tessera-spmv --sweep: 7-, 27-point stencils, elasticity; 4 or 8 rows raise register use
// and lose occupancy).
int rows_per_group_for(int /*threads_per_row*/) { return 2; }

bool prefers_nnz_split(const RowStats& s, int threads_per_row, int sms) {
  if (s.nnz == 0) return false;
  const bool skewed = s.cv > 1.0;
  const bool one_long_row = s.max_row > 1024 && static_cast<double>(s.max_row) > 32.0 * s.mean;
  const double warps = static_cast<double>(s.rows) * threads_per_row / 32.0;
  const bool underfilled = s.mean > 64 && warps < 4.0 * sms;
  return skewed || one_long_row || underfilled;
}

bool stream_fits(const RowStats& s, StreamShape shape) { return s.max_row <= stream_capacity(shape) / 2; }

bool prefers_stream(const RowStats& s) { return s.nnz > 0 && s.mean <= kStreamMaxMeanRow; }

StreamShape automatic_stream_shape(const RowStats& s, int sms, int value_bytes) {
  const StreamShape large = value_bytes == 4 ? kFp32StreamShape : kDefaultStreamShape;
  if (!stream_fits(s, kSmallMatrixStreamShape)) return large;  // a row too long for the small one
  const std::int64_t large_blocks = (s.nnz + s.rows) / stream_capacity(large);
  return large_blocks >= std::int64_t(kStreamBlocksPerSmForLargeShape) * sms ? large : kSmallMatrixStreamShape;
}

namespace {

bool is_stream_shape(StreamShape shape) {
  if (shape == StreamShape::automatic) return true;
  for (StreamShape s : kStreamShapes)
    if (s == shape) return true;
  return false;
}

SpmvAlgorithm vector_or_nnz_split(const RowStats& stats, int threads_per_row) {
  return prefers_nnz_split(stats, threads_per_row, sm_count()) ? SpmvAlgorithm::nnz_split : SpmvAlgorithm::vector;
}

// Resolves `automatic`, and a stream request on a matrix whose longest row does not fit.
SpmvAlgorithm choose_algorithm(SpmvAlgorithm requested, const RowStats& stats, int threads_per_row, StreamShape shape) {
  if (requested == SpmvAlgorithm::stream)
    return stream_fits(stats, shape) ? requested : vector_or_nnz_split(stats, threads_per_row);
  if (requested != SpmvAlgorithm::automatic) return requested;
  const SpmvAlgorithm fallback = vector_or_nnz_split(stats, threads_per_row);
  const bool stream = fallback == SpmvAlgorithm::vector && stream_fits(stats, shape) && prefers_stream(stats);
  return stream ? SpmvAlgorithm::stream : fallback;
}

}  // namespace

SpmvPlan make_spmv_plan(const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz, const SpmvOptions& options,
                        cudaStream_t stream) {
  const int tpr = options.threads_per_row;
  TESSERA_REQUIRE_INPUT(tpr == 0 || (tpr >= 2 && tpr <= 32 && (tpr & (tpr - 1)) == 0),
                        "SpMV threads per row must be 0 (automatic) or a power of two in [2, 32], got ", tpr);
  const int rpg = options.rows_per_group;
  TESSERA_REQUIRE_INPUT(rpg == 0 || rpg == 1 || rpg == 2 || rpg == 4 || rpg == 8,
                        "SpMV rows per group must be 0 (automatic), 1, 2, 4 or 8, got ", rpg);
  TESSERA_REQUIRE_INPUT(options.chunk_nnz >= 0 && options.chunk_nnz % 32 == 0,
                        "SpMV chunk size must be 0 (automatic) or a positive multiple of 32, got ", options.chunk_nnz);
  TESSERA_REQUIRE_INPUT(is_stream_shape(options.stream_shape), "unknown CSR-Stream shape ",
                        static_cast<int>(options.stream_shape));
  SpmvPlan plan;
  plan.stats = row_stats(row_ptr, rows, nnz, stream);
  plan.row_ptr = row_ptr;
  const bool automatic_shape = options.stream_shape == StreamShape::automatic;
  plan.stream_shape = automatic_shape ? automatic_stream_shape(plan.stats, sm_count(), options.value_bytes)
                                                                     : options.stream_shape;
  plan.threads_per_row = tpr ? tpr : threads_per_row_for(plan.stats.mean);
  plan.rows_per_group = rpg ? rpg : rows_per_group_for(plan.threads_per_row);
  plan.algorithm = choose_algorithm(options.algorithm, plan.stats, plan.threads_per_row, plan.stream_shape);
  if (plan.algorithm == SpmvAlgorithm::stream) {
    plan.stream_blocks = make_stream_blocks(row_ptr, rows, nnz, plan.stats.max_row, stream_capacity(plan.stream_shape),
                                            stream);
    const bool fp32_large = automatic_shape && options.value_bytes == 4 && plan.stream_shape == kFp32StreamShape;
    if (options.stream_offsets16 || fp32_large) make_stream_local_offsets(plan.stream_blocks, row_ptr, rows, stream);
  }
  if (plan.algorithm == SpmvAlgorithm::nnz_split) {
    // Short chunks (8 steps of 32) keep many warps in flight; H100 sweep on rmat:22:16:
    // 256 nonzeros 0.658 ms, 1024 0.692 ms, 4096 0.745 ms.
    const std::int64_t chunk = options.chunk_nnz ? options.chunk_nnz : kDefaultChunkNnz;
    plan.chunks = make_nnz_chunks(row_ptr, rows, nnz, chunk, stream);
  }
  return plan;
}

void require_plan_of(const SpmvPlan& plan, const std::int64_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                     const char* who) {
  // Rows and nnz alone are not enough: a plan of another matrix of the same size would run
  // its stream blocks (cut from the other row_ptr) over this one's rows.
  TESSERA_REQUIRE_INPUT(plan.row_ptr == row_ptr && plan.stats.rows == rows && plan.stats.nnz == nnz, who,
                        ": the SpMV plan was made for another matrix (", plan.stats.rows, " rows, ", plan.stats.nnz,
                        " nonzeros, row_ptr at ", static_cast<const void*>(plan.row_ptr), "), not this one (", rows,
                        " rows, ", nnz, " nonzeros, row_ptr at ", static_cast<const void*>(row_ptr),
                        "); make the plan from this DeviceCsr (a copied or re-uploaded matrix needs its own)");
}

}  // namespace tessera::cuda
