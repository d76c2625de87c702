// Tentative prolongator on the device, the host amg::tentative_prolongator to the last bit:
//  1. nodes grouped by aggregate by a stable radix sort on the aggregate id (nodes and their
//     dofs stay increasing inside an aggregate, as in the host's counting sort; non-aggregated
//     nodes, id -1 = 0xffffffff unsigned, sort last and are dropped);
//  2. per aggregate: m = its dofs, c = min(m, k) coarse dofs; scans give the coarse node layout,
//     the scratch offsets and (from each dof's row length c) the row offsets of P;
//  3. one thread per aggregate runs the host's thin_qr step for step (Householder reflectors,
//     Q by back-accumulation, non-negative R diagonal) in a global scratch of 3 k m doubles, and
//     scatters Q into P's rows and R into the coarse vectors. Products and sums use
//     __dmul_rn/__dadd_rn/__dsub_rn so that no FMA contraction changes a bit against the host.
// Aggregates hold tens of dofs and k <= 6 in practice, so a thread per aggregate has enough
// parallelism (one per ~27 fine nodes) and keeps the QR readable; k = 1 is the same code.
#include <cub/device/device_radix_sort.cuh>

#include <vector>

#include "amg/cuda/device_setup_phases.hpp"
#include "amg/cuda/setup_phase_kernels.cuh"
#include "local/core/error.hpp"
#include "local/cuda/index_kernels.cuh"

namespace tessera::amg::gpu {
namespace {

using detail::kBlock;
using detail::thread_index;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::grid_for;

/// node_start[a] = first position of aggregate a among the sorted aggregate ids (a <= count).
__global__ void aggregate_starts(const std::uint32_t* sorted_agg, std::int64_t nodes, std::int64_t count,
                                 std::int64_t* node_start) {
  const std::int64_t a = thread_index();
  if (a > count) return;
  std::int64_t lo = 0, hi = nodes;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (sorted_agg[mid] < static_cast<std::uint32_t>(a)) lo = mid + 1;
    else hi = mid;
  }
  node_start[a] = lo;
}

/// dofs[a] = m, coarse[a] = min(m, k); both arrays have a trailing 0 for the scans.
__global__ void aggregate_sizes(const std::int64_t* node_start, const std::int32_t* sorted_nodes,
                                const std::int64_t* node_ptr, std::int64_t count, int k, std::int64_t* dofs,
                                std::int64_t* coarse) {
  const std::int64_t a = thread_index();
  if (a >= count) return;
  std::int64_t m = 0;
  for (std::int64_t p = node_start[a]; p < node_start[a + 1]; ++p) m += node_ptr[sorted_nodes[p] + 1] - node_ptr[sorted_nodes[p]];
  dofs[a] = m;
  coarse[a] = m < k ? m : k;
}

__global__ void p_row_lengths(const std::int32_t* of_node, const std::int64_t* node_ptr, std::int64_t num_nodes,
                              const std::int64_t* coarse, std::int64_t* length) {
  const std::int64_t n = thread_index();
  if (n >= num_nodes) return;
  const std::int64_t c = of_node[n] < 0 ? 0 : coarse[of_node[n]];
  for (std::int64_t d = node_ptr[n]; d < node_ptr[n + 1]; ++d) length[d] = c;
}

/// The host's apply_reflector: H = I - 2 v v^T on rows j.. of columns [c0, k) of a (m x k).
__device__ void apply_reflector(std::int64_t m, std::int64_t j, const double* v, double* a, int c0, int k) {
  for (int c = c0; c < k; ++c) {
    double* col = a + c * m;
    double s = 0.0;
    for (std::int64_t i = j; i < m; ++i) s = __dadd_rn(s, __dmul_rn(v[i - j], col[i]));
    for (std::int64_t i = j; i < m; ++i) col[i] = __dsub_rn(col[i], __dmul_rn(__dmul_rn(2.0, s), v[i - j]));
  }
}

__device__ double sum_of_squares(const double* v, std::int64_t len) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < len; ++i) sum = __dadd_rn(sum, __dmul_rn(v[i], v[i]));
  return sum;
}

/// The host's thin_qr on a (m x k column-major, overwritten): reflectors in `v` (c x m), Q in
/// `q` (m x c column-major). R is left in the upper triangle of a; signs are fixed by the caller.
__device__ void thin_qr(std::int64_t m, int k, int c, double* a, double* v_all, double* q) {
  for (int j = 0; j < c; ++j) {
    double* v = v_all + j * m;
    const std::int64_t len = m - j;
    for (std::int64_t i = 0; i < len; ++i) v[i] = a[j * m + j + i];
    const double norm = sqrt(sum_of_squares(v, len));
    if (norm == 0.0) {
      for (std::int64_t i = 0; i < len; ++i) v[i] = 0.0;
      continue;
    }
    v[0] = __dadd_rn(v[0], v[0] >= 0 ? norm : -norm);
    const double vnorm = sqrt(sum_of_squares(v, len));
    for (std::int64_t i = 0; i < len; ++i) v[i] = v[i] / vnorm;
    apply_reflector(m, j, v, a, j, k);
  }
  for (std::int64_t i = 0; i < m * c; ++i) q[i] = 0.0;
  for (int j = 0; j < c; ++j) q[j * m + j] = 1.0;
  for (int j = c - 1; j >= 0; --j) apply_reflector(m, j, v_all + j * m, q, 0, c);
}

struct AggregateLayout {
  const std::int64_t* node_start;   // count + 1: aggregate a's nodes are sorted_nodes[node_start[a]..)
  const std::int32_t* sorted_nodes;
  const std::int64_t* node_ptr;     // fine layout
  const std::int64_t* dof_start;    // count + 1: scratch offsets (prefix sums of m)
  const std::int64_t* coarse_nodes; // count + 1: first coarse dof of each aggregate
};

struct TentativeOut {
  const std::int64_t* p_row_ptr;
  std::int32_t* p_col;
  double* p_val;
  double* coarse_vectors;
};

__global__ void aggregate_qr(AggregateLayout lay, std::int64_t count, const double* b, int k, double* scratch,
                             TentativeOut out) {
  const std::int64_t agg = thread_index();
  if (agg >= count) return;
  const std::int64_t m = lay.dof_start[agg + 1] - lay.dof_start[agg];
  const std::int64_t first = lay.coarse_nodes[agg];
  const int c = static_cast<int>(lay.coarse_nodes[agg + 1] - first);
  double* a = scratch + 3 * k * lay.dof_start[agg];
  double* v = a + m * k;
  double* q = v + m * k;
  std::int64_t i = 0;  // gather B's rows on the aggregate's dofs, column-major
  for (std::int64_t p = lay.node_start[agg]; p < lay.node_start[agg + 1]; ++p) {
    const std::int32_t n = lay.sorted_nodes[p];
    for (std::int64_t d = lay.node_ptr[n]; d < lay.node_ptr[n + 1]; ++d, ++i)
      for (int j = 0; j < k; ++j) a[j * m + i] = b[d * k + j];
  }
  thin_qr(m, k, c, a, v, q);
  for (int r = 0; r < c; ++r) {  // R with a non-negative diagonal: flip row r of R, column r of Q
    const double sign = a[r * m + r] >= 0 ? 1.0 : -1.0;
    for (int j = 0; j < k; ++j) {  // the host negates the whole row of R, zeros included
      const double value = j < r ? 0.0 : a[j * m + r];
      out.coarse_vectors[(first + r) * k + j] = sign < 0 ? -value : value;
    }
    if (sign < 0)
      for (std::int64_t row = 0; row < m; ++row) q[r * m + row] = -q[r * m + row];
  }
  i = 0;
  for (std::int64_t p = lay.node_start[agg]; p < lay.node_start[agg + 1]; ++p) {
    const std::int32_t n = lay.sorted_nodes[p];
    for (std::int64_t d = lay.node_ptr[n]; d < lay.node_ptr[n + 1]; ++d, ++i) {
      const std::int64_t row_start = out.p_row_ptr[d];
      for (int j = 0; j < c; ++j) {
        out.p_col[row_start + j] = static_cast<std::int32_t>(first + j);
        out.p_val[row_start + j] = q[j * m + i];
      }
    }
  }
}

/// Nodes sorted by aggregate (stable) and the start of every aggregate among them.
struct NodesByAggregate {
  DeviceBuffer<std::int32_t> nodes;
  DeviceBuffer<std::int64_t> start;
};

NodesByAggregate group_nodes(const DeviceAggregates& agg, std::int64_t num_nodes, cudaStream_t s) {
  NodesByAggregate g;
  DeviceBuffer<std::int32_t> ids(num_nodes, s);
  DeviceBuffer<std::uint32_t> sorted_agg(num_nodes, s);
  g.nodes.allocate(num_nodes, s);
  g.start.allocate(agg.count + 1, s);
  if (num_nodes > 0) {
    tessera::cuda::fill_iota(num_nodes, ids.data(), s);
    const auto* keys = reinterpret_cast<const std::uint32_t*>(agg.of_node.data());
    tessera::cuda::cub_call(s, [&](void* tmp, std::size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, sorted_agg.data(), ids.data(), g.nodes.data(),
                                             num_nodes, 0, 32, s);
    });
  }
  aggregate_starts<<<grid_for(agg.count + 1, kBlock), kBlock, 0, s>>>(sorted_agg.data(), num_nodes, agg.count,
                                                                      g.start.data());
  TESSERA_CHECK_LAUNCH();
  return g;
}

struct Totals {
  std::int64_t first, second;
};

/// Two device counts with one synchronisation (gathered on the device, then one copy back).
Totals read_totals(const std::int64_t* first, const std::int64_t* second, cudaStream_t s) {
  DeviceBuffer<std::int64_t> both(2, s);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(both.data(), first, sizeof(std::int64_t), cudaMemcpyDeviceToDevice, s));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(both.data() + 1, second, sizeof(std::int64_t), cudaMemcpyDeviceToDevice, s));
  const std::vector<std::int64_t> host = both.download(s);
  return {host[0], host[1]};
}

}  // namespace

DeviceTentativeProlongator device_tentative_prolongator(const DeviceAggregates& agg, const std::int64_t* node_ptr,
                                                        std::int64_t num_nodes, std::int64_t rows, const double* b,
                                                        int k, cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(k >= 1, "AMG: the near-null space needs at least one vector, got k = ", k);
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(agg.of_node.size()) == num_nodes && agg.count <= num_nodes,
                        "AMG tentative prolongator: ", agg.of_node.size(), " aggregate ids (", agg.count,
                        " aggregates) for ", num_nodes, " nodes");
  const std::int64_t covered = num_nodes > 0 ? tessera::cuda::read_scalar(node_ptr + num_nodes, s) : 0;
  TESSERA_REQUIRE_INPUT(covered == rows, "AMG tentative prolongator: the node layout covers ", covered,
                        " dofs, the near-null space has ", rows, " rows");
  const std::int64_t count = agg.count;
  const NodesByAggregate grouped = group_nodes(agg, num_nodes, s);
  DeviceBuffer<std::int64_t> dofs(count + 1, s), coarse(count + 1, s), dof_start(count + 1, s);
  DeviceTentativeProlongator out;
  out.coarse_nodes.allocate(count + 1, s);
  dofs.fill_bytes(0, s);
  coarse.fill_bytes(0, s);
  if (count > 0) {
    aggregate_sizes<<<grid_for(count, kBlock), kBlock, 0, s>>>(grouped.start.data(), grouped.nodes.data(), node_ptr,
                                                               count, k, dofs.data(), coarse.data());
    TESSERA_CHECK_LAUNCH();
  }
  detail::exclusive_scan_with_total(dofs.data(), dof_start.data(), count, s);
  detail::exclusive_scan_with_total(coarse.data(), out.coarse_nodes.data(), count, s);
  const Totals totals = read_totals(out.coarse_nodes.data() + count, dof_start.data() + count, s);
  out.coarse_dofs = totals.first;
  const std::int64_t aggregated_dofs = totals.second;

  DeviceBuffer<std::int64_t> length(rows + 1, s);
  length.fill_bytes(0, s);
  if (num_nodes > 0) {
    p_row_lengths<<<grid_for(num_nodes, kBlock), kBlock, 0, s>>>(agg.of_node.data(), node_ptr, num_nodes,
                                                                 coarse.data(), length.data());
    TESSERA_CHECK_LAUNCH();
  }
  out.p.rows = rows;
  out.p.cols = out.coarse_dofs;
  out.p.row_ptr.allocate(rows + 1, s);
  detail::exclusive_scan_with_total(length.data(), out.p.row_ptr.data(), rows, s);
  out.p.nnz = tessera::cuda::read_scalar(out.p.row_ptr.data() + rows, s);
  out.p.col_idx.allocate(out.p.nnz, s);
  out.p.values.allocate(out.p.nnz, s);
  out.coarse_vectors.allocate(out.coarse_dofs * k, s);
  if (count == 0) return out;

  DeviceBuffer<double> scratch(3 * k * aggregated_dofs, s);
  const AggregateLayout lay{grouped.start.data(), grouped.nodes.data(), node_ptr, dof_start.data(),
                            out.coarse_nodes.data()};
  const TentativeOut dst{out.p.row_ptr.data(), out.p.col_idx.data(), out.p.values.data(), out.coarse_vectors.data()};
  aggregate_qr<<<grid_for(count, kBlock), kBlock, 0, s>>>(lay, count, b, k, scratch.data(), dst);
  TESSERA_CHECK_LAUNCH();
  return out;
}

}  // namespace tessera::amg::gpu
