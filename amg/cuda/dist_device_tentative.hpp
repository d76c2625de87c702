#pragma once
// The distributed tentative prolongator with its per-aggregate QR on the rank's GPU (the GPU
// backend's DistSetupBackend::tentative): dist_tentative_prolongator's steps 1 and 3 (members
// to their aggregate's owner, Q rows back: amg/dist/dist_tentative_steps.hpp) around the
// one-GPU setup's device_tentative_prolongator, which groups the members by aggregate and
// factors each aggregate (amg/cuda/device_setup_phases.hpp). The rank's dofs and the members it
// received go to that kernel as one node list in global dof order -- received dofs of lower
// ranks, the owned nodes, received dofs of higher ranks -- so its stable grouping keeps every
// aggregate's members in the host's order, and the result is the host's bit for bit.
#include <cuda_runtime_api.h>

#include "amg/dist/dist_setup_backend.hpp"

namespace tessera::amg::gpu {

/// Collective; as dist_tentative_prolongator, ordered on `stream`.
DistTentative dist_device_tentative_prolongator(const dist::Communicator& comm, const DistAggregates& aggregates,
                                                const DistNodes& fine, const dist::DistMatrix& a,
                                                const DenseMatrix& b, cudaStream_t stream = nullptr);

/// DistSetupBackend::tentative on `stream`.
DistTentativeBuilder device_tentative(cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
