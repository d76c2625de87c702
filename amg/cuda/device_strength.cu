// Strength graph on the device, bit-for-bit the host amg::strength_graph:
//  1. diagonal block norms, one thread per node, squares summed in the host's order;
//  2. one thread per node row walks its dofs' rows merged by column node (the rows are sorted
//     and nodes are contiguous dof ranges, so each block's entries are consecutive in every
//     row), sums each block's squares in the host's order (rows of the node, then entries) and
//     tests it: a counting pass, a scan, then an emitting pass that writes every strong edge
//     in both directions as a 64-bit key (row << 32 | col) with its strength;
//  3. radix sort of the keys, reduce-by-key with max (the host's union_max of S and S^T),
//     row offsets by binary search.
// Products and sums use __dmul_rn/__dadd_rn so nvcc cannot contract them into FMAs, which
// would change the last bit against the host (x86-64 builds without FMA); sqrt and division
// are IEEE-rounded on the device, as on the host.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include "amg/cuda/device_setup_phases.hpp"
#include "amg/cuda/setup_phase_kernels.cuh"
#include "local/core/error.hpp"

namespace tessera::amg::gpu {
namespace {

using detail::kBlock;
using detail::thread_index;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::grid_for;

struct CsrView {
  const std::int64_t* row_ptr;
  const std::int32_t* col;
  const double* val;
};

__global__ void fill_node_of_dof(const std::int64_t* node_ptr, std::int64_t num_nodes, std::int32_t* node_of) {
  const std::int64_t n = thread_index();
  if (n >= num_nodes) return;
  for (std::int64_t d = node_ptr[n]; d < node_ptr[n + 1]; ++d) node_of[d] = static_cast<std::int32_t>(n);
}

__global__ void diagonal_block_norms(CsrView a, const std::int64_t* node_ptr, const std::int32_t* node_of,
                                     std::int64_t num_nodes, double* norm) {
  const std::int64_t n = thread_index();
  if (n >= num_nodes) return;
  double sum_sq = 0.0;
  for (std::int64_t i = node_ptr[n]; i < node_ptr[n + 1]; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      if (node_of[a.col[p]] == n) sum_sq = __dadd_rn(sum_sq, __dmul_rn(a.val[p], a.val[p]));
  norm[n] = sqrt(sum_sq);
}

/// The host's test of one block: scaled strength, or 0 when the edge is not strong.
__device__ double strong_value(double block_sum_sq, double norm_n, double norm_m, double theta) {
  const double scale = sqrt(__dmul_rn(norm_n, norm_m));
  const double strength = scale > 0 ? sqrt(block_sum_sq) / scale : 0.0;
  return strength > 0 && strength >= theta ? strength : 0.0;
}

/// Where a node row's strong edges go: counted first, then written in both directions.
struct EdgeSink {
  std::int64_t* count;          // counting pass: strong edges of each node row
  const std::int64_t* offset;   // emitting pass: first slot of each node row
  std::int64_t total;           // number of strong (directed) edges: reverse copies start here
  std::uint64_t* keys;
  double* values;

  __device__ void emit(std::int64_t slot, std::int64_t n, std::int64_t m, double strength) const {
    keys[slot] = static_cast<std::uint64_t>(n) << 32 | static_cast<std::uint64_t>(m);
    keys[total + slot] = static_cast<std::uint64_t>(m) << 32 | static_cast<std::uint64_t>(n);
    values[slot] = values[total + slot] = strength;
  }
};

/// Scalar nodes (one dof each): a block is one entry, whose sum of squares is v*v exactly.
template <bool kEmit>
__global__ void scalar_strong_edges(CsrView a, std::int64_t rows, const double* norm, double theta, EdgeSink sink) {
  const std::int64_t n = thread_index();
  if (n >= rows) return;
  std::int64_t slot = kEmit ? sink.offset[n] : 0;
  for (std::int64_t p = a.row_ptr[n]; p < a.row_ptr[n + 1]; ++p) {
    const std::int32_t m = a.col[p];
    if (m == n) continue;
    const double s = strong_value(__dmul_rn(a.val[p], a.val[p]), norm[n], norm[m], theta);
    if (s == 0.0) continue;
    if (kEmit) sink.emit(slot, n, m, s);
    ++slot;
  }
  if (!kEmit) sink.count[n] = slot;
}

/// General nodes: the node's dof rows merged by column node; `cursor` (one per dof, owned by
/// the dof's node thread) holds each row's position.
template <bool kEmit>
__global__ void block_strong_edges(CsrView a, const std::int64_t* node_ptr, const std::int32_t* node_of,
                                   std::int64_t num_nodes, const double* norm, double theta, std::int64_t* cursor,
                                   EdgeSink sink) {
  const std::int64_t n = thread_index();
  if (n >= num_nodes) return;
  const std::int64_t first = node_ptr[n], last = node_ptr[n + 1];
  for (std::int64_t i = first; i < last; ++i) cursor[i] = a.row_ptr[i];
  std::int64_t slot = kEmit ? sink.offset[n] : 0;
  for (;;) {
    std::int32_t m = INT32_MAX;  // next column node: the smallest under the cursors
    for (std::int64_t i = first; i < last; ++i)
      if (cursor[i] < a.row_ptr[i + 1]) m = min(m, node_of[a.col[cursor[i]]]);
    if (m == INT32_MAX) break;
    double sum_sq = 0.0;
    for (std::int64_t i = first; i < last; ++i) {
      std::int64_t p = cursor[i];
      for (; p < a.row_ptr[i + 1] && node_of[a.col[p]] == m; ++p) sum_sq = __dadd_rn(sum_sq, __dmul_rn(a.val[p], a.val[p]));
      cursor[i] = p;
    }
    if (m == n) continue;
    const double s = strong_value(sum_sq, norm[n], norm[m], theta);
    if (s == 0.0) continue;
    if (kEmit) sink.emit(slot, n, m, s);
    ++slot;
  }
  if (!kEmit) sink.count[n] = slot;
}

__global__ void split_keys(const std::uint64_t* keys, std::int64_t count, std::int32_t* col) {
  const std::int64_t e = thread_index();
  if (e < count) col[e] = static_cast<std::int32_t>(keys[e] & 0xffffffffu);
}

struct Max {
  __device__ double operator()(double x, double y) const { return x < y ? y : x; }
};

/// Bits needed to hold every value in [0, max_value] (at least 1).
int bits_for_max(std::uint64_t max_value) {
  int bits = 1;
  while (bits < 64 && (max_value >> bits)) ++bits;
  return bits;
}

/// The strong edges of every node row, both directions, unsorted (2 * count entries).
struct DirectedEdges {
  std::int64_t count = 0;
  DeviceBuffer<std::uint64_t> keys;
  DeviceBuffer<double> values;
};

template <class Launch>
DirectedEdges strong_edges(std::int64_t num_nodes, cudaStream_t s, Launch&& launch) {
  DeviceBuffer<std::int64_t> count(num_nodes + 1, s), offset(num_nodes + 1, s);
  count.fill_bytes(0, s);
  launch(EdgeSink{count.data(), nullptr, 0, nullptr, nullptr}, std::false_type{});
  detail::exclusive_scan_with_total(count.data(), offset.data(), num_nodes, s);
  DirectedEdges e;
  e.count = tessera::cuda::read_scalar(offset.data() + num_nodes, s);
  e.keys.allocate(2 * e.count, s);
  e.values.allocate(2 * e.count, s);
  if (e.count) launch(EdgeSink{nullptr, offset.data(), e.count, e.keys.data(), e.values.data()}, std::true_type{});
  return e;
}

/// Sorts the directed edges, keeps the larger strength of duplicate (row, col) pairs, and
/// builds the CSR graph.
tessera::cuda::DeviceCsr<double> assemble_graph(DirectedEdges& e, std::int64_t num_nodes, cudaStream_t s) {
  const std::int64_t n = 2 * e.count;
  tessera::cuda::DeviceCsr<double> g;
  g.rows = g.cols = num_nodes;
  g.row_ptr.allocate(num_nodes + 1, s);
  DeviceBuffer<std::uint64_t> sorted_keys(n, s), unique_keys(n, s);
  DeviceBuffer<double> sorted_values(n, s), max_values(n, s);
  DeviceBuffer<std::int64_t> runs(1, s);
  if (n > 0) {
    const int end_bit = 32 + bits_for_max(static_cast<std::uint64_t>(num_nodes));
    tessera::cuda::cub_call(s, [&](void* tmp, std::size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(tmp, bytes, e.keys.data(), sorted_keys.data(), e.values.data(),
                                             sorted_values.data(), n, 0, end_bit, s);
    });
    tessera::cuda::cub_call(s, [&](void* tmp, std::size_t& bytes) {
      return cub::DeviceReduce::ReduceByKey(tmp, bytes, sorted_keys.data(), unique_keys.data(), sorted_values.data(),
                                            max_values.data(), runs.data(), Max{}, n, s);
    });
    g.nnz = tessera::cuda::read_scalar(runs.data(), s);
  }
  detail::row_offsets_from_keys<<<grid_for(num_nodes + 1, kBlock), kBlock, 0, s>>>(unique_keys.data(), g.nnz,
                                                                                  num_nodes, g.row_ptr.data());
  TESSERA_CHECK_LAUNCH();
  g.col_idx.allocate(g.nnz, s);
  g.values.allocate(g.nnz, s);
  if (g.nnz > 0) {
    split_keys<<<grid_for(g.nnz, kBlock), kBlock, 0, s>>>(unique_keys.data(), g.nnz, g.col_idx.data());
    TESSERA_CHECK_LAUNCH();
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(g.values.data(), max_values.data(), g.nnz * sizeof(double),
                                       cudaMemcpyDeviceToDevice, s));
  }
  return g;
}

}  // namespace

tessera::cuda::DeviceCsr<double> device_strength_graph(const tessera::cuda::DeviceCsr<double>& a,
                                                       const std::int64_t* node_ptr, std::int64_t num_nodes,
                                                       double theta, cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "AMG strength: the matrix must be square, it is ", a.rows, " x ", a.cols);
  TESSERA_REQUIRE_INPUT(num_nodes >= 0 && num_nodes <= a.rows && a.rows < INT32_MAX, "AMG strength: ", num_nodes,
                        " nodes for ", a.rows, " rows");
  TESSERA_REQUIRE_INPUT(theta >= 0, "AMG strength: theta must be non-negative, got ", theta);
  const std::int64_t covered = num_nodes > 0 ? tessera::cuda::read_scalar(node_ptr + num_nodes, s) : 0;
  TESSERA_REQUIRE_INPUT(covered == a.rows, "AMG strength: the node layout covers ", covered, " dofs, the matrix has ",
                        a.rows, " rows");
  const CsrView view{a.row_ptr.data(), a.col_idx.data(), a.values.data()};
  DeviceBuffer<std::int32_t> node_of(a.rows, s);
  DeviceBuffer<double> norm(num_nodes, s);
  const unsigned grid = grid_for(num_nodes, kBlock);
  if (num_nodes > 0) {
    fill_node_of_dof<<<grid, kBlock, 0, s>>>(node_ptr, num_nodes, node_of.data());
    diagonal_block_norms<<<grid, kBlock, 0, s>>>(view, node_ptr, node_of.data(), num_nodes, norm.data());
    TESSERA_CHECK_LAUNCH();
  }
  DirectedEdges edges;
  if (num_nodes == a.rows) {  // one dof per node: the host's scalar path
    edges = strong_edges(num_nodes, s, [&](EdgeSink sink, auto emit) {
      if (num_nodes == 0) return;
      scalar_strong_edges<decltype(emit)::value><<<grid, kBlock, 0, s>>>(view, num_nodes, norm.data(), theta, sink);
      TESSERA_CHECK_LAUNCH();
    });
  } else {
    DeviceBuffer<std::int64_t> cursor(a.rows, s);
    edges = strong_edges(num_nodes, s, [&](EdgeSink sink, auto emit) {
      block_strong_edges<decltype(emit)::value><<<grid, kBlock, 0, s>>>(view, node_ptr, node_of.data(), num_nodes,
                                                                       norm.data(), theta, cursor.data(), sink);
      TESSERA_CHECK_LAUNCH();
    });
  }
  return assemble_graph(edges, num_nodes, s);
}

}  // namespace tessera::amg::gpu
