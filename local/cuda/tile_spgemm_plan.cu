// Work lists of the numeric phase, built once by the symbolic phase. Every task is one warp
// per pair of C tiles; a tile-row's tasks either search A's row for the B tiles they need
// (pull) or, on skewed rows (the cost model in tile_spgemm_internal.hpp), walk a list of the
// row's useful tile pairs made here:
//   1. per skewed A tile, its useful pairs (non-empty boolean product with a B tile of row K)
//      are counted, per A tile and per task;
//   2. they are written in (row, A tile, B tile) order with their task as the key;
//   3. a stable radix sort by task keeps A's order inside each task, so each C element is
//      summed in a fixed order: the numeric phase needs no atomics and repeats bit for bit.
// Steps 2-3 run on batches of whole rows (TileSpgemmOptions::list_batch_bytes), each sorted
// into its place in the list: the lists keep 8 bytes a pair and 4 a task (its first pair,
// counted from its thread block's), and the scratch (16 bytes a pair) is one batch's. Where
// lists and scratch pass the budget (TileSpgemmOptions::list_bytes_limit), the skewed rows'
// tasks search like the others instead.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include "local/cuda/cub_call.cuh"
#include "local/cuda/tile_spgemm_internal.hpp"

namespace tessera::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

__device__ bool is_listed_row(const TilePattern& a, const TilePattern& c, const std::int64_t* pairs,
                              std::int64_t row) {
  const std::int64_t a_tiles = a.row_ptr[row + 1] - a.row_ptr[row];
  const std::int64_t c_pairs = (c.row_ptr[row + 1] - c.row_ptr[row] + 1) / 2;
  return c_pairs > 0 && a_tiles * c_pairs > kListRatio * pairs[row];
}

/// Per tile-row: its searched tasks, its listed tasks and its listed A tiles (one kind is 0;
/// without list_skewed, every row searches).
__global__ void task_counts(TilePattern a, TilePattern c, const std::int64_t* pairs, bool list_skewed,
                            std::int64_t* pull_count, std::int64_t* listed_count, std::int64_t* listed_a_count) {
  const std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (row >= a.tile_rows) return;
  const bool listed = list_skewed && is_listed_row(a, c, pairs, row);
  const std::int64_t tasks = (c.row_ptr[row + 1] - c.row_ptr[row] + 1) / 2;
  pull_count[row] = listed ? 0 : tasks;
  listed_count[row] = listed ? tasks : 0;
  listed_a_count[row] = listed ? a.row_ptr[row + 1] - a.row_ptr[row] : 0;
}

struct TaskStarts {
  const std::int64_t *pull, *listed_a;
};

/// Each searched task's tile-row, and each listed A tile's row and place in A.
__global__ void expand_tasks(TilePattern a, TaskStarts start, std::int32_t* pull_row, std::int32_t* listed_a_row,
                             std::int64_t* listed_a_tile) {
  const std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (row >= a.tile_rows) return;
  for (std::int64_t t = start.pull[row]; t < start.pull[row + 1]; ++t) pull_row[t] = static_cast<std::int32_t>(row);
  for (std::int64_t i = 0, t = start.listed_a[row]; t < start.listed_a[row + 1]; ++i, ++t) {
    listed_a_row[t] = static_cast<std::int32_t>(row);
    listed_a_tile[t] = a.row_ptr[row] + i;
  }
}

/// The row of each block of listed tasks' first task, and (entry `blocks`) of the last task.
__global__ void block_first_rows(std::int64_t rows, const std::int64_t* row_start, std::int64_t tasks,
                                 std::int64_t blocks, std::int32_t* block_row) {
  const std::int64_t b = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (b > blocks) return;
  const std::int64_t t = std::min(b * kTasksPerBlock, tasks - 1);
  block_row[b] = static_cast<std::int32_t>(row_of_task(row_start, 0, rows - 1, t));
}

/// The warp walks B's row K for A tile ka in order and calls f(kb, rank) for each B tile whose
/// boolean product with A(I,K) is not empty (rank: its place among them); returns their count.
template <class F>
__device__ std::int64_t for_useful_pairs(const TilePattern& a, const TilePattern& b, std::int64_t ka, int lane,
                                         F&& f) {
  const std::uint64_t a_bm = a.bitmap[ka];
  const std::int32_t k = a.col[ka];
  const std::int64_t end = b.row_ptr[k + 1];
  std::int64_t before = 0;
  for (std::int64_t base = b.row_ptr[k]; base < end; base += 32) {  // warp-uniform bounds
    const std::int64_t kb = base + lane;
    const bool useful = kb < end && tile::bool_product(a_bm, b.bitmap[kb]) != 0;
    const unsigned mask = __ballot_sync(0xffffffffu, useful);
    if (useful) f(kb, before + __popc(mask & ((1u << lane) - 1u)));
    before += __popc(mask);
  }
  return before;
}

/// The place of C's tile of column j in tile-row `row`: its task is the row's place / 2, and
/// place % 2 says which of the task's two tiles it is.
__device__ std::int64_t listed_slot(const TilePattern& c, std::int64_t row, std::int32_t j) {
  return dev::find_tile(c.col, c.row_ptr[row], c.row_ptr[row + 1], j) - c.row_ptr[row];
}

struct ListedATiles {
  const std::int32_t* row;
  const std::int64_t* tile;
  std::int64_t count;
};

/// Device arrays per tile-row (rows + 1): where its listed A tiles and its listed tasks start.
struct RowStartArrays {
  const std::int64_t* a_tile;
  const std::int64_t* task;
};

/// Scratch bytes a listed pair takes while its batch is made: its key twice (uint32, radix
/// sort double buffer) and its pair once more (the other buffer is its place in the list).
constexpr std::int64_t kBatchBytesPerPair = 2 * sizeof(std::uint32_t) + sizeof(ListedPair);
/// Pairs of a batch of several rows: keeps its task count, hence its keys, within 32 bits.
constexpr std::int64_t kMostBatchPairs = std::int64_t{1} << 30;

__global__ void __launch_bounds__(kBlock) count_listed_pairs(TilePattern a, TilePattern b, TilePattern c,
                                                             ListedATiles at, const std::int64_t* row_task_start,
                                                             std::int64_t* per_a_tile, std::int64_t* per_task) {
  const std::int64_t t = blockIdx.x * std::int64_t(kWarps) + threadIdx.x / 32;
  if (t >= at.count) return;  // warp-uniform
  const int lane = threadIdx.x % 32;
  const std::int64_t row = at.row[t];
  const std::int64_t n = for_useful_pairs(a, b, at.tile[t], lane, [&](std::int64_t kb, std::int64_t) {
    const std::int64_t slot = listed_slot(c, row, b.col[kb]);
    atomicAdd(reinterpret_cast<unsigned long long*>(per_task + row_task_start[row] + slot / 2), 1ull);
  });
  if (lane == 0) per_a_tile[t] = n;
}

/// Where a tile-row's listed A tiles, pairs (in the final list) and tasks start.
struct RowListStart {
  std::int64_t a_tile, pair, task;
};

/// A batch of consecutive listed rows, [begin, end). Whole rows, so whole tasks: sorting a
/// batch alone gives the same order as sorting all the pairs at once.
struct ListBatch {
  RowListStart begin, end;
  std::int64_t pairs() const { return end.pair - begin.pair; }
  std::int64_t tasks() const { return end.task - begin.task; }
};

/// Step 2 for one batch: its pairs in (row, A tile, B tile) order into out[0...], and into
/// task[0...] their tasks counted from the batch's first.
__global__ void __launch_bounds__(kBlock) write_listed_pairs(TilePattern a, TilePattern b, TilePattern c,
                                                             ListedATiles at, const std::int64_t* row_task_start,
                                                             const std::int64_t* a_tile_start, ListBatch batch,
                                                             std::uint32_t* task, ListedPair* out) {
  const std::int64_t t = batch.begin.a_tile + blockIdx.x * std::int64_t(kWarps) + threadIdx.x / 32;
  if (t >= batch.end.a_tile) return;  // warp-uniform
  const int lane = threadIdx.x % 32;
  const std::int64_t row = at.row[t], ka = at.tile[t], first = a_tile_start[t] - batch.begin.pair;
  const std::int64_t b_row_start = b.row_ptr[a.col[ka]];
  for_useful_pairs(a, b, ka, lane, [&](std::int64_t kb, std::int64_t rank) {
    const std::int64_t slot = listed_slot(c, row, b.col[kb]);
    task[first + rank] = static_cast<std::uint32_t>(row_task_start[row] + slot / 2 - batch.begin.task);
    out[first + rank] = {static_cast<std::int32_t>(ka - a.row_ptr[row]),
                         static_cast<std::int32_t>(2 * (kb - b_row_start) + (slot & 1))};
  });
}

/// Where each tile-row's listed A tiles, tasks and pairs start (rows + 1 of each).
__global__ void row_list_starts(std::int64_t rows, const std::int64_t* row_a_tile_start,
                                const std::int64_t* row_task_start, const std::int64_t* a_tile_pair_start,
                                RowListStart* starts) {
  const std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (row > rows) return;
  const std::int64_t a_tile = row_a_tile_start[row];
  starts[row] = {a_tile, a_tile_pair_start[a_tile], row_task_start[row]};
}

int bits_for(std::int64_t max_value) {
  int bits = 1;
  while (bits < 63 && (std::int64_t{1} << bits) <= max_value) ++bits;
  return bits;
}

/// Consecutive rows grouped into batches of at most `target` pairs (a longer row is a batch of
/// its own); rows without pairs are left out.
std::vector<ListBatch> plan_batches(const std::vector<RowListStart>& row_start, std::int64_t target) {
  std::vector<ListBatch> batches;
  const std::size_t rows = row_start.size() - 1;
  for (std::size_t r0 = 0, r1 = 0; r0 < rows; r0 = r1) {
    r1 = r0 + 1;
    while (r1 < rows && row_start[r1 + 1].pair - row_start[r0].pair <= target) ++r1;
    const ListBatch batch{row_start[r0], row_start[r1]};
    if (batch.pairs() > 0) batches.push_back(batch);
  }
  return batches;
}

std::int64_t most_pairs(const std::vector<ListBatch>& batches) {
  std::int64_t most = 0;
  for (const ListBatch& batch : batches) most = std::max(most, batch.pairs());
  return most;
}

/// Each block's first pair (and, entry `blocks`, the end of the list), and each task's first
/// pair counted from its block's. A task has at most 2 pairs an A tile of its row, and a row at
/// most 2^28 A tiles (int32 columns), so a block's last task starts below 7 * 2^29 < 2^32.
__global__ void split_pair_starts(const std::int64_t* task_pair_start, std::int64_t tasks, std::int64_t blocks,
                                  std::int64_t* block_pair_start, std::uint32_t* pair_offset) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i <= blocks) block_pair_start[i] = task_pair_start[std::min(i * kTasksPerBlock, tasks)];
  if (i >= tasks) return;
  const std::int64_t block_first = i / kTasksPerBlock * kTasksPerBlock;
  pair_offset[i] = static_cast<std::uint32_t>(task_pair_start[i] - task_pair_start[block_first]);
}

/// w.block_pair_start and w.pair_offset from the listed tasks' pair counts (`per_task`, freed).
void task_pair_offsets(std::int64_t tasks, DeviceBuffer<std::int64_t>& per_task, WorkLists& w, cudaStream_t s) {
  DeviceBuffer<std::int64_t> task_pair_start(tasks + 1, s);
  exclusive_scan_total(per_task.data(), task_pair_start.data(), tasks, s);
  per_task.release();
  const std::int64_t blocks = listed_blocks(tasks);
  w.block_pair_start.allocate(blocks + 1, s);
  w.pair_offset.allocate(tasks, s);
  split_pair_starts<<<grid_for(std::max(tasks, blocks + 1), kBlock), kBlock, 0, s>>>(
      task_pair_start.data(), tasks, blocks, w.block_pair_start.data(), w.pair_offset.data());
  TESSERA_CHECK_LAUNCH();
}

/// Steps 2-3 of the header, batch by batch into `w.listed_pairs` (n pairs in all): written with
/// their tasks as keys, then sorted by a stable radix sort on the batch's key bits. A batch's
/// scratch (keys twice, pairs once: 16 bytes a pair) is reused by the next.
void write_and_sort(const TilePattern& a, const TilePattern& b, const TilePattern& c, const ListedATiles& at,
                    const std::int64_t* row_task_start, const std::int64_t* a_tile_start,
                    const std::vector<ListBatch>& batches, std::int64_t n, WorkLists& w, cudaStream_t s) {
  const std::int64_t most = most_pairs(batches);
  DeviceBuffer<std::uint32_t> key(most, s), key_other(most, s);
  DeviceBuffer<ListedPair> pairs_other(most, s);
  w.listed_pairs.allocate(n, s);
  for (const ListBatch& batch : batches) {
    ListedPair* out = w.listed_pairs.data() + batch.begin.pair;
    write_listed_pairs<<<grid_for(batch.end.a_tile - batch.begin.a_tile, kWarps), kBlock, 0, s>>>(
        a, b, c, at, row_task_start, a_tile_start, batch, key.data(), out);
    TESSERA_CHECK_LAUNCH();
    cub::DoubleBuffer<std::uint32_t> keys(key.data(), key_other.data());
    cub::DoubleBuffer<ListedPair> values(out, pairs_other.data());
    const int bits = bits_for(batch.tasks() - 1);
    cub_call(s, [&](void* t, std::size_t& bytes) {  // stable: A's order survives inside each task
      return cub::DeviceRadixSort::SortPairs(t, bytes, keys, values, batch.pairs(), 0, bits, s);
    });
    if (values.Current() != out)
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(out, values.Current(), batch.pairs() * sizeof(ListedPair),
                                         cudaMemcpyDeviceToDevice, s));
  }
}

/// The listed rows' useful pairs, grouped by task in A's order, if making them fits in `limit`
/// bytes (-1: half the free device memory), batch by batch within options.list_batch_bytes;
/// returns the number of batches (0: not made).
std::int64_t list_pairs(const TilePattern& a, const TilePattern& b, std::int64_t b_tile_cols, const TilePattern& c,
                        const ListedATiles& at, const RowStartArrays& row, std::int64_t tasks,
                        const TileSpgemmOptions& options, WorkLists& w, cudaStream_t s) {
  const std::int64_t rows = a.tile_rows;
  DeviceBuffer<std::int64_t> per_a_tile(at.count, s), a_tile_start(at.count + 1, s), per_task(tasks, s);
  per_task.fill_bytes(0, s);
  count_listed_pairs<<<grid_for(at.count, kWarps), kBlock, 0, s>>>(a, b, c, at, row.task, per_a_tile.data(),
                                                                    per_task.data());
  TESSERA_CHECK_LAUNCH();
  const std::int64_t n = exclusive_scan_total(per_a_tile.data(), a_tile_start.data(), at.count, s);
  per_a_tile.release();
  DeviceBuffer<RowListStart> starts(rows + 1, s);
  row_list_starts<<<grid_for(rows + 1, kBlock), kBlock, 0, s>>>(rows, row.a_tile, row.task, a_tile_start.data(),
                                                               starts.data());
  TESSERA_CHECK_LAUNCH();
  const auto row_start = starts.download(s);
  std::int64_t limit = options.list_bytes_limit;
  if (limit < 0) {
    std::size_t free = 0, total = 0;
    TESSERA_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    limit = static_cast<std::int64_t>(free / 2);
  }
  // Kept: 8 bytes a pair, 4 a task and 8 a block; each batch: 16 bytes a pair of scratch.
  const std::int64_t kept = n * std::int64_t(sizeof(ListedPair)) + tasks * std::int64_t(sizeof(std::uint32_t)) +
                            (listed_blocks(tasks) + 1) * std::int64_t(sizeof(std::int64_t));
  const std::int64_t scratch = std::min(options.list_batch_bytes, limit - kept);
  const auto batches =
      plan_batches(row_start, std::clamp<std::int64_t>(scratch / kBatchBytesPerPair, 0, kMostBatchPairs));
  // Places in a row are int32, doubled for `which`: B rows of 2^30 tiles or more are searched.
  if (kept + most_pairs(batches) * kBatchBytesPerPair > limit || b_tile_cols >= (std::int64_t{1} << 30)) return 0;
  task_pair_offsets(tasks, per_task, w, s);
  write_and_sort(a, b, c, at, row.task, a_tile_start.data(), batches, n, w, s);
  return static_cast<std::int64_t>(batches.size());
}

/// The A tiles of the listed rows, by row (rows + 1 starts) and one by one (row, place in A).
struct ListedATileBuffers {
  DeviceBuffer<std::int64_t> row_start;
  DeviceBuffer<std::int32_t> row;
  DeviceBuffer<std::int64_t> tile;
  ListedATiles view() const { return {row.data(), tile.data(), static_cast<std::int64_t>(row.size())}; }
};

/// Numbers every tile-row's tasks into w (pull_row, row_pull_start, listed_tasks,
/// row_listed_start, listed_block_row): skewed rows' as listed if list_skewed, else all as
/// searched; returns the listed rows' A tiles.
ListedATileBuffers number_tasks(const TilePattern& a, const TilePattern& c, const std::int64_t* pairs,
                                bool list_skewed, WorkLists& w, cudaStream_t s) {
  const std::int64_t rows = a.tile_rows;
  DeviceBuffer<std::int64_t> pull_count(rows, s), listed_count(rows, s), listed_a_count(rows, s);
  task_counts<<<grid_for(rows, kBlock), kBlock, 0, s>>>(a, c, pairs, list_skewed, pull_count.data(),
                                                      listed_count.data(), listed_a_count.data());
  TESSERA_CHECK_LAUNCH();
  ListedATileBuffers at;
  w.row_pull_start.allocate(rows + 1, s);
  w.row_listed_start.allocate(rows + 1, s);
  at.row_start.allocate(rows + 1, s);
  w.pull_row.allocate(exclusive_scan_total(pull_count.data(), w.row_pull_start.data(), rows, s), s);
  w.listed_tasks = exclusive_scan_total(listed_count.data(), w.row_listed_start.data(), rows, s);
  const std::int64_t listed_a = exclusive_scan_total(listed_a_count.data(), at.row_start.data(), rows, s);
  at.row.allocate(listed_a, s);
  at.tile.allocate(listed_a, s);
  expand_tasks<<<grid_for(rows, kBlock), kBlock, 0, s>>>(
      a, TaskStarts{w.row_pull_start.data(), at.row_start.data()}, w.pull_row.data(), at.row.data(), at.tile.data());
  TESSERA_CHECK_LAUNCH();
  const std::int64_t blocks = listed_blocks(w.listed_tasks);
  w.listed_block_row.allocate(w.listed_tasks ? blocks + 1 : 0, s);
  if (w.listed_tasks) {
    block_first_rows<<<grid_for(blocks + 1, kBlock), kBlock, 0, s>>>(rows, w.row_listed_start.data(), w.listed_tasks,
                                                                    blocks, w.listed_block_row.data());
    TESSERA_CHECK_LAUNCH();
  }
  return at;
}

}  // namespace

WorkLists build_work_lists(const TilePattern& a, const TilePattern& b, std::int64_t b_tile_cols,
                           const TilePattern& c, const std::int64_t* pairs, const TileSpgemmOptions& options,
                           cudaStream_t s) {
  WorkLists w;
  const std::int64_t rows = a.tile_rows;
  if (rows == 0) return w;
  {
    DeviceBuffer<std::int64_t> total(1, s);
    cub_call(s, [&](void* t, std::size_t& n) { return cub::DeviceReduce::Sum(t, n, pairs, total.data(), rows, s); });
    w.tile_pairs = read_scalar(total.data(), s);
  }
  ListedATileBuffers at = number_tasks(a, c, pairs, true, w, s);
  const std::int64_t listed = w.listed_tasks;
  if (listed == 0) return w;
  const RowStartArrays row_starts{at.row_start.data(), w.row_listed_start.data()};
  w.list_batches = list_pairs(a, b, b_tile_cols, c, at.view(), row_starts, listed, options, w, s);
  if (w.list_batches == 0) number_tasks(a, c, pairs, false, w, s);  // the lists did not fit: all search
  return w;
}

}  // namespace tessera::cuda
