#pragma once
// Value maps of the device numeric phases (DeviceCompactSpgemm, DeviceDistSpgemm,
// DeviceDistPtap). A symbolic phase fixes where every value of an operand comes from; the
// numeric phase is then only gathers (dst[i] = src[map[i]]) and fixed-order segmented sums,
// no searching and no atomics.
//
// The maps are found by tagging: run the function that builds an operand (extended_block,
// values_in_row_order, to_tiles, ...) on a copy whose values are their own indices, and read the
// indices back. The device then reproduces the host's data movement exactly, by construction.
// The tile conversions run on the device (tessera::cuda::to_tiles and csr_positions, the host
// conversions bit for bit), and so does A_ext's tagging when A is held there
// (tagged_extended_block): at 7.1M rows the host conversions took seconds. Built only with CUDA.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/dist_matrix.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::dist::gpu {

/// One logical array of values stored as up to three consecutive device arrays (e.g. a
/// matrix's local block, its non-local block, and received values): index i < ends[0] reads
/// parts[0][i], i < ends[1] reads parts[1][i - ends[0]], and so on.
struct ValueSources {
  const double* parts[3] = {nullptr, nullptr, nullptr};
  std::int64_t ends[3] = {0, 0, 0};
  int count = 0;

  ValueSources& add(const double* values, std::int64_t n);
  std::int64_t size() const { return count ? ends[count - 1] : 0; }
};

/// Two consecutive device arrays as one output (a matrix's local, then non-local values).
struct ValueTargets {
  double* first = nullptr;
  std::int64_t first_size = 0;
  double* second = nullptr;
};

/// out[i] = sources[map[i]] for i < map.size().
void gather_values(const ValueSources& sources, const tessera::cuda::DeviceBuffer<std::int64_t>& map,
                   const ValueTargets& out, cudaStream_t stream);

/// out[o] = 0 + sources[order[seg[o]]] + sources[order[seg[o]+1]] + ... left to right: the
/// host's sequential sum, so the result is bitwise the host's and the same on every call.
void segmented_sum(const ValueSources& sources, const tessera::cuda::DeviceBuffer<std::int64_t>& seg_ptr,
                   const tessera::cuda::DeviceBuffer<std::int64_t>& order, const ValueTargets& out,
                   cudaStream_t stream);

/// The plan of segmented_sum that adds contributions output by output in index order:
/// contribution i (of target.size()) is added into output target[i] < outputs and reads
/// source[i]. seg_ptr gets outputs + 1 offsets, order the sources grouped by output, ascending
/// i within each output (a stable radix sort by target), so the sums are the host's sequential
/// ones. On `stream`.
void plan_sum_in_index_order(const tessera::cuda::DeviceBuffer<std::int64_t>& target,
                             const tessera::cuda::DeviceBuffer<std::int64_t>& source, std::int64_t outputs,
                             tessera::cuda::DeviceBuffer<std::int64_t>& seg_ptr,
                             tessera::cuda::DeviceBuffer<std::int64_t>& order, cudaStream_t stream);

/// 0, 1, ..., n-1 as doubles (exact below 2^53): the tags.
HostArray<double> index_tags(std::int64_t n, std::int64_t first = 0);
/// Tags back to indices.
template <class Allocator>
std::vector<std::int64_t> tag_indices(const std::vector<double, Allocator>& tagged) {
  std::vector<std::int64_t> indices(tagged.size());
  for (std::size_t i = 0; i < tagged.size(); ++i) indices[i] = static_cast<std::int64_t>(tagged[i]);
  return indices;
}
/// `m` with each block's values replaced by their index in [local | non-local].
DistMatrix tagged(const DistMatrix& m);
/// A device matrix's values as one logical array [local | non-local], the order of tagged().
ValueSources matrix_values(const DeviceDistMatrix& m);

/// An operand of the tile SpGEMM whose values are refreshed by a gather: its tile pattern on
/// the device and, per tile value, the index of its source value. Built by the device
/// conversion (tessera::cuda::to_tiles, the host's bit for bit), which carries the tags into
/// tile order; the tile values are zero until the first refresh.
struct TiledOperand {
  enum class Orientation { as_is, transposed };

  tessera::cuda::DeviceTileMatrix<double> tiles;
  tessera::cuda::DeviceBuffer<std::int64_t> source;

  /// `tagged` carries, as each entry's value, the index of its source value. Uploaded on `stream`.
  TiledOperand(const Csr<double>& tagged, cudaStream_t stream);
  /// The same from a tagged matrix on the device; `transposed`: the tiles of its transpose.
  TiledOperand(const tessera::cuda::DeviceCsr<double>& tagged, Orientation orientation, cudaStream_t stream);
  void refresh(const ValueSources& sources, cudaStream_t stream);
};

/// For a product's tile pattern: CSR position k (the host product's entry order) -> tile value
/// position (tessera::cuda::csr_positions, downloaded: synchronises `stream`).
std::vector<std::int64_t> csr_to_tile_positions(const tessera::cuda::DeviceTileMatrix<double>& c, cudaStream_t stream);

}  // namespace tessera::dist::gpu
