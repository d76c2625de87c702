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
//   transfer_on_device
//                    a re-setup's level transfer where A lives (amg::gpu::dist_device_transfer):
//                    P's smoothing replayed, A_c = P^T A P and R = P^T recomputed on the GPUs
//                    and their values copied back into the level; empty, on the host
//   host_coarse_factor
//                    when the host factors the gathered coarsest operator (DistHierarchy::coarse):
//                    at setup, for the host cycle; or on its first use, where a device solve
//                    follows, which factors its own copy (cuSOLVER) and needs the host's only if
//                    the device refuses it
//   tentative        P_tent, the coarse near-null rows and nodes (dist_tentative.hpp); the GPU's
//                    factors the aggregates there and keeps P_tent's blocks there too, from which
//                    the smoothing's product assembles its B_ext (amg::gpu::device_tentative)
//   check_operator   the check of each level's operator (finite values, a positive diagonal):
//                    on the host's rows, or on the level's device copy, which the GPU's makes
//                    there (amg::gpu::device_operator_check)
//   inverse_diagonal each level's 1 / a_ii: from the host's rows, or divided on the level's device
//                    copy and downloaded (amg::gpu::device_inverse_diagonal_step)
//   smoothing        a level's first P = P_tent - omega D^-1 (A P_tent) (dist_smoothing.hpp): the
//                    product by `products` or the held A, merged on the host; the GPU's keeps A P_tent
//                    on the device, merges there and returns P^T too, which the Galerkin product
//                    then takes instead of transposing P on the host, and leaves P and P^T on the
//                    device for the Galerkin product's first products, which the held A reads
//                    there (amg::gpu::device_smoothing)
#include <functional>
#include <memory>

#include "amg/dist/device_operator_slot.hpp"
#include "amg/dist/dist_eigen_estimate.hpp"
#include "amg/dist/dist_graph_phases.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "amg/dist/dist_smoothing.hpp"
#include "amg/dist/dist_tentative.hpp"
#include "dist/compact_spgemm.hpp"
#include "dist/extended_operand.hpp"

namespace tessera::amg {

/// A level's A_ext held where its products run, read from the level's slot (made there if it is
/// empty). Not collective; called once a level, at its first setup.
using DistHeldExtendedA =
    std::function<std::shared_ptr<dist::HeldExtendedA>(const dist::DistMatrix& a, DeviceOperatorSlot& device_a)>;

/// Collective: a level's tentative prolongator, as dist_tentative_prolongator.
using DistTentativeBuilder = std::function<DistTentative(const dist::Communicator& comm, const DistAggregates& aggregates,
                                                         const DistNodes& fine, const dist::DistMatrix& a,
                                                         const DenseMatrix& b)>;

/// Collective: a level's smoothed prolongator at its first setup, as dist_smoothed_prolongator.
using DistSmoothing = std::function<SmoothedProlongator(const dist::Communicator& comm, dist::CompactSpgemm& a_times_p_tent,
                                                        const dist::DistMatrix& p_tent, const Vector& inv_diag,
                                                        double omega)>;

enum class CoarseFactor { at_setup, on_first_use };

struct DistLevel;  // amg/dist/dist_hierarchy.hpp

/// A level's re-setup transfer (fine's P and R, coarse's A) recomputed where the products run,
/// planned by DistTransferOnDevice and kept in fine.transfer_plan.
class DistLevelTransfer {
 public:
  virtual ~DistLevelTransfer() = default;
  /// Collective. Replaces the host's transfer in each re-setup after the one that planned it,
  /// with fine's inverse diagonal and eigenvalue estimate current, fine's A current in its device
  /// slot, and fine.omega set from the smoothing operator's lambda_max (fine's A_F, where it has
  /// one, refreshed from A on the host); leaves fine.p, fine.r and coarse.a (and coarse's slot)
  /// holding the new values.
  virtual void run(const dist::Communicator& comm, DistLevel& fine, DistLevel& coarse) = 0;
};

/// Collective: plans a level's transfer where the products run, once a level, after a re-setup
/// on the host left P's record (DistLevel::p_sources, when P is smoothed) and every pattern in
/// place. Empty: every re-setup's transfer on the host.
using DistTransferOnDevice = std::function<std::shared_ptr<DistLevelTransfer>(const dist::Communicator& comm,
                                                                             DistLevel& fine, DistLevel& coarse)>;

struct DistSetupBackend {
  dist::LocalSpgemm products = dist::host_local_spgemm;
  DistGraphPhases graph_phases = host_graph_phases;
  DistEigenEstimator eigen_estimator = host_eigen_estimator;
  DistHeldExtendedA held_extended_a;  // empty: the products copy A on the host
  DistTransferOnDevice transfer_on_device;  // empty: every re-setup's transfer on the host
  CoarseFactor host_coarse_factor = CoarseFactor::at_setup;
  // Last, so that callers' positional initializers of the fields above stay valid.
  DistTentativeBuilder tentative = dist_tentative_prolongator;
  DistSmoothing smoothing = dist_smoothed_prolongator;
  DistOperatorCheck check_operator = host_operator_check;
  DistInverseDiagonal inverse_diagonal = host_inverse_diagonal;
};

}  // namespace tessera::amg
