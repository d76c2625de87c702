#pragma once
// dist::HeldOperand on a GPU: B's two blocks and L = ref::transpose(extended_block(B)) as the
// GPU backend made them (the distributed smoothing's merge leaves P and P^T so,
// amg/cuda/dist_device_smoothing.hpp), for the held A_ext's chain that reads them once
// (amg/cuda/device_held_extended_a.hpp): B_ext's owned rows are assembled from the blocks
// (device_compact_extended_rows.hpp) and L is the chain's left factor, so neither goes through
// the host. The tentative prolongator leaves P_tent's blocks so too, without L
// (amg/cuda/dist_device_tentative.hpp), for the smoothing's product A*P_tent. Ready on any stream
// (their maker synchronised its stream); freed with this object. Built only with CUDA.
#include "dist/extended_operand.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::dist::gpu {

struct DeviceHeldOperand final : HeldOperand {
  int device = 0;  // where the arrays live
  tessera::cuda::DeviceCsr<double> local, nonlocal;  // B's owned rows: owned columns, ghost columns
  tessera::cuda::DeviceCsr<double> transposed;       // L
};

/// The product L*(A*B) where that chain made it (ChainedProduct::on_device), as the host copy was
/// downloaded from it: the Galerkin product's outer product T (dist::KeptOuterProduct), from
/// which the coarse level's device copy is made (amg/cuda/device_operator_slot.hpp). Ready on any
/// stream.
struct DeviceHeldProduct final : HeldOperand {
  int device = 0;
  tessera::cuda::DeviceCsr<double> product;
};

}  // namespace tessera::dist::gpu
