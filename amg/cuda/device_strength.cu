// Strength graph on the device, bit-for-bit the host amg::strength_graph:
//  1. diagonal block norms, one thread per node, squares summed in the host's order;
//  2. one thread per node row walks its dofs' rows merged by column node (the rows are sorted
//     and nodes are contiguous dof ranges, so each block's entries are consecutive in every
//     row), sums each block's squares in the host's order (rows of the node, then entries) and
//     tests it: a counting pass, a scan, then an emitting pass that writes S row by row, its
//     columns increasing -- already CSR;
//  3. the host's union_max(S, S^T). Scalar nodes whose A has a symmetric pattern (the normal
//     AMG case) skip 2 and 3 as such: a group of lanes takes a row of A, each lane an entry
//     (n, m) and its mirror a_mn (binary search in row m), and the edge's value is the larger of
//     the two directions' strengths (0 where a direction is not strong): S u S^T in one counting
//     and one emitting pass, coalesced, whatever A's values (Galerkin operators are symmetric
//     only to rounding, so S's own pattern need not be). Otherwise, when S's pattern is
//     symmetric (block nodes) the union is S's pattern and each value the larger of s_nm and
//     s_mn: one thread per row finds every mirror by binary search (and checks that the rows
//     increase), no sort. Otherwise S is emitted again as 64-bit keys (row << 32 | col) in both
//     directions, radix sorted and reduced by key with max, row offsets by binary search.
//     Block strengths are not bitwise symmetric in general (A_IJ's and A_JI's squares are summed
//     in different orders), so the mirror pass takes the max rather than assuming equality.
// Products and sums use __dmul_rn/__dadd_rn so nvcc cannot contract them into FMAs, which
// would change the last bit against the host (x86-64 builds without FMA); sqrt and division
// are IEEE-rounded on the device, as on the host.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <optional>

#include "amg/cuda/device_setup_phases.hpp"
#include "amg/cuda/setup_phase_kernels.cuh"
#include "amg/strength_rule.hpp"
#include "local/core/error.hpp"
#include "local/cuda/index_kernels.cuh"

namespace tessera::amg::gpu {
namespace {

struct AbsValue {
  __host__ __device__ double operator()(double v) const { return fabs(v); }
};

using detail::kBlock;
using detail::thread_index;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::grid_for;

struct CsrView {
  const std::int64_t* row_ptr;
  const std::int32_t* col;
  const double* val;
  double scale;  // the power of two the squares are taken with (strength_rule.hpp)
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
      if (node_of[a.col[p]] == n) sum_sq = __dadd_rn(sum_sq, scaled_square(a.val[p], a.scale));
  norm[n] = sqrt(sum_sq);
}

/// Counting pass: the number of strong edges of each node row.
struct EdgeCounter {
  std::int64_t* count;
  __device__ std::int64_t first_slot(std::int64_t) const { return 0; }
  __device__ void emit(std::int64_t, std::int64_t, std::int64_t, double) const {}
  __device__ void finish(std::int64_t n, std::int64_t end) const { count[n] = end; }
};

/// S in row order: row n's edges land at [offset[n], offset[n + 1]) in the order the kernels
/// find them, which is increasing column node (A's rows are sorted; the check verifies it).
struct RowOrderedSink {
  const std::int64_t* offset;
  std::int32_t* col;
  double* strength;
  __device__ std::int64_t first_slot(std::int64_t n) const { return offset[n]; }
  __device__ void emit(std::int64_t slot, std::int64_t, std::int64_t m, double s) const {
    col[slot] = static_cast<std::int32_t>(m);
    strength[slot] = s;
  }
  __device__ void finish(std::int64_t, std::int64_t) const {}
};

/// Sort path: every strong edge in both directions as a 64-bit key (row << 32 | col).
struct BothDirectionsSink {
  const std::int64_t* offset;  // first slot of each node row
  std::int64_t total;          // number of strong (directed) edges: reverse copies start here
  std::uint64_t* keys;
  double* values;
  __device__ std::int64_t first_slot(std::int64_t n) const { return offset[n]; }
  __device__ void emit(std::int64_t slot, std::int64_t n, std::int64_t m, double strength) const {
    keys[slot] = static_cast<std::uint64_t>(n) << 32 | static_cast<std::uint64_t>(m);
    keys[total + slot] = static_cast<std::uint64_t>(m) << 32 | static_cast<std::uint64_t>(n);
    values[slot] = values[total + slot] = strength;
  }
  __device__ void finish(std::int64_t, std::int64_t) const {}
};

/// Scalar nodes (one dof each): a block is one entry, whose sum of squares is its square exactly.
template <class Sink>
__global__ void scalar_strong_edges(CsrView a, std::int64_t rows, const double* norm, double theta, Sink sink) {
  const std::int64_t n = thread_index();
  if (n >= rows) return;
  std::int64_t slot = sink.first_slot(n);
  for (std::int64_t p = a.row_ptr[n]; p < a.row_ptr[n + 1]; ++p) {
    const std::int32_t m = a.col[p];
    if (m == n) continue;
    const double s = strong_value(scaled_square(a.val[p], a.scale), norm[n], norm[m], theta);
    if (s == 0.0) continue;
    sink.emit(slot++, n, m, s);
  }
  sink.finish(n, slot);
}

/// General nodes: the node's dof rows merged by column node; `cursor` (one per dof, owned by
/// the dof's node thread) holds each row's position.
template <class Sink>
__global__ void block_strong_edges(CsrView a, const std::int64_t* node_ptr, const std::int32_t* node_of,
                                   std::int64_t num_nodes, const double* norm, double theta, std::int64_t* cursor,
                                   Sink sink) {
  const std::int64_t n = thread_index();
  if (n >= num_nodes) return;
  const std::int64_t first = node_ptr[n], last = node_ptr[n + 1];
  for (std::int64_t i = first; i < last; ++i) cursor[i] = a.row_ptr[i];
  std::int64_t slot = sink.first_slot(n);
  for (;;) {
    std::int32_t m = INT32_MAX;  // next column node: the smallest under the cursors
    for (std::int64_t i = first; i < last; ++i)
      if (cursor[i] < a.row_ptr[i + 1]) m = min(m, node_of[a.col[cursor[i]]]);
    if (m == INT32_MAX) break;
    double sum_sq = 0.0;
    for (std::int64_t i = first; i < last; ++i) {
      std::int64_t p = cursor[i];
      for (; p < a.row_ptr[i + 1] && node_of[a.col[p]] == m; ++p)
        sum_sq = __dadd_rn(sum_sq, scaled_square(a.val[p], a.scale));
      cursor[i] = p;
    }
    if (m == n) continue;
    const double s = strong_value(sum_sq, norm[n], norm[m], theta);
    if (s == 0.0) continue;
    sink.emit(slot++, n, m, s);
  }
  sink.finish(n, slot);
}

/// Position of column `target` in the sorted columns [first, end), or -1.
__device__ std::int64_t find_column(const std::int32_t* col, std::int64_t first, std::int64_t end, std::int32_t target) {
  std::int64_t lo = first, hi = end;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (col[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo < end && col[lo] == target ? lo : -1;
}

/// Scalar nodes, S u S^T from A's entries and their mirrors (see the header): G lanes (G divides
/// 32) take row n, entries in strides of G, and a ballot places the group's edges in column
/// order. `broken` is raised where a row's columns do not increase strictly or an entry has no
/// mirror (A's pattern not symmetric): the caller then discards the result.
template <int G, class Sink>
__global__ void scalar_mirrored_edges(CsrView a, std::int64_t rows, const double* norm, double theta, Sink sink,
                                      unsigned* broken) {
  static_assert(G >= 1 && G <= 32 && 32 % G == 0, "a group of G lanes lies within one warp");
  const std::int64_t n = thread_index() / G;  // the same for the G lanes: they leave together
  if (n >= rows) return;
  const unsigned warp_lane = threadIdx.x % 32, lane = warp_lane % G;
  const unsigned group = (G == 32 ? 0xffffffffu : (1u << G) - 1) << (warp_lane - lane);
  const unsigned below = (1u << warp_lane) - 1;
  const std::int64_t begin = a.row_ptr[n], end = a.row_ptr[n + 1];
  std::int64_t slot = sink.first_slot(n);
  for (std::int64_t base = begin; base < end; base += G) {
    const std::int64_t p = base + lane;
    std::int32_t m = -1;
    double value = 0.0;
    if (p < end) {
      m = a.col[p];
      bool missing = p > begin && a.col[p - 1] >= m;
      if (m != n) {
        const double mine = strong_value(scaled_square(a.val[p], a.scale), norm[n], norm[m], theta);
        const std::int64_t q = find_column(a.col, a.row_ptr[m], a.row_ptr[m + 1], static_cast<std::int32_t>(n));
        missing = missing || q < 0;
        const double theirs = q < 0 ? 0.0 : strong_value(scaled_square(a.val[q], a.scale), norm[m], norm[n], theta);
        value = mine < theirs ? theirs : mine;  // the host's union_max: std::max(std::max(0, s_nm), s_mn)
      }
      if (missing) atomicExch(broken, 1u);
    }
    const unsigned emitting = __ballot_sync(group, value != 0.0) & group;
    if (value != 0.0) sink.emit(slot + __popc(emitting & below), n, m, value);
    slot += __popc(emitting);
  }
  if (lane == 0) sink.finish(n, slot);
}

/// Lanes a row for scalar_mirrored_edges: the power of two (4 to 32) that covers an average row.
int mirrored_group_size(std::int64_t nnz, std::int64_t rows) {
  const std::int64_t average = rows > 0 ? (nnz + rows - 1) / rows : 0;
  int g = 4;
  while (g < 32 && g < average) g *= 2;
  return g;
}

/// One thread per node row of the row-ordered S: checks that the row's columns increase
/// strictly and that every edge (n, m) has its mirror (m, n), and writes the union_max value
/// max(s_nm, s_mn) (std::max's rule: the second only if the first is smaller). Any failure
/// raises `not_symmetric`; the caller then discards `out` and takes the sort path.
__global__ void mirror_max(const std::int64_t* row_ptr, const std::int32_t* col, const double* strength,
                           std::int64_t num_nodes, double* out, unsigned* not_symmetric) {
  const std::int64_t n = thread_index();
  if (n >= num_nodes) return;
  std::int32_t previous = -1;
  for (std::int64_t p = row_ptr[n]; p < row_ptr[n + 1]; ++p) {
    const std::int32_t m = col[p];
    const std::int64_t q = m > previous ? find_column(col, row_ptr[m], row_ptr[m + 1], static_cast<std::int32_t>(n)) : -1;
    if (q < 0) {
      atomicExch(not_symmetric, 1u);
      return;
    }
    previous = m;
    out[p] = strength[p] < strength[q] ? strength[q] : strength[p];
  }
}

__global__ void split_keys(const std::uint64_t* keys, std::int64_t count, std::int32_t* col) {
  const std::int64_t e = thread_index();
  if (e < count) col[e] = static_cast<std::int32_t>(keys[e] & 0xffffffffu);
}

struct Max {
  __device__ double operator()(double x, double y) const { return x < y ? y : x; }
};

/// The strong edges of every node row, both directions, unsorted (2 * count entries).
struct DirectedEdges {
  std::int64_t count = 0;
  DeviceBuffer<std::uint64_t> keys;
  DeviceBuffer<double> values;
};

/// Counting pass, scan, emitting pass: S in row order with its raw (one-direction) strengths.
template <class Launch>
tessera::cuda::DeviceCsr<double> row_ordered_strength(std::int64_t num_nodes, cudaStream_t s, Launch& launch) {
  DeviceBuffer<std::int64_t> count(num_nodes + 1, s);
  count.fill_bytes(0, s);
  launch(EdgeCounter{count.data()});
  tessera::cuda::DeviceCsr<double> g;
  g.rows = g.cols = num_nodes;
  g.row_ptr.allocate(num_nodes + 1, s);
  detail::exclusive_scan_with_total(count.data(), g.row_ptr.data(), num_nodes, s);
  g.nnz = tessera::cuda::read_scalar(g.row_ptr.data() + num_nodes, s);
  g.col_idx.allocate(g.nnz, s);
  g.values.allocate(g.nnz, s);
  if (g.nnz) launch(RowOrderedSink{g.row_ptr.data(), g.col_idx.data(), g.values.data()});
  return g;
}

/// union_max(S, S^T) in place when S's rows are sorted and its pattern symmetric (the normal
/// case: A symmetric in pattern, whatever its values): S's pattern, max(s_nm, s_mn) as values.
/// False, with `g` unchanged, otherwise. One synchronisation (the verdict).
bool symmetrize_if_pattern_symmetric(tessera::cuda::DeviceCsr<double>& g, cudaStream_t s) {
  if (g.nnz == 0) return true;
  DeviceBuffer<double> max_values(g.nnz, s);
  DeviceBuffer<unsigned> not_symmetric(1, s);
  not_symmetric.fill_bytes(0, s);
  mirror_max<<<grid_for(g.rows, kBlock), kBlock, 0, s>>>(g.row_ptr.data(), g.col_idx.data(), g.values.data(), g.rows,
                                                         max_values.data(), not_symmetric.data());
  TESSERA_CHECK_LAUNCH();
  if (tessera::cuda::read_scalar(not_symmetric.data(), s) != 0) return false;
  g.values = std::move(max_values);
  return true;
}

/// Sort path input: the edges of the row-ordered S (whose arrays are freed first) emitted again
/// in both directions at the same offsets.
template <class Launch>
DirectedEdges both_directions(tessera::cuda::DeviceCsr<double>& row_ordered, cudaStream_t s, Launch& launch) {
  DirectedEdges e;
  e.count = row_ordered.nnz;
  row_ordered.col_idx.release();
  row_ordered.values.release();
  e.keys.allocate(2 * e.count, s);
  e.values.allocate(2 * e.count, s);
  if (e.count) launch(BothDirectionsSink{row_ordered.row_ptr.data(), e.count, e.keys.data(), e.values.data()});
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
    const int end_bit = 32 + tessera::cuda::significant_bits(static_cast<std::uint64_t>(num_nodes));
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
  // An edge's key is (row << 32) | column: row r's edges start at key r << 32.
  tessera::cuda::segment_starts(unique_keys.data(), g.nnz, num_nodes, std::uint64_t(1) << 32, g.row_ptr.data(), s);
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

/// Scalar nodes: S u S^T in one pass over A's entries and their mirrors, or nothing where A's
/// pattern is not symmetric (or its rows not strictly increasing). One synchronisation more than
/// the passes' own (the verdict).
std::optional<tessera::cuda::DeviceCsr<double>> mirrored_scalar_strength(const tessera::cuda::DeviceCsr<double>& a,
                                                                         const CsrView& view, const double* norm,
                                                                         double theta, cudaStream_t s) {
  DeviceBuffer<unsigned> broken(1, s);
  broken.fill_bytes(0, s);
  const int g = mirrored_group_size(a.nnz, a.rows);
  const unsigned grid = grid_for(a.rows * g, kBlock);
  unsigned* flag = broken.data();
  const auto launch = [&](auto sink) {
    switch (g) {
      case 4: scalar_mirrored_edges<4><<<grid, kBlock, 0, s>>>(view, a.rows, norm, theta, sink, flag); break;
      case 8: scalar_mirrored_edges<8><<<grid, kBlock, 0, s>>>(view, a.rows, norm, theta, sink, flag); break;
      case 16: scalar_mirrored_edges<16><<<grid, kBlock, 0, s>>>(view, a.rows, norm, theta, sink, flag); break;
      default: scalar_mirrored_edges<32><<<grid, kBlock, 0, s>>>(view, a.rows, norm, theta, sink, flag);
    }
    TESSERA_CHECK_LAUNCH();
  };
  tessera::cuda::DeviceCsr<double> graph = row_ordered_strength(a.rows, s, launch);
  if (tessera::cuda::read_scalar(broken.data(), s) != 0) return std::nullopt;
  return graph;
}

}  // namespace

double device_max_abs(const double* values, std::int64_t n, cudaStream_t s) {
  DeviceBuffer<double> max(1, s);
  const auto magnitudes = thrust::make_transform_iterator(values, AbsValue{});
  tessera::cuda::cub_call(s, [&](void* tmp, std::size_t& bytes) {
    return cub::DeviceReduce::Max(tmp, bytes, magnitudes, max.data(), n, s);
  });
  return n > 0 ? tessera::cuda::read_scalar(max.data(), s) : 0.0;
}

tessera::cuda::DeviceCsr<double> device_strength_graph(const tessera::cuda::DeviceCsr<double>& a,
                                                       const std::int64_t* node_ptr, std::int64_t num_nodes,
                                                       double theta, cudaStream_t s, StrengthAssembly* assembly,
                                                       std::optional<double> scale) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "AMG strength: the matrix must be square, it is ", a.rows, " x ", a.cols);
  TESSERA_REQUIRE_INPUT(num_nodes >= 0 && num_nodes <= a.rows && a.rows < INT32_MAX, "AMG strength: ", num_nodes,
                        " nodes for ", a.rows, " rows");
  TESSERA_REQUIRE_INPUT(theta >= 0, "AMG strength: theta must be non-negative, got ", theta);
  const std::int64_t covered = num_nodes > 0 ? tessera::cuda::read_scalar(node_ptr + num_nodes, s) : 0;
  TESSERA_REQUIRE_INPUT(covered == a.rows, "AMG strength: the node layout covers ", covered, " dofs, the matrix has ",
                        a.rows, " rows");
  const CsrView view{a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                     scale ? *scale : strength_scale(device_max_abs(a.values.data(), a.nnz, s))};
  DeviceBuffer<std::int32_t> node_of(a.rows, s);
  DeviceBuffer<double> norm(num_nodes, s);
  const unsigned grid = grid_for(num_nodes, kBlock);
  if (num_nodes > 0) {
    fill_node_of_dof<<<grid, kBlock, 0, s>>>(node_ptr, num_nodes, node_of.data());
    diagonal_block_norms<<<grid, kBlock, 0, s>>>(view, node_ptr, node_of.data(), num_nodes, norm.data());
    TESSERA_CHECK_LAUNCH();
  }
  const bool scalar = num_nodes == a.rows;  // one dof per node: the host's scalar path
  DeviceBuffer<std::int64_t> cursor(scalar ? 0 : a.rows, s);
  const auto launch = [&](auto sink) {
    if (num_nodes == 0) return;
    if (scalar)
      scalar_strong_edges<<<grid, kBlock, 0, s>>>(view, num_nodes, norm.data(), theta, sink);
    else
      block_strong_edges<<<grid, kBlock, 0, s>>>(view, node_ptr, node_of.data(), num_nodes, norm.data(), theta,
                                                 cursor.data(), sink);
    TESSERA_CHECK_LAUNCH();
  };
  if (scalar && num_nodes > 0) {
    if (std::optional<tessera::cuda::DeviceCsr<double>> union_graph = mirrored_scalar_strength(a, view, norm.data(),
                                                                                               theta, s)) {
      if (assembly) *assembly = StrengthAssembly::mirrored_entries;
      return std::move(*union_graph);
    }
  }
  tessera::cuda::DeviceCsr<double> graph = row_ordered_strength(num_nodes, s, launch);
  const bool symmetric = symmetrize_if_pattern_symmetric(graph, s);
  if (assembly) *assembly = symmetric ? StrengthAssembly::mirrored_rows : StrengthAssembly::sorted_union;
  if (symmetric) return graph;
  DirectedEdges edges = both_directions(graph, s, launch);
  return assemble_graph(edges, num_nodes, s);
}

}  // namespace tessera::amg::gpu
