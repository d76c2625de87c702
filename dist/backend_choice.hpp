#pragma once
// The backend of a distributed run, chosen the same way on every rank. `auto` takes the GPUs
// only when every rank has one of its own (node-local rank among the visible devices, see
// rank_device.hpp), where NCCL moves the device data; otherwise the whole job runs on the host.
// `gpu` also runs where ranks share a GPU, through the slower host-staged transport
// (device_transport.hpp); a rank without a device is the same InputError on every rank.
#include <memory>
#include <string>

#include "dist/spgemm.hpp"
#include "local/core/backend.hpp"
#include "local/cuda/offload_spgemm.hpp"  // host-safe: the names and timings of the device products

namespace tessera::dist {

class Communicator;

/// Collective. "auto" | "host" | "gpu".
Backend resolve_distributed_backend(const Communicator& comm, const std::string& name);

/// Collective. The rank-local SpGEMM of DistSpgemm / DistPtap for `backend`: the host
/// reference, or on the GPU (each rank's own, made current here) the tile SpGEMM, hash SpGEMM or cuSPARSE
/// named by `spgemm` ("tile" | "cusparse" | "hash" | "auto"), whose times accumulate in `stats` when given.
/// A GPU product name with the host backend is an InputError.
LocalSpgemm local_spgemm_for(const Communicator& comm, Backend backend, const std::string& spgemm,
                             std::shared_ptr<cuda::OffloadStats> stats = {});

}  // namespace tessera::dist
