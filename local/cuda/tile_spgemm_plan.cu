// Work lists of the numeric phase, built once by the symbolic phase: each output tile-row is
// either pulled (one warp per pair of C tiles, MMA) or pushed (one warp per A tile, FMA
// scatter with atomics), chosen by the cost model in tile_spgemm_internal.hpp.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "local/cuda/cub_call.cuh"
#include "local/cuda/tile_spgemm_internal.hpp"

namespace tessera::cuda {
namespace {

constexpr int kBlock = 256;

__device__ bool is_push_row(const TilePattern& a, const TilePattern& c, const std::int64_t* pairs, std::int64_t row) {
  const std::int64_t a_tiles = a.row_ptr[row + 1] - a.row_ptr[row];
  const std::int64_t c_pairs = (c.row_ptr[row + 1] - c.row_ptr[row] + 1) / 2;
  return c_pairs > 0 && a_tiles * c_pairs > kPushRatio * pairs[row];
}

__global__ void task_counts(TilePattern a, TilePattern c, const std::int64_t* pairs, std::int64_t* pull_count,
                            std::int64_t* push_count) {
  const std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (row >= a.tile_rows) return;
  const bool push = is_push_row(a, c, pairs, row);
  pull_count[row] = push ? 0 : (c.row_ptr[row + 1] - c.row_ptr[row] + 1) / 2;
  push_count[row] = push ? a.row_ptr[row + 1] - a.row_ptr[row] : 0;
}

__global__ void expand_tasks(TilePattern a, TilePattern c, const std::int64_t* pull_start,
                             const std::int64_t* push_start, std::int32_t* pull_row, std::int64_t* pull_tile,
                             std::int32_t* push_a_row, std::int64_t* push_a_tile) {
  const std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (row >= a.tile_rows) return;
  for (std::int64_t i = 0, t = pull_start[row]; t < pull_start[row + 1]; ++i, ++t) {
    pull_row[t] = static_cast<std::int32_t>(row);
    pull_tile[t] = c.row_ptr[row] + 2 * i;
  }
  for (std::int64_t i = 0, t = push_start[row]; t < push_start[row + 1]; ++i, ++t) {
    push_a_row[t] = static_cast<std::int32_t>(row);
    push_a_tile[t] = a.row_ptr[row] + i;
  }
}

struct HasCount {
  const std::int64_t* count;
  __device__ bool operator()(std::int32_t row) const { return count[row] > 0; }
};

}  // namespace

WorkLists build_work_lists(const TilePattern& a, const TilePattern& c, const std::int64_t* pairs, cudaStream_t s) {
  WorkLists w;
  const std::int64_t rows = a.tile_rows;
  if (rows == 0) return w;
  {
    DeviceBuffer<std::int64_t> total(1, s);
    cub_call(s, [&](void* t, std::size_t& n) { return cub::DeviceReduce::Sum(t, n, pairs, total.data(), rows, s); });
    w.tile_pairs = read_scalar(total.data(), s);
  }
  DeviceBuffer<std::int64_t> pull_count(rows, s), push_count(rows, s), pull_start(rows + 1, s), push_start(rows + 1, s);
  task_counts<<<grid_for(rows, kBlock), kBlock, 0, s>>>(a, c, pairs, pull_count.data(), push_count.data());
  TESSERA_CHECK_LAUNCH();
  const std::int64_t pulls = exclusive_scan_total(pull_count.data(), pull_start.data(), rows, s);
  const std::int64_t pushes = exclusive_scan_total(push_count.data(), push_start.data(), rows, s);
  w.pull_row.allocate(pulls, s);
  w.pull_tile.allocate(pulls, s);
  w.push_a_row.allocate(pushes, s);
  w.push_a_tile.allocate(pushes, s);
  expand_tasks<<<grid_for(rows, kBlock), kBlock, 0, s>>>(a, c, pull_start.data(), push_start.data(), w.pull_row.data(),
                                                       w.pull_tile.data(), w.push_a_row.data(), w.push_a_tile.data());
  TESSERA_CHECK_LAUNCH();
  if (pushes) {
    DeviceBuffer<std::int32_t> push_rows(rows, s);
    DeviceBuffer<std::int64_t> selected(1, s);
    cub_call(s, [&](void* t, std::size_t& n) {
      return cub::DeviceSelect::If(t, n, thrust::counting_iterator<std::int32_t>(0), push_rows.data(),
                                   selected.data(), rows, HasCount{push_count.data()}, s);
    });
    const std::int64_t n_push_rows = read_scalar(selected.data(), s);
    w.push_rows.allocate(n_push_rows, s);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(w.push_rows.data(), push_rows.data(), n_push_rows * sizeof(std::int32_t),
                                       cudaMemcpyDeviceToDevice, s));
  }
  return w;
}

}  // namespace tessera::cuda
