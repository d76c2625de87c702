#include "dist/cuda/value_maps.hpp"

#include <algorithm>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/formats/convert.hpp"

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

TiledOperand::TiledOperand(const Csr<double>& tagged, cudaStream_t stream) {
  // The host conversion is the device one bit for bit (tile_convert.hpp), and it carries the
  // tags into tile order: that is the map. Done once per symbolic phase.
  TileMatrix<double> host = tessera::to_tiles(tagged);
  source.upload(tag_indices(host.values), stream);
  std::fill(host.values.begin(), host.values.end(), 0.0);
  tiles = tessera::cuda::upload(host, stream);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host arrays go out of scope
}

void TiledOperand::refresh(const ValueSources& sources, cudaStream_t stream) {
  gather_values(sources, source, ValueTargets{tiles.values.data(), tiles.nnz, nullptr}, stream);
}

std::vector<std::int64_t> csr_to_tile_positions(const tessera::cuda::DeviceTileMatrix<double>& c, cudaStream_t stream) {
  TileMatrix<double> host;
  host.rows = c.rows;
  host.cols = c.cols;
  host.tile_row_ptr = c.tile_row_ptr.download(stream);
  host.tile_col = c.tile_col.download(stream);
  host.bitmap = c.bitmap.download(stream);
  host.value_offset = c.value_offset.download(stream);
  const HostArray<double> tags = index_tags(c.nnz);
  host.values.assign(tags.begin(), tags.end());
  // A product without tiles may hold no offset arrays at all.
  if (host.tile_row_ptr.empty()) host.tile_row_ptr.assign(static_cast<std::size_t>(c.tile_rows()) + 1, 0);
  if (host.value_offset.empty()) host.value_offset.assign(1, 0);
  return tag_indices(tessera::to_csr(host).values);
}

}  // namespace tessera::dist::gpu
