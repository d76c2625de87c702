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

namespace tessera::dist {
struct KeptOuterProduct;
}
namespace tessera::dist::gpu {
struct DeviceDistMatrix;
}
namespace tessera::cuda {
template <class T>
class DeviceBuffer;
}

namespace tessera::amg {

struct DeviceOperatorSlot {
  std::shared_ptr<dist::gpu::DeviceDistMatrix> matrix;  // null until a device phase makes it
  bool stale = false;  // the host values changed since the copy was made or refreshed
  // 1 / a_ii of the owned rows, divided on the copy by the GPU backend's inverse diagonal step:
  // the eigenvalue estimate, the prolongator smoothing and the device solve read it here instead
  // of uploading the host's (which is its download, bit for bit). Null until that step, and
  // dropped with the values it came from.
  std::shared_ptr<const cuda::DeviceBuffer<double>> inverse_diagonal;
  // The Galerkin product's outer product T where it was made on the GPU, while the copy is not
  // made (dist::DistPtap::take_device_result): the copy's maker takes C's rows from it instead of
  // uploading them (on one rank T is C's local block; on more, C's rows that receive nothing are
  // T's). Dropped with the values it came from.
  std::shared_ptr<dist::KeptOuterProduct> outer_product;

  /// The host matrix got new values (same pattern): the copy must be refreshed before use.
  void values_changed() {
    stale = matrix != nullptr;
    inverse_diagonal.reset();
    outer_product.reset();
  }
};

}  // namespace tessera::amg
