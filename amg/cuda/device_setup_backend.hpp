#pragma once
// The GPU backend's DistSetupBackend (amg/dist/dist_setup_backend.hpp): every replaceable step
// of the distributed setup on the ranks' GPUs, as the driver and the PETSc plugin run it.
#include <memory>

#include "amg/dist/dist_setup_backend.hpp"
#include "dist/cuda/device_context.hpp"
#include "local/cuda/offload_spgemm.hpp"

namespace tessera::amg::gpu {

/// On `ctx`'s device and compute stream: the products (dist::device_local_spgemm) on engine
/// `which`, their times added to `stats`; the graph phases (device_graph_phases), which leave each
/// level's A on the device; the tentative prolongator's QR (device_tentative); the eigenvalue
/// estimates (device_eigen_estimator) and the products' reads of A (device_held_extended_a, on the
/// same engine) from that copy; the first merge of each P, next to its product A P_tent
/// (device_smoothing); the host factor of the coarsest level on first use (the device solve
/// factors its own). A re-setup's transfer stays host-driven unless the caller adds
/// dist_device_transfer(ctx) (dist_device_transfer.hpp says what its plan costs). `ctx` must
/// outlive every hierarchy set up with it: the copies are freed on its stream, and a re-setup
/// runs these steps again.
DistSetupBackend device_setup_backend(dist::gpu::DeviceContext& ctx, cuda::OffloadSpgemm which,
                                      std::shared_ptr<cuda::OffloadStats> stats = {});

}  // namespace tessera::amg::gpu
