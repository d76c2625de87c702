#pragma once
// A distributed level's first smoothed prolongator on the rank's GPU (the GPU backend's
// DistSetupBackend::smoothing), P = P_tent - omega D^-1 (A P_tent):
//   A P_tent  the level's CompactSpgemm product formed on the device (A_ext from the level's
//             device copy when it is held there, else uploaded; B_ext, P_tent's owned and
//             received rows, assembled there from the blocks the device tentative prolongator
//             kept (dist/cuda/device_compact_extended_rows.hpp), else uploaded) and left there
//             (CompactSpgemm::multiply_with);
//   merge     row by row on the device in the product's compact columns, in which B_ext's first
//             rows are P_tent's owned rows. The outside columns the rows use are flagged there
//             and numbered on the host by the host merge's own step (number_smoothed_columns);
//             each merged row is then written into P's local and non-local blocks, which are
//             downloaded;
//   P^T       made from those blocks on the device (dist/cuda/device_transposed_block.hpp) and
//             downloaded with them: the Galerkin product's left factor, which the host would
//             otherwise transpose (docs/performance.md, forty-fifth session);
//   kept      P's blocks and P^T stay on the device after their downloads
//             (SmoothedProlongator::held, a dist::gpu::DeviceHeldOperand), for the level's first
//             P^T A P, whose held A then reads them there instead of uploading B_ext and P^T.
// P equals the host merge (smoothed_blocks) of the same A P_tent bit for bit: the same union of
// columns, each value P_tent + scale * (A P_tent) rounded as the host rounds it (no fused
// multiply-add). Instead of A P_tent's download and the host merge, it downloads P (docs/
// performance.md, forty-third session). It reads 1 / a_ii from the level's device slot where the
// inverse diagonal step left it there (held_inverse_diagonal), else it uploads the host's.
#include <cuda_runtime_api.h>

#include <memory>

#include "amg/dist/dist_setup_backend.hpp"
#include "local/cuda/offload_spgemm.hpp"

namespace tessera::amg::gpu {

/// What the merge gives besides P (the last two are tessera-amg's ablations --galerkin-operands
/// host and --transpose-p host).
enum class MergeOutputs {
  kept_for_solve,   // as kept_on_device, and copies of P's blocks and of P^T's top rows (R's
                    // owned block) kept for the level's slots (SmoothedProlongator::keep_for_solve)
  kept_on_device,   // P^T downloaded, and P and P^T kept on the device (SmoothedProlongator::held)
  p_transposed,     // P^T downloaded; nothing kept
  p_only            // no P^T: the host transposes P
};

/// Collective; as dist_smoothed_prolongator, on the device current at this call: the product on
/// engine `which` on the default stream (synchronised), its times added to `stats`; the merge
/// on `stream`; `outputs` as above.
SmoothedProlongator dist_device_smoothed_prolongator(const dist::Communicator& comm,
                                                     dist::CompactSpgemm& a_times_p_tent,
                                                     const dist::DistMatrix& p_tent, const Vector& inv_diag,
                                                     double omega, cudaStream_t stream, cuda::OffloadSpgemm which,
                                                     cuda::OffloadStats& stats,
                                                     MergeOutputs outputs = MergeOutputs::kept_for_solve);

/// DistSetupBackend::smoothing on the device current at this call, as above.
DistSmoothing device_smoothing(cudaStream_t stream = nullptr,
                               cuda::OffloadSpgemm which = cuda::OffloadSpgemm::automatic,
                               std::shared_ptr<cuda::OffloadStats> stats = {},
                               MergeOutputs outputs = MergeOutputs::kept_for_solve);

}  // namespace tessera::amg::gpu
