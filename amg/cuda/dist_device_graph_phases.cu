// The distributed graph phases on the ranks' GPUs (dist_device_graph_phases.hpp): strength from
// the one-GPU kernels plus the host's cross-rank edges; aggregation as device_aggregation.cu
// (the same per-node rules, amg/mis2_rules.hpp), one thread per owned node, over the local and the
// non-local block, with the ghost values each step reads exchanged first (HostStagedHalo).
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "amg/cuda/device_operator_slot.hpp"
#include "amg/cuda/device_setup_phases.hpp"
#include "amg/cuda/dist_device_graph_phases.hpp"
#include "amg/cuda/dist_node_offsets.hpp"
#include "amg/cuda/listed_row_offsets.hpp"
#include "amg/cuda/setup_phase_kernels.cuh"
#include "amg/mis2_rules.hpp"
#include "amg/strength_rule.hpp"
#include "dist/collective_call.hpp"
#include "dist/cuda/host_staged_halo.cuh"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

using detail::kBlock;
using detail::thread_index;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::grid_for;
using tessera::cuda::read_scalar;
using dist::gpu::HostStagedHalo;
using mis2::Key;
using mis2::kInSetKey;
using mis2::kOutKey;
using Count = unsigned long long;

constexpr std::int64_t kNotAggregated = -1;

struct BlockView {
  const std::int64_t* row_ptr;
  const std::int32_t* col;
  const double* val;
};

/// The owned rows of the graph: neighbours in `local` are owned nodes, in `nonlocal` ghost nodes.
struct GraphView {
  BlockView local, nonlocal;
  std::int64_t nodes;
};

GraphView view_of(const DistDeviceGraph& g) {
  return {{g.local.row_ptr.data(), g.local.col_idx.data(), g.local.values.data()},
          {g.nonlocal.row_ptr.data(), g.nonlocal.col_idx.data(), g.nonlocal.values.data()},
          g.owned_nodes()};
}

__device__ std::int64_t degree(const GraphView& g, std::int64_t i) {
  return g.local.row_ptr[i + 1] - g.local.row_ptr[i] + g.nonlocal.row_ptr[i + 1] - g.nonlocal.row_ptr[i];
}

/// f(value of the neighbour, strength of the edge) for every neighbour of owned node i: owned
/// neighbours read `owned`, ghost neighbours `ghosts` (the host's for_neighbours order).
template <class T, class F>
__device__ void for_neighbours(const GraphView& g, std::int64_t i, const T* owned, const T* ghosts, F&& f) {
  for (std::int64_t p = g.local.row_ptr[i]; p < g.local.row_ptr[i + 1]; ++p) f(owned[g.local.col[p]], g.local.val[p]);
  for (std::int64_t p = g.nonlocal.row_ptr[i]; p < g.nonlocal.row_ptr[i + 1]; ++p)
    f(ghosts[g.nonlocal.col[p]], g.nonlocal.val[p]);
}

// ---- MIS-2 -------------------------------------------------------------------------------

__global__ void initial_keys(GraphView g, std::int64_t first, Key* key, Count* undecided) {
  const std::int64_t i = thread_index();
  if (i >= g.nodes) return;
  const bool isolated = degree(g, i) == 0;
  key[i] = mis2::initial_key(isolated, static_cast<Key>(first + i));
  if (!isolated) atomicAdd(undecided, 1ull);
}

__global__ void neighbour_max(GraphView g, const Key* in, const Key* ghosts, Key* out) {
  const std::int64_t i = thread_index();
  if (i >= g.nodes) return;
  Key m = in[i];
  for_neighbours(g, i, in, ghosts, [&](Key k, double) { m = max(m, k); });
  out[i] = m;
}

/// The second half of a round: reads reach1 and the node's own key only, so updating keys in
/// place is the host's loop. Counts the nodes still undecided.
__global__ void decide(GraphView g, const Key* reach1, const Key* ghost_reach1, Key* key, Count* undecided) {
  const std::int64_t i = thread_index();
  if (i >= g.nodes) return;
  const Key own = key[i];
  if (own == kOutKey || own == kInSetKey) return;
  Key reach = reach1[i];
  for_neighbours(g, i, reach1, ghost_reach1, [&](Key k, double) { reach = max(reach, k); });
  key[i] = mis2::decided_key(own, reach);
  if (key[i] == own) atomicAdd(undecided, 1ull);
}

// ---- placement -----------------------------------------------------------------------------

__global__ void root_flags(const Key* key, std::int64_t n, std::int32_t* flag) {
  const std::int64_t i = thread_index();
  if (i < n) flag[i] = key[i] == kInSetKey;
}

/// Roots take their global aggregate (first_aggregate + rank-local number); roots[] their ids.
__global__ void number_roots(std::int64_t n, const std::int32_t* flag, const std::int32_t* number,
                             std::int64_t first_node, std::int64_t first_aggregate, std::int64_t* root_of,
                             std::int64_t* roots) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  root_of[i] = flag[i] ? first_aggregate + number[i] : kNotAggregated;
  if (flag[i]) roots[number[i]] = first_node + i;
}

/// Phase 2: a root's neighbours join it. Roots are >= 3 apart, so a node sees at most one; a
/// second one is counted as an error (the host asserts the same).
__global__ void join_roots(GraphView g, const std::int64_t* root_of, const std::int64_t* ghost_root_of,
                           std::int64_t* placed, Count* clashes) {
  const std::int64_t i = thread_index();
  if (i >= g.nodes) return;
  std::int64_t mine = root_of[i];
  if (mine == kNotAggregated)
    for_neighbours(g, i, root_of, ghost_root_of, [&](std::int64_t a, double) {
      if (a == kNotAggregated) return;
      if (mine != kNotAggregated) atomicAdd(clashes, 1ull);
      mine = a;
    });
  placed[i] = mine;
}

/// Phase 3: a leftover joins its strongest placed neighbour, ties to the lowest aggregate.
__global__ void join_leftovers(GraphView g, const std::int64_t* placed, const std::int64_t* ghost_placed,
                               std::int64_t* of_node, Count* stranded) {
  const std::int64_t i = thread_index();
  if (i >= g.nodes) return;
  of_node[i] = placed[i];
  if (placed[i] != kNotAggregated || degree(g, i) == 0) return;
  double best_strength = -1.0;
  std::int64_t best = kNotAggregated;
  for_neighbours(g, i, placed, ghost_placed, [&](std::int64_t a, double strength) {
    if (a == kNotAggregated) return;
    if (mis2::better_leftover_home(strength, a, best_strength, best)) {
      best_strength = strength;
      best = a;
    }
  });
  if (best == kNotAggregated) atomicAdd(stranded, 1ull);
  of_node[i] = best;
}

/// Every device array of the aggregation, allocated up front (collectively checked: a rank out
/// of memory must not leave the others in the next exchange).
struct AggregationBuffers {
  AggregationBuffers(const DistDeviceGraph& g, cudaStream_t s)
      : key(g.owned_nodes(), s), reach1(g.owned_nodes(), s), ghost_key(g.ghost_nodes.size(), s),
        ghost_reach1(g.ghost_nodes.size(), s), flag(g.owned_nodes() + 1, s), number(g.owned_nodes() + 1, s),
        root_of(g.owned_nodes(), s), ghost_root_of(g.ghost_nodes.size(), s), placed(g.owned_nodes(), s),
        ghost_placed(g.ghost_nodes.size(), s), of_node(g.owned_nodes(), s), roots(g.owned_nodes(), s),
        counter(1, s), halo(g.halo, s) {}
  DeviceBuffer<Key> key, reach1, ghost_key, ghost_reach1;
  DeviceBuffer<std::int32_t> flag, number;
  DeviceBuffer<std::int64_t> root_of, ghost_root_of, placed, ghost_placed, of_node;
  DeviceBuffer<std::int64_t> roots;  // capacity: every owned node
  DeviceBuffer<Count> counter;
  HostStagedHalo halo;
};

/// The global count of `counter` after `launch` (zeroed first): one read-back, one allreduce.
template <class Launch>
std::int64_t global_count(const dist::Communicator& comm, DeviceBuffer<Count>& counter, cudaStream_t s,
                          Launch&& launch) {
  counter.fill_bytes(0, s);
  launch();
  TESSERA_CHECK_LAUNCH();
  return comm.allreduce(static_cast<std::int64_t>(read_scalar(counter.data(), s)), dist::ReduceOp::sum);
}

/// Phase 1: buffers.key holds the MIS-2 keys after the last round (roots: kInSetKey).
int distance2_independent_set(const dist::Communicator& comm, const DistDeviceGraph& graph, AggregationBuffers& b,
                              cudaStream_t s) {
  const GraphView g = view_of(graph);
  const unsigned grid = grid_for(g.nodes, kBlock);
  std::int64_t undecided = global_count(comm, b.counter, s, [&] {
    initial_keys<<<grid, kBlock, 0, s>>>(g, graph.first_node, b.key.data(), b.counter.data());
  });
  int rounds = 0;
  while (undecided > 0) {
    ++rounds;
    b.halo.exchange(comm, b.key.data(), b.ghost_key.data());
    neighbour_max<<<grid, kBlock, 0, s>>>(g, b.key.data(), b.ghost_key.data(), b.reach1.data());
    TESSERA_CHECK_LAUNCH();
    b.halo.exchange(comm, b.reach1.data(), b.ghost_reach1.data());  // makes the next maximum a two-ring one
    const std::int64_t left = global_count(comm, b.counter, s, [&] {
      decide<<<grid, kBlock, 0, s>>>(g, b.reach1.data(), b.ghost_reach1.data(), b.key.data(), b.counter.data());
    });
    if (left == 0) break;
    // The global undecided node of largest priority always joins: every round makes progress.
    TESSERA_ASSERT(left < undecided && rounds < mis2::kMaxRounds, "distributed device MIS-2: ", left,
                   " nodes still undecided after ", rounds, " rounds");
    undecided = left;
  }
  return rounds;
}


/// The sorted global nodes at the far ends of the cross-rank edges (the graph's ghosts).
std::vector<std::int64_t> ghost_nodes_of(const CrossRankEdges& cross) {
  std::vector<std::int64_t> ghosts = cross.node;
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  TESSERA_REQUIRE_INPUT(ghosts.size() < std::size_t{INT32_MAX}, "AMG strength: ", ghosts.size(),
                        " ghost nodes exceed 32-bit columns");
  return ghosts;
}

/// The host's cross-rank edges as the non-local block over `ghosts` (ghost_nodes_of): only the
/// listed rows and their edges cross to the GPU; the row offsets over every owned node are made
/// there. Ordered on `s`; the uploads' sources must live until it is synchronised.
tessera::cuda::DeviceCsr<double> cross_rank_block(const CrossRankEdges& cross, std::int64_t owned_nodes,
                                                  const std::vector<std::int64_t>& ghosts,
                                                  std::vector<std::int32_t>& columns, cudaStream_t s) {
  TESSERA_ASSERT(cross.rows.empty() || (cross.rows.front() >= 0 && cross.rows.back() < owned_nodes),
                 "cross-rank edges listed for nodes outside the ", owned_nodes, " owned ones");
  columns.clear();
  columns.reserve(cross.node.size());
  for (std::int64_t node : cross.node)
    columns.push_back(static_cast<std::int32_t>(std::lower_bound(ghosts.begin(), ghosts.end(), node) - ghosts.begin()));
  tessera::cuda::DeviceCsr<double> block;
  block.rows = owned_nodes;
  block.cols = static_cast<std::int64_t>(ghosts.size());
  block.nnz = static_cast<std::int64_t>(columns.size());
  block.col_idx.upload(columns, s);
  block.values.upload(cross.strength, s);
  block.row_ptr = listed_row_offsets(cross.rows, cross.ptr, owned_nodes, s);
  return block;
}

}  // namespace

DistDeviceGraph dist_device_strength_graph(const dist::Communicator& comm, const dist::DistMatrix& a,
                                           const DistNodes& nodes, double theta, DeviceOperatorSlot& device_a,
                                           cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(a.row_partition == a.col_partition, "AMG strength: the operator must be square");
  DistDeviceGraph g;
  g.first_node = nodes.first;
  g.partition = nodes.partition;
  std::optional<trace::Step> step(std::in_place, "upload_a");
  // A's copy for this level's later device phases; the graph reads its local block.
  const dist::gpu::DeviceDistMatrix& da = *dist::call_collectively(
      comm, "distributed device strength: upload of A", [&] { return &device_operator(device_a, a, s); });
  // The power of two of the strength rule, from A's largest magnitude over every rank: both parts
  // of the graph take their squares with it (dist_strength_scale's, found on the device).
  step.emplace("scale");
  const double scale = strength_scale(comm.allreduce(
      std::max(device_max_abs(da.local.values.data(), da.local.nnz, s),
               device_max_abs(da.nonlocal.values.data(), da.nonlocal.nnz, s)),
      dist::ReduceOp::max));
  step.emplace("cross_rank_edges");
  const CrossRankEdges cross = cross_rank_strength(comm, a, nodes, theta, scale);  // collective, host
  step.emplace("device_graph");
  dist::call_collectively(comm, "distributed device strength", [&] {
    // The host sources of the uploads live until the synchronisation below (pinned or not).
    const Csr<double> no_nodes = Csr<double>::empty(0, 0);
    std::vector<std::int32_t> columns;
    g.ghost_nodes = ghost_nodes_of(cross);
    g.nonlocal = cross_rank_block(cross, nodes.count(), g.ghost_nodes, columns, s);
    if (nodes.count() > 0) {
      const DeviceBuffer<std::int64_t> node_ptr = device_node_offsets(nodes, s);
      g.local = device_strength_graph(da.local, node_ptr.data(), nodes.count(), theta, s, nullptr, scale);
    } else {
      g.local = tessera::cuda::upload(no_nodes, s);
    }
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  });
  step.emplace("halo_plan");
  g.halo = dist::HaloPlan::build(comm, g.partition, g.ghost_nodes);
  return g;
}

DistDeviceGraph dist_device_strength_graph(const dist::Communicator& comm, const dist::DistMatrix& a,
                                           const DistNodes& nodes, double theta, cudaStream_t s) {
  DeviceOperatorSlot device_a;  // dropped at return: freed on `s` after the graph's synchronisation
  return dist_device_strength_graph(comm, a, nodes, theta, device_a, s);
}

DistAggregates dist_device_aggregate(const dist::Communicator& comm, const DistDeviceGraph& graph, cudaStream_t s) {
  const std::int64_t n = graph.owned_nodes();
  dist::throw_if_any_rank_failed(comm, n < INT32_MAX ? ""
                                                     : tessera::detail::concat("AMG aggregation: rank ", comm.rank(),
                                                                               " holds ", n,
                                                                               " nodes, beyond 32-bit numbering"));
  std::unique_ptr<AggregationBuffers> b = dist::call_collectively(
      comm, "distributed device aggregation", [&] { return std::make_unique<AggregationBuffers>(graph, s); });
  DistAggregates agg;
  agg.mis_rounds = distance2_independent_set(comm, graph, *b, s);

  // Phase 2: number the roots by rank, then by id (the serial numbering by root id).
  const GraphView g = view_of(graph);
  const unsigned grid = grid_for(n, kBlock);
  const std::int64_t owned_roots = dist::call_collectively(comm, "distributed device aggregation", [&] {
    b->flag.fill_bytes(0, s);  // flag[n] = 0: the scan's total
    root_flags<<<grid, kBlock, 0, s>>>(b->key.data(), n, b->flag.data());
    TESSERA_CHECK_LAUNCH();
    detail::exclusive_scan_with_total(b->flag.data(), b->number.data(), n, s);  // may allocate
    return static_cast<std::int64_t>(read_scalar(b->number.data() + n, s));
  });
  agg.partition = dist::RowPartition::from_counts(comm, owned_roots);
  agg.count = agg.partition.global_rows();
  number_roots<<<grid, kBlock, 0, s>>>(n, b->flag.data(), b->number.data(), graph.first_node,
                                       agg.partition.begin(comm.rank()), b->root_of.data(), b->roots.data());
  TESSERA_CHECK_LAUNCH();
  b->halo.exchange(comm, b->root_of.data(), b->ghost_root_of.data());
  const std::int64_t clashes = global_count(comm, b->counter, s, [&] {
    join_roots<<<grid, kBlock, 0, s>>>(g, b->root_of.data(), b->ghost_root_of.data(), b->placed.data(),
                                       b->counter.data());
  });
  TESSERA_ASSERT(clashes == 0, "distributed device aggregation: ", clashes, " nodes neighbour two MIS-2 roots");

  // Phase 3: leftovers, reading the phase-2 placements of their neighbours.
  b->halo.exchange(comm, b->placed.data(), b->ghost_placed.data());
  const std::int64_t stranded = global_count(comm, b->counter, s, [&] {
    join_leftovers<<<grid, kBlock, 0, s>>>(g, b->placed.data(), b->ghost_placed.data(), b->of_node.data(),
                                           b->counter.data());
  });
  TESSERA_ASSERT(stranded == 0, "distributed device aggregation: ", stranded,
                 " nodes are not within distance 2 of an MIS-2 root");
  agg.of_node = b->of_node.download(s);
  agg.roots.resize(static_cast<std::size_t>(owned_roots));
  if (owned_roots > 0)
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(agg.roots.data(), b->roots.data(), owned_roots * sizeof(std::int64_t),
                                       cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  return agg;
}

dist::DistMatrix download_strength_graph(const dist::Communicator& comm, const DistDeviceGraph& graph,
                                         cudaStream_t s) {
  dist::DistMatrix host;
  host.row_partition = host.col_partition = graph.partition;
  host.rank = comm.rank();
  dist::call_collectively(comm, "download of the strong node graph", [&] {
    host.local = tessera::cuda::download(graph.local, s);
    host.nonlocal = tessera::cuda::download(graph.nonlocal, s);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  });
  host.ghost_cols = graph.ghost_nodes;
  host.halo = graph.halo;
  return host;
}

DistGraphPhases device_graph_phases(cudaStream_t s) {
  return [s](const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes, double theta,
             SetupTimes& times, DeviceOperatorSlot& device_a, dist::DistMatrix* strong_graph) {
    return timed_graph_phases(
        times, [&] { return dist_device_strength_graph(comm, a, nodes, theta, device_a, s); },
        [&](const DistDeviceGraph& graph) { return dist_device_aggregate(comm, graph, s); },
        [&](const DistDeviceGraph& graph) {
          if (strong_graph) *strong_graph = download_strength_graph(comm, graph, s);
        });
  };
}

}  // namespace tessera::amg::gpu
