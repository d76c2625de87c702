#include "dist/cuda/halo_route.hpp"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"

namespace tessera::dist::gpu {

namespace {

constexpr int kBusIdLength = 32;

/// Whether this rank's GPU can map the GPU of every other rank, given all ranks' PCI bus ids.
bool can_reach_every_peer(int device, int me, const std::vector<char>& bus_ids, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    if (r == me) continue;
    int peer = -1;
    // A GPU this process cannot see (per-rank CUDA_VISIBLE_DEVICES) cannot be mapped either.
    if (cudaDeviceGetByPCIBusId(&peer, &bus_ids[static_cast<std::size_t>(r) * kBusIdLength]) != cudaSuccess) {
      cudaGetLastError();  // clear the non-sticky error
      return false;
    }
    int can = 0;
    if (peer == device || cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess || !can) {
      cudaGetLastError();
      return false;
    }
  }
  return true;
}

}  // namespace

const char* halo_route_name(HaloRoute route) { return route == HaloRoute::peer ? "peer" : "nccl"; }

HaloRoute parse_halo_route(const std::string& name) {
  if (name == "nccl") return HaloRoute::nccl;
  if (name == "peer") return HaloRoute::peer;
  throw InputError(detail::concat("unknown halo route '", name, "': choose nccl or peer"));
}

bool peer_route_available(const Communicator& comm, int device) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.mpi(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  // Every rank computes the same node test; the bus ids are only comparable within one node.
  if (node_ranks != comm.size()) return false;
  char mine[kBusIdLength] = {};
  // A failure here must not skip the collectives below: this rank just answers "no".
  const bool known = cudaDeviceGetPCIBusId(mine, kBusIdLength, device) == cudaSuccess;
  if (!known) cudaGetLastError();
  std::vector<char> all(static_cast<std::size_t>(comm.size()) * kBusIdLength);
  MPI_Allgather(mine, kBusIdLength, MPI_CHAR, all.data(), kBusIdLength, MPI_CHAR, comm.mpi());
  const bool here = known && can_reach_every_peer(device, comm.rank(), all, comm.size());
  return comm.allreduce(std::int64_t(here ? 1 : 0), ReduceOp::min) == 1;
}

HaloRoute initial_halo_route(const Communicator& comm, bool peer_available) {
  const char* env = std::getenv("TESSERA_HALO_ROUTE");
  std::string error;
  // 0 = unset, 1 = peer, 2 = nccl: the maximum over ranks makes nccl win a disagreement.
  std::int64_t wish = 0;
  if (env && *env) {
    try {
      wish = parse_halo_route(env) == HaloRoute::peer ? 1 : 2;
    } catch (const InputError& e) {
      error = detail::concat("TESSERA_HALO_ROUTE: ", e.what());
    }
  }
  throw_if_any_rank_failed(comm, error);
  wish = comm.allreduce(wish, ReduceOp::max);
  if (wish == 2) return HaloRoute::nccl;
  TESSERA_REQUIRE_INPUT(wish == 0 || peer_available,
                        "TESSERA_HALO_ROUTE=peer, but the ranks' GPUs cannot map each other's memory (ranks on "
                        "several nodes, or GPUs without peer access): use nccl");
  return peer_available ? HaloRoute::peer : HaloRoute::nccl;
}

}  // namespace tessera::dist::gpu
