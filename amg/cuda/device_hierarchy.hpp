#pragma once
// The smoothed-aggregation setup on one GPU with the hierarchy resident there: amg::setup
// (amg/hierarchy.cpp) level by level -- same stopping rules, same phases, same smoother
// construction -- with every phase on the device:
//   strength graph, aggregation, P_tent      (device_setup_phases.hpp)
//   1/a_ii, lambda_max(D^-1 A), smoother     (device_row_kernels.hpp, device_eigen_estimate.hpp)
//   P, R = P^T, A_c = R (A P)                (device_prolongator.hpp: tile, hash or cuSPARSE SpGEMM;
//                                             A_F for P: device_filtered_operator.hpp)
// The coarsest operator is factored on the device too (device_coarse_solver.hpp). Each
// phase is timed with a device synchronisation on both sides (SetupTimes as the host setup).
// device_resetup keeps aggregates, P_tent and every symbolic product and recomputes values.
// With AmgOptions::keep_setup_plans false the plans are freed as soon as each level is built
// (only the operators, P_tent, P, R, smoother data and the coarse factor stay) and the cuSPARSE
// and hash products run one-shot; device_resetup then runs the whole setup again on the new
// values.
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amg/cuda/device_coarse_solver.hpp"
#include "amg/cuda/device_filtered_operator.hpp"
#include "amg/cuda/device_prolongator.hpp"
#include "amg/hierarchy.hpp"
#include "amg/hierarchy_stats.hpp"
#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/offload_spgemm.hpp"

namespace tessera::amg::gpu {

struct DeviceLevel {
  tessera::cuda::DeviceCsr<double> a;
  tessera::cuda::DeviceBuffer<std::int64_t> node_ptr;  // num_nodes + 1 dof offsets
  tessera::cuda::DeviceBuffer<double> near_null;       // rows x k, row-major
  tessera::cuda::DeviceBuffer<double> inv_diag;        // 1 / a_ii
  tessera::cuda::DeviceBuffer<double> l1_inv_diag;     // 1 / d_l1 (l1-Jacobi only)
  EigenEstimate eigen;                                 // not computed on a directly solved coarsest level
  Smoother smoother;                                   // kind, interval, steps; its host inv_diag stays empty
  // Transfer to the next coarser level; empty on the coarsest.
  std::int64_t aggregates = 0;
  tessera::cuda::DeviceCsr<double> p_tent, p, r;
  double omega = 0;
  // A_F of the prolongator smoothing (AmgOptions::filtered_smoothing, where the strength graph
  // dropped entries); kept for re-setup with the plan.
  std::optional<DeviceFilteredOperator> filtered;
  std::unique_ptr<DeviceTransferPlan> plan;  // symbolic products kept for re-setup (null without keep_setup_plans)
  ProductEngines engines;                     // what each product ran on (kept when the plan is freed)
  SetupTimes times;

  std::int64_t num_nodes() const { return node_ptr.size() ? std::int64_t(node_ptr.size()) - 1 : 0; }
  /// The smoother's diagonal on the device (1/a_ii for Chebyshev, 1/d_l1 for l1-Jacobi).
  const double* smoother_inv_diag() const {
    return smoother.kind == SmootherKind::l1_jacobi ? l1_inv_diag.data() : inv_diag.data();
  }
};

struct DeviceHierarchy {
  AmgOptions options;
  tessera::cuda::OffloadSpgemm spgemm = tessera::cuda::OffloadSpgemm::automatic;
  cudaStream_t stream = nullptr;
  int near_null_k = 1;
  std::vector<DeviceLevel> levels;
  DeviceCoarseSolver coarse;   // factor of the coarsest operator, when solved directly
  bool coarse_direct = false;  // false: the coarsest level is smoothed, not solved
  std::string stop_reason;
  /// Set by device_resetup when the hierarchy kept no plans and the re-setup was a full setup
  /// (its phase times then include strength, aggregation and P_tent).
  bool resetup_was_full_setup = false;

  const DeviceLevel& coarsest() const { return levels.back(); }
};

/// Builds the hierarchy of `a` (device) on the device. InputError as amg::setup: a bad
/// operator (not square, a non-positive or non-finite diagonal: the row is named), bad options,
/// a near-null space of the wrong size.
DeviceHierarchy device_setup(const tessera::cuda::DeviceCsr<double>& a, const NearNullSpace& near_null,
                             const AmgOptions& options = {},
                             tessera::cuda::OffloadSpgemm spgemm = tessera::cuda::OffloadSpgemm::automatic,
                             cudaStream_t stream = nullptr);

/// New values of A (device, `values` of level 0's nnz entries in its pattern's order): keeps the
/// aggregates, P_tent and every pattern and symbolic product; recomputes diagonals, eigenvalue
/// estimates, smoothers, P's values, R, the Galerkin operators and the coarse factor.
/// A hierarchy set up without keep_setup_plans has no plans to reuse: it is set up again from
/// scratch on the new values (same result as device_setup; resetup_was_full_setup is set).
void device_resetup(DeviceHierarchy& h, const double* values);

/// Per-level figures and phase times, as statistics(const Hierarchy&).
HierarchyStats statistics(const DeviceHierarchy& h);

/// Per level with a transfer (all but the coarsest): "A*P_tent: tile, A*P: tile, R*AP: cusparse".
std::vector<std::string> product_engines(const DeviceHierarchy& h);

/// Device bytes held by the hierarchy's matrices and vectors, the kept plans and the coarse factor.
std::int64_t device_bytes(const DeviceHierarchy& h);

}  // namespace tessera::amg::gpu
