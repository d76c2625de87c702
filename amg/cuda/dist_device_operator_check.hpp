#pragma once
// The distributed setup's check of a level's operator on the rank's GPU: the DistOperatorCheck of
// the GPU backend (amg/dist/dist_level_ops.hpp). The rows are tested on the level's device copy
// (device_first_unfit_row), which the check makes in the level's slot where the level's first
// device phase would have made it anyway; the host reads rows only to word an error, the host
// check's own words. Why: at 7.1M rows the host's pass over A took 0.033-0.036 s of a 0.75 s
// repeated setup (docs/performance.md, forty-sixth section), the device pass about a millisecond.
// The level's 1 / a_ii (the GPU backend's DistInverseDiagonal) is divided on the same copy: the
// host's two passes over 7M rows took 0.018-0.020 s of a 0.37 s repeated setup on one rank.
#include <cuda_runtime_api.h>

#include "amg/dist/dist_level_ops.hpp"

namespace tessera::amg::gpu {

/// Collective. check_dist_operator's contract: a square operator on one partition, finite values,
/// a positive diagonal in every owned row, else the same InputError on every rank. `device_a` is
/// the level's slot (amg/cuda/device_operator_slot.hpp: made on `stream` if empty, refreshed if
/// stale).
void dist_device_check_operator(const dist::Communicator& comm, const dist::DistMatrix& a, const std::string& what,
                                DeviceOperatorSlot& device_a, cudaStream_t stream);

/// dist_device_check_operator on `stream`, which must outlive the check (and the DistAmg holding
/// it: a re-setup checks the coarse levels again).
DistOperatorCheck device_operator_check(cudaStream_t stream);

/// Collective. owned_inverse_diagonal(a), bit for bit, divided on the level's device copy (made in
/// `device_a` on `stream` if empty, refreshed if stale) and downloaded, for an operator the check
/// passed (one it refuses is an InputError on every rank); `device_a` keeps the device's
/// (DeviceOperatorSlot::inverse_diagonal). A rectangular operator is left to the host.
std::vector<double> dist_device_inverse_diagonal(const dist::Communicator& comm, const dist::DistMatrix& a,
                                                 DeviceOperatorSlot& device_a, cudaStream_t stream);

/// dist_device_inverse_diagonal on `stream`, which must outlive it.
DistInverseDiagonal device_inverse_diagonal_step(cudaStream_t stream);

}  // namespace tessera::amg::gpu
