#pragma once
// Where the replaceable steps of the distributed setup run (DistHierarchy, DistAmg). Each field
// defaults to the host; the GPU backend's versions (amg/cuda/) run on the ranks' GPUs, all of
// them together from amg::gpu::device_setup_backend. Every combination builds the same hierarchy
// (the gpu tests compare them with the host's).
//   products         the rank-local SpGEMMs of A*P_tent and P^T A P (dist::device_local_spgemm),
//                    unless A is held (below): then the holder multiplies, on its own engine,
//                    which should be the same one
//   graph_phases     strength and aggregation (amg::gpu::device_graph_phases), which leave the
//                    level's A on the device (DistLevel::device_a)
//   eigen_estimator  lambda_max of D^-1 A (amg::gpu::device_eigen_estimator), on that copy
//   held_extended_a  where the products read A: empty, from a host copy of A each level's first
//                    product makes (which device products upload); amg::gpu::device_held_extended_a,
//                    from the level's device copy (no host copy, no upload)
//   host_coarse_factor
//                    when the host factors the gathered coarsest operator (DistHierarchy::coarse):
//                    at setup, for the host cycle; or on its first use, where a device solve
//                    follows, which factors its own copy (cuSOLVER) and needs the host's only if
//                    the device refuses it
#include <functional>
#include <memory>

#include "amg/dist/device_operator_slot.hpp"
#include "amg/dist/dist_eigen_estimate.hpp"
#include "amg/dist/dist_graph_phases.hpp"
#include "dist/compact_spgemm.hpp"
#include "dist/extended_operand.hpp"

namespace tessera::amg {

/// A level's A_ext held where its products run, read from the level's slot (made there if it is
/// empty). Not collective; called once a level, at its first setup.
using DistHeldExtendedA =
    std::function<std::shared_ptr<dist::HeldExtendedA>(const dist::DistMatrix& a, DeviceOperatorSlot& device_a)>;

enum class CoarseFactor { at_setup, on_first_use };

struct DistSetupBackend {
  dist::LocalSpgemm products = dist::host_local_spgemm;
  DistGraphPhases graph_phases = host_graph_phases;
  DistEigenEstimator eigen_estimator = host_eigen_estimator;
  DistHeldExtendedA held_extended_a;  // empty: the products copy A on the host
  CoarseFactor host_coarse_factor = CoarseFactor::at_setup;
};

}  // namespace tessera::amg
