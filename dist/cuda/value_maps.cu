#include "dist/cuda/value_maps.hpp"

#include <algorithm>

#include <cub/device/device_radix_sort.cuh>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/index_kernels.cuh"
#include "local/cuda/tile_convert.hpp"

namespace tessera::dist::gpu {

namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t n) { return static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535)); }

__device__ double read(const ValueSources& s, std::int64_t i) {
  if (i < s.ends[0]) return s.parts[0][i];
  if (i < s.ends[1]) return s.parts[1][i - s.ends[0]];
  return s.parts[2][i - s.ends[1]];
}

__device__ void write(const ValueTargets& t, std::int64_t i, double v) {
  if (i < t.first_size)
    t.first[i] = v;
  else
    t.second[i - t.first_size] = v;
}

__global__ void gather_kernel(ValueSources s, const std::int64_t* __restrict__ map, std::int64_t n, ValueTargets t) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    write(t, i, read(s, map[i]));
}

// One thread per output: segments are short (a C entry gets a few partial sums), and the
// sequential left-to-right sum is what makes the result bitwise the host's.
__global__ void segmented_sum_kernel(ValueSources s, const std::int64_t* __restrict__ seg,
                                     const std::int64_t* __restrict__ order, std::int64_t n, ValueTargets t) {
  for (std::int64_t o = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; o < n; o += std::int64_t(gridDim.x) * blockDim.x) {
    double sum = 0.0;
    for (std::int64_t k = seg[o]; k < seg[o + 1]; ++k) sum += read(s, order[k]);
    write(t, o, sum);
  }
}

__global__ void tags_to_indices_kernel(const double* __restrict__ tags, std::int64_t n, std::int64_t* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = static_cast<std::int64_t>(tags[i]);
}

}  // namespace

ValueSources& ValueSources::add(const double* values, std::int64_t n) {
  TESSERA_ASSERT(count < 3, "ValueSources holds at most three parts");
  parts[count] = values;
  ends[count] = size() + n;
  ++count;
  return *this;
}

void gather_values(const ValueSources& sources, const tessera::cuda::DeviceBuffer<std::int64_t>& map,
                   const ValueTargets& out, cudaStream_t stream) {
  const auto n = static_cast<std::int64_t>(map.size());
  if (n == 0) return;
  gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(sources, map.data(), n, out);
  TESSERA_CHECK_LAUNCH();
}

void segmented_sum(const ValueSources& sources, const tessera::cuda::DeviceBuffer<std::int64_t>& seg_ptr,
                   const tessera::cuda::DeviceBuffer<std::int64_t>& order, const ValueTargets& out,
                   cudaStream_t stream) {
  const std::int64_t n = static_cast<std::int64_t>(seg_ptr.size()) - 1;
  if (n <= 0) return;
  segmented_sum_kernel<<<blocks_for(n), kThreads, 0, stream>>>(sources, seg_ptr.data(), order.data(), n, out);
  TESSERA_CHECK_LAUNCH();
}

void plan_sum_in_index_order(const tessera::cuda::DeviceBuffer<std::int64_t>& target,
                             const tessera::cuda::DeviceBuffer<std::int64_t>& source, std::int64_t outputs,
                             tessera::cuda::DeviceBuffer<std::int64_t>& seg_ptr,
                             tessera::cuda::DeviceBuffer<std::int64_t>& order, cudaStream_t stream) {
  const auto n = static_cast<std::int64_t>(target.size());
  TESSERA_ASSERT(static_cast<std::int64_t>(source.size()) == n, "plan_sum_in_index_order: ", n, " targets, ",
                 source.size(), " sources");
  order.allocate(static_cast<std::size_t>(n), stream);
  seg_ptr.allocate(static_cast<std::size_t>(outputs + 1), stream);
  tessera::cuda::DeviceBuffer<std::int64_t> sorted_target(static_cast<std::size_t>(n), stream);
  if (n > 0)  // CUB's radix sort is stable: equal targets keep their index order
    tessera::cuda::cub_call(stream, [&](void* tmp, std::size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(tmp, bytes, target.data(), sorted_target.data(), source.data(),
                                             order.data(), n, 0, tessera::cuda::significant_bits(outputs), stream);
    });
  tessera::cuda::segment_starts(sorted_target.data(), n, outputs, std::int64_t(1), seg_ptr.data(), stream);
}

HostArray<double> index_tags(std::int64_t n, std::int64_t first) {
  HostArray<double> tags(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) tags[i] = static_cast<double>(first + i);
  return tags;
}

DistMatrix tagged(const DistMatrix& m) {
  DistMatrix t = m;
  t.local.values = index_tags(m.local.nnz());
  t.nonlocal.values = index_tags(m.nonlocal.nnz(), m.local.nnz());
  return t;
}

ValueSources matrix_values(const DeviceDistMatrix& m) {
  return ValueSources().add(m.local.values.data(), m.local.nnz).add(m.nonlocal.values.data(), m.nonlocal.nnz);
}

TiledOperand::TiledOperand(const Csr<double>& tagged, cudaStream_t stream)
    : TiledOperand(tessera::cuda::upload(tagged, stream), Orientation::as_is, stream) {}

TiledOperand::TiledOperand(const tessera::cuda::DeviceCsr<double>& tagged, Orientation orientation, cudaStream_t stream)
    : tiles(orientation == Orientation::transposed ? tessera::cuda::to_tiles_transposed(tagged, stream)
                                                   : tessera::cuda::to_tiles(tagged, stream)) {
  // The conversion carries the tags into tile order: they are the map.
  source.allocate(static_cast<std::size_t>(tiles.nnz), stream);
  if (tiles.nnz > 0) {
    tags_to_indices_kernel<<<blocks_for(tiles.nnz), kThreads, 0, stream>>>(tiles.values.data(), tiles.nnz, source.data());
    TESSERA_CHECK_LAUNCH();
  }
  tiles.values.fill_bytes(0, stream);  // values arrive with the first refresh
}

void TiledOperand::refresh(const ValueSources& sources, cudaStream_t stream) {
  gather_values(sources, source, ValueTargets{tiles.values.data(), tiles.nnz, nullptr}, stream);
}

std::vector<std::int64_t> csr_to_tile_positions(const tessera::cuda::DeviceTileMatrix<double>& c, cudaStream_t stream) {
  return tessera::cuda::csr_positions(c, stream).download(stream);
}

}  // namespace tessera::dist::gpu
