#pragma once
// The rank-local products of dist::DistSpgemm and dist::DistPtap (A_ext * B_ext, and the
// outer product P_own^T * AP_own) on the rank's GPU, through cuda::offload_spgemm: the tile
// SpGEMM on tensor cores, the row-wise hash SpGEMM (sparse tiles), cuSPARSE SpGEMM as the
// baseline, or OffloadSpgemm::automatic (each product on the engine its work estimate picks;
// OffloadStats counts the tile and the cuSPARSE ones). The exchange of remote rows and the
// assembly stay on the host (MPI): this moves the local compute, the part that scales with
// nnz, to the device. All three engines keep the structural pattern, so recompute() reuses
// the symbolic phase exactly as with the host product. DistPtap's two products run as one
// cuda::offload_chain, AP kept on the device between them. Built only with CUDA.
//
//   dist::use_rank_device(comm);   // once: each rank on its own GPU
//   auto stats = std::make_shared<cuda::OffloadStats>();
//   dist::DistPtap galerkin(comm, a, p, dist::device_local_spgemm(cuda::OffloadSpgemm::tile, stats));
#include <memory>

#include "dist/spgemm.hpp"
#include "local/cuda/offload_spgemm.hpp"

namespace tessera::dist {

class Communicator;

/// A LocalSpgemm on the device that is current when this is called (each product makes it
/// current again, so other code may switch devices in between). `stats`, if given, accumulates
/// the upload/convert/product/download times of every product made through it.
LocalSpgemm device_local_spgemm(cuda::OffloadSpgemm which, std::shared_ptr<cuda::OffloadStats> stats = {});

/// Collective: makes this rank's GPU current (rank_device: its rank among the ranks of its
/// node, as DeviceContext chooses it) and returns its index. InputError on every rank if some
/// rank sees no device; ranks may share one (the products here need no NCCL).
int use_rank_device(const Communicator& comm);

}  // namespace tessera::dist
