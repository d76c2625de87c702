#pragma once
// DeviceOperatorSlot: where a level of the distributed hierarchy keeps its operator's copy on the
// rank's GPU (a dist::gpu::DeviceDistMatrix) between the phases that read it there. With the GPU
// backend the first of them (the strength phase) uploads A; the eigenvalue estimate, the
// products (amg/cuda/device_held_extended_a.hpp) and the device solve reuse that copy: one upload
// of A a level instead of five. The host backend
// never fills it, so a build without CUDA only carries an empty pointer (the type is declared,
// not defined, here).
//
// The level owns the copy; the device solve shares it. When the level's host values change (a
// re-setup), DistHierarchy calls values_changed(), and the next device phase re-sends the values
// before it reads them (amg/cuda/device_operator_slot.hpp). The copy points at the host
// DistMatrix it was made from (for its halo plan), so the hierarchy keeps its levels in place.
#include <memory>

namespace tessera::dist::gpu {
struct DeviceDistMatrix;
}

namespace tessera::amg {

struct DeviceOperatorSlot {
  std::shared_ptr<dist::gpu::DeviceDistMatrix> matrix;  // null until a device phase makes it
  bool stale = false;  // the host values changed since the copy was made or refreshed

  /// The host matrix got new values (same pattern): the copy must be refreshed before use.
  void values_changed() { stale = matrix != nullptr; }
};

}  // namespace tessera::amg
