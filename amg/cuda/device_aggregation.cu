// Aggregation on the device, the host amg::aggregate's phases and tie-breaks (see
// amg/aggregation.hpp), one thread per node in each step:
//  1. MIS-2 on packed 64-bit keys (0 = out, UINT64_MAX = in the set, else the priority
//     mis_priority(id)): per round, reach1 = neighbour max of the keys, then every undecided
//     node takes the max of reach1 over its neighbourhood and joins, drops out or waits, exactly
//     as the host round does. The undecided count comes back once per round; the rounds are
//     bounded and a round without progress is an error, never an endless loop.
//  2. Roots numbered by an exclusive scan of the root flags (increasing root id); each root
//     writes its aggregate to itself and its neighbours (disjoint neighbourhoods).
//  3. Leftovers read a copy of the phase-2 result and join their strongest placed neighbour,
//     ties to the lowest aggregate.
#include "amg/cuda/device_setup_phases.hpp"
#include "amg/cuda/setup_phase_kernels.cuh"
#include "amg/mis2_rules.hpp"
#include "local/core/error.hpp"

namespace tessera::amg::gpu {
namespace {

using detail::kBlock;
using detail::thread_index;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::grid_for;
using mis2::Key;
using mis2::kInSetKey;
using mis2::kMaxRounds;
using mis2::kOutKey;

constexpr std::int32_t kNotAggregated = -1;

struct GraphView {
  const std::int64_t* row_ptr;
  const std::int32_t* col;
  const double* val;
};

__global__ void initial_keys(GraphView g, std::int64_t n, Key* key) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  key[i] = mis2::initial_key(g.row_ptr[i + 1] == g.row_ptr[i], static_cast<Key>(i));
}

__global__ void neighbour_max(GraphView g, std::int64_t n, const Key* in, Key* out) {
  const std::int64_t j = thread_index();
  if (j >= n) return;
  Key m = in[j];
  for (std::int64_t p = g.row_ptr[j]; p < g.row_ptr[j + 1]; ++p) m = max(m, in[g.col[p]]);
  out[j] = m;
}

/// Second half of a round: reads only reach1 and the node's own key, so updating keys in place
/// is the host's sequential loop exactly. Counts the nodes still undecided.
__global__ void decide(GraphView g, std::int64_t n, const Key* reach1, Key* key, unsigned long long* undecided) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const Key own = key[i];
  if (own == kOutKey || own == kInSetKey) return;
  Key reach = reach1[i];
  for (std::int64_t p = g.row_ptr[i]; p < g.row_ptr[i + 1]; ++p) reach = max(reach, reach1[g.col[p]]);
  key[i] = mis2::decided_key(own, reach);
  if (key[i] == own) atomicAdd(undecided, 1ull);
}

__global__ void root_flags(const Key* key, std::int64_t n, std::int32_t* flag) {
  const std::int64_t i = thread_index();
  if (i < n) flag[i] = key[i] == kInSetKey;
}

__global__ void place_roots(GraphView g, std::int64_t n, const std::int32_t* flag, const std::int32_t* number,
                            std::int32_t* of_node, std::int32_t* roots) {
  const std::int64_t i = thread_index();
  if (i >= n || !flag[i]) return;
  const std::int32_t a = number[i];
  roots[a] = static_cast<std::int32_t>(i);
  of_node[i] = a;
  for (std::int64_t p = g.row_ptr[i]; p < g.row_ptr[i + 1]; ++p) of_node[g.col[p]] = a;
}

__global__ void place_leftovers(GraphView g, std::int64_t n, const std::int32_t* placed, std::int32_t* of_node,
                                unsigned long long* stranded) {
  const std::int64_t i = thread_index();
  if (i >= n || placed[i] != kNotAggregated || g.row_ptr[i + 1] == g.row_ptr[i]) return;
  double best_strength = -1.0;
  std::int32_t best = kNotAggregated;
  for (std::int64_t p = g.row_ptr[i]; p < g.row_ptr[i + 1]; ++p) {
    const std::int32_t a = placed[g.col[p]];
    if (a == kNotAggregated) continue;
    if (mis2::better_leftover_home(g.val[p], a, best_strength, best)) {
      best_strength = g.val[p];
      best = a;
    }
  }
  if (best == kNotAggregated) atomicAdd(stranded, 1ull);
  of_node[i] = best;
}

/// Phase 1: the MIS-2 keys after the last round (roots hold kInSetKey).
DeviceBuffer<Key> distance2_independent_set(GraphView g, std::int64_t n, cudaStream_t s) {
  DeviceBuffer<Key> key(n, s), reach1(n, s);
  DeviceBuffer<unsigned long long> undecided(1, s);
  const unsigned grid = grid_for(n, kBlock);
  initial_keys<<<grid, kBlock, 0, s>>>(g, n, key.data());
  TESSERA_CHECK_LAUNCH();
  unsigned long long before = static_cast<unsigned long long>(n) + 1;
  for (int round = 0;; ++round) {
    undecided.fill_bytes(0, s);
    neighbour_max<<<grid, kBlock, 0, s>>>(g, n, key.data(), reach1.data());
    decide<<<grid, kBlock, 0, s>>>(g, n, reach1.data(), key.data(), undecided.data());
    TESSERA_CHECK_LAUNCH();
    const unsigned long long left = tessera::cuda::read_scalar(undecided.data(), s);
    if (left == 0) break;
    TESSERA_ASSERT(left < before && round < kMaxRounds, "device MIS-2: ", left, " nodes still undecided after ",
                   round + 1, " rounds");
    before = left;
  }
  return key;
}

}  // namespace

DeviceAggregates device_aggregate(const tessera::cuda::DeviceCsr<double>& graph, cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(graph.rows == graph.cols, "AMG aggregation: the strength graph must be square, it is ",
                        graph.rows, " x ", graph.cols);
  TESSERA_REQUIRE_INPUT(graph.rows < INT32_MAX, "AMG aggregation: ", graph.rows, " nodes exceed 32-bit ids");
  const std::int64_t n = graph.rows;
  DeviceAggregates agg;
  agg.of_node.allocate(n, s);
  agg.of_node.fill_bytes(0xff, s);  // every int32 = -1 = kNotAggregated
  if (n == 0) return agg;
  const GraphView g{graph.row_ptr.data(), graph.col_idx.data(), graph.values.data()};
  const unsigned grid = grid_for(n, kBlock);
  const DeviceBuffer<Key> key = distance2_independent_set(g, n, s);

  DeviceBuffer<std::int32_t> flag(n + 1, s), number(n + 1, s);
  flag.fill_bytes(0, s);
  root_flags<<<grid, kBlock, 0, s>>>(key.data(), n, flag.data());
  TESSERA_CHECK_LAUNCH();
  detail::exclusive_scan_with_total(flag.data(), number.data(), n, s);
  agg.count = tessera::cuda::read_scalar(number.data() + n, s);
  agg.roots.allocate(agg.count, s);
  place_roots<<<grid, kBlock, 0, s>>>(g, n, flag.data(), number.data(), agg.of_node.data(), agg.roots.data());
  TESSERA_CHECK_LAUNCH();

  DeviceBuffer<std::int32_t> placed(n, s);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(placed.data(), agg.of_node.data(), n * sizeof(std::int32_t),
                                     cudaMemcpyDeviceToDevice, s));
  DeviceBuffer<unsigned long long> stranded(1, s);
  stranded.fill_bytes(0, s);
  place_leftovers<<<grid, kBlock, 0, s>>>(g, n, placed.data(), agg.of_node.data(), stranded.data());
  TESSERA_CHECK_LAUNCH();
  const unsigned long long lost = tessera::cuda::read_scalar(stranded.data(), s);
  TESSERA_ASSERT(lost == 0, "device aggregation: ", lost, " nodes are not within distance 2 of an MIS-2 root");
  return agg;
}

}  // namespace tessera::amg::gpu
