#pragma once
// The device side of DeviceOperatorSlot (amg/dist/device_operator_slot.hpp): the level's A as a
// dist::gpu::DeviceDistMatrix, uploaded by the first device phase that asks for it and re-sent
// (values only) after the host values changed.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "amg/dist/device_operator_slot.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "local/cuda/device_buffer.hpp"

namespace tessera::amg::gpu {

/// The copy of `a` in `slot`: made on `stream` if the slot is empty (from the Galerkin product's
/// outer product left in the slot, if any, with only what it lacks uploaded), its values re-sent
/// if it is stale. Not collective, and it can fail on one rank alone (out of device memory): call
/// it inside dist::call_collectively. The buffers are freed on `stream` when the last holder lets go,
/// so `stream` must outlive the slot (a DeviceContext's compute stream, or the legacy default
/// stream).
dist::gpu::DeviceDistMatrix& device_operator(DeviceOperatorSlot& slot, const dist::DistMatrix& a, cudaStream_t stream);

/// The slot's copy if it holds `a`'s current values, else null (a reader that cannot refresh it).
std::shared_ptr<dist::gpu::DeviceDistMatrix> current_copy(const DeviceOperatorSlot& slot, const dist::DistMatrix& a);

/// The slot's 1 / a_ii if the inverse diagonal step divided it from the copy of `a`'s current
/// values, else null (the reader uploads the host's).
std::shared_ptr<const tessera::cuda::DeviceBuffer<double>> current_inverse_diagonal(const DeviceOperatorSlot& slot,
                                                                                      const dist::DistMatrix& a);

/// `a`'s 1 / a_ii into `to` (sized for it), ordered on `stream`: copied on the device from the slot
/// where current_inverse_diagonal finds it, else uploaded from `host` (its download, bit for bit).
void fill_inverse_diagonal(const DeviceOperatorSlot& slot, const dist::DistMatrix& a, const std::vector<double>& host,
                           tessera::cuda::DeviceBuffer<double>& to, cudaStream_t stream);

}  // namespace tessera::amg::gpu
