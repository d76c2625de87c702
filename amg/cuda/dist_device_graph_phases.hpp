#pragma once
// The graph phases of the distributed setup on each rank's GPU: the device twins of
// dist_strength_graph and dist_aggregate (amg/dist/), which they reproduce exactly on any
// partition (the same graph, the same aggregates numbered alike, the same MIS-2 rounds).
//   Strength: the owned x owned block of the graph by the one-GPU kernels (device_strength_graph
//     on A's local block: a node never spans ranks, so its diagonal block and every edge
//     between two owned nodes, in both directions, are there), read from the level's device copy
//     of A, which stays for the level's eigenvalue estimate and solve; the edges to other ranks'
//     nodes from the host (cross_rank_strength: boundary nodes only), uploaded as the non-local
//     block (only the rows with edges travel; the GPU lays out the offsets of every row).
//   Aggregation: device_aggregate's three phases over both blocks. Each step that reads a
//     neighbour's value (MIS-2 keys, one-ring maxima, root aggregates, placements) first
//     exchanges the boundary values over the graph's halo plan (dist/cuda/host_staged_halo.cuh:
//     a gather kernel, a copy of the sent items to the host, MPI, a copy of the ghosts back):
//     2 exchanges a round and 2 for the placements. Only boundary values travel, so MPI on host
//     buffers serves (the setup needs no NCCL context); one allreduce a round counts the
//     undecided nodes.
// Everything is ordered on `stream` on the rank's current device (dist::use_rank_device).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "amg/dist/dist_graph_phases.hpp"
#include "dist/halo_plan.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// This rank's rows of the strong node graph, on its GPU.
struct DistDeviceGraph {
  std::int64_t first_node = 0;             // global id of owned node 0
  dist::RowPartition partition;            // nodes per rank
  tessera::cuda::DeviceCsr<double> local;     // owned x owned nodes, local ids
  tessera::cuda::DeviceCsr<double> nonlocal;  // owned nodes x ghost nodes (index into ghost_nodes)
  std::vector<std::int64_t> ghost_nodes;      // sorted global ids of the nodes of other ranks
  dist::HaloPlan halo;                        // brings a value of every ghost node

  std::int64_t owned_nodes() const { return local.rows; }
};

/// Collective. The graph of dist_strength_graph(comm, a, nodes, theta), split as above. The
/// owned block is read from A's device copy in `device_a` (device_operator_slot.hpp: uploaded
/// here on `stream` if the slot is empty, and kept there for the level's later device phases).
DistDeviceGraph dist_device_strength_graph(const dist::Communicator& comm, const dist::DistMatrix& a,
                                           const DistNodes& nodes, double theta, DeviceOperatorSlot& device_a,
                                           cudaStream_t stream);
/// The same with a copy of A made for the call and dropped after it.
DistDeviceGraph dist_device_strength_graph(const dist::Communicator& comm, const dist::DistMatrix& a,
                                           const DistNodes& nodes, double theta, cudaStream_t stream = nullptr);

/// Collective. dist_aggregate's result for the same graph.
DistAggregates dist_device_aggregate(const dist::Communicator& comm, const DistDeviceGraph& graph,
                                     cudaStream_t stream = nullptr);

/// Collective. The graph in dist_strength_graph's host form (the same blocks, ghosts and halo
/// plan), for a caller that reads it there (the filtered operator, dist_filtered_operator.hpp).
dist::DistMatrix download_strength_graph(const dist::Communicator& comm, const DistDeviceGraph& graph,
                                         cudaStream_t stream = nullptr);

/// Both, timed: the DistGraphPhases of the GPU backend, on the rank's current device and
/// `stream`, which must outlive the levels' copies of A it makes (a DeviceContext's compute
/// stream, which the device solve that shares them uses too; or the legacy default stream).
DistGraphPhases device_graph_phases(cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
