#pragma once
// The GPU backend's DistHeldExtendedA (amg/dist/dist_setup_backend.hpp): a level's products
// (A*P_tent, then A*P inside P^T A P) read A from the level's copy on the rank's GPU, the
// DeviceOperatorSlot the strength phase fills. For each product, A_ext is assembled on the device
// from the copy's two blocks (dist::gpu::extended_block, a copy kernel) and handed to the
// offloaded product (cuda::offload_spgemm / offload_chain with a device A): A is neither copied
// on the host nor uploaded for the products (docs/performance.md, twentieth session).
// The right operands (P_tent's and P's extended rows, P^T) are host-built and uploaded, except
// at a level's first P^T A P, when the device smoothing hands over P and P^T where it made them
// (dist::gpu::DeviceHeldOperand): B_ext is then assembled on the device and nothing is uploaded.
#include <cuda_runtime_api.h>

#include <memory>

#include "amg/dist/dist_setup_backend.hpp"
#include "local/cuda/offload_spgemm.hpp"

namespace tessera::amg::gpu {

/// Products on the device that is current at this call, on engine `which` (automatic: one engine a
/// level, see level_engine below), their times added to `stats` (A_ext's assembly counted as a
/// conversion); the slot's copy is made on `stream` if the slot is empty, and refreshed there if
/// stale (a re-setup), before each product. `stream` must outlive the hierarchy (the copies are
/// freed there): the DeviceContext's compute stream, as for device_graph_phases.
DistHeldExtendedA device_held_extended_a(cudaStream_t stream, cuda::OffloadSpgemm which,
                                          std::shared_ptr<cuda::OffloadStats> stats = {});

/// A_ext from a copy device_held_extended_a made, assembled as its own products get it (ready on
/// the default stream), for a step that multiplies by it itself (device_smoothing). Asserts that
/// `held` is such a copy.
cuda::DeviceCsr<double> device_extended_a(dist::HeldExtendedA& held);

/// The engine of the level `held` serves, for its product A_ext * b (both on the device, ready on
/// the default stream): `which` where device_held_extended_a was given an engine; for automatic,
/// fixed by the level's first product through `held` (this call's, or one of held's own) from
/// that product's work estimate (cuda::resolve_level_spgemm_engine), and the engine of the
/// level's later products through `held`.
/// Asserts that `held` is such a copy.
cuda::OffloadSpgemm level_engine(dist::HeldExtendedA& held, const cuda::DeviceCsr<double>& a_ext,
                                 const cuda::DeviceCsr<double>& b);

/// 1 / a_ii of the copy `held` reads, where the inverse diagonal step divided it on the device
/// (current_inverse_diagonal), else null. Asserts that `held` is such a copy.
std::shared_ptr<const tessera::cuda::DeviceBuffer<double>> held_inverse_diagonal(const dist::HeldExtendedA& held);

}  // namespace tessera::amg::gpu
