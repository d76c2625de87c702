#pragma once
// How the halo of a device product travels between GPUs (built only with CUDA):
//   nccl  grouped ncclSend/ncclRecv on the exchange stream (any node layout);
//   peer  direct stores into the neighbours' ghost buffers through CUDA IPC mappings, with
//         device-side flags (peer_halo_exchange.hpp): every rank on one node, every GPU pair
//         able to map each other's memory (NVLink or PCIe peer access).
// The peer route exists for latency: an NCCL exchange of a few KB costs 40-56 us on 4 H200s,
// several times a level's local SpMV on the coarser AMG levels (docs/performance.md).
#include <string>

namespace tessera::dist {
class Communicator;
}

namespace tessera::dist::gpu {

enum class HaloRoute { nccl, peer };

const char* halo_route_name(HaloRoute route);
/// "nccl" or "peer"; anything else is an InputError that lists the choices.
HaloRoute parse_halo_route(const std::string& name);

/// Collective: the same answer on every rank. True when every rank of `comm` runs on one node
/// and the GPU `device` of each rank can access the GPU of every other rank (peer access).
bool peer_route_available(const Communicator& comm, int device);

/// Collective: the route a DeviceContext starts with. TESSERA_HALO_ROUTE (nccl | peer) when set
/// on any rank (nccl wins a disagreement; peer where it is unavailable is an InputError on every
/// rank), otherwise peer where available, nccl elsewhere.
HaloRoute initial_halo_route(const Communicator& comm, bool peer_available);

}  // namespace tessera::dist::gpu
