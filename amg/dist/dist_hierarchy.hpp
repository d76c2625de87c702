#pragma once
// The distributed smoothed-aggregation hierarchy: the serial setup of amg/hierarchy.hpp phase
// by phase on dist::DistMatrix operators. Per level, while global rows > coarse_size:
//   strength (dist_strength) -> aggregates (dist_aggregation) -> P_tent, B_c (dist_tentative)
//   -> lambda_max (distributed Lanczos) -> smoother (the serial make_smoother on the rank's
//   rows) -> P = (I - omega D^-1 A) P_tent (CompactSpgemm A*P_tent + a row merge; with
//   AmgOptions::filtered_smoothing, A's filtered operator A_F and its own lambda_max in place of
//   A's: dist_filtered_operator.hpp) -> A_c = P^T A P
//   (DistPtap) -> R = P^T (dist::transpose, its local block taken from DistPtap's transpose of
//   P: P is transposed once a level; both are timed as the Galerkin phase).
// The CompactSpgemm (A*P_tent) and DistPtap objects are kept: resetup() runs their numeric
// phases only (refresh() + multiply(), recompute()). The first re-setup also records where
// P's values come from (dist_smoothing.hpp); later ones combine values from that record
// without merging P's rows again. A backend with a transfer on the device (the GPU backend with
// dist_device_transfer added, opt-in) plans each level's transfer in the first re-setup, and the
// later ones recompute P, A_c and R there, from the level's device copy of A, copying the values
// back into the levels (not with filtered smoothing, which that transfer does not refresh: the
// pair is refused).
// Where the rank-local products, the graph phases (strength, aggregation), the lambda_max
// estimates and the products' reads of A run is the DistSetupBackend's choice (the host by
// default; dist_setup_backend.hpp). On the GPUs, the graph phases leave the level's A on the
// device (DistLevel::device_a) for the eigenvalue estimate, the products and the device solve.
// Coarsest level: gathered onto EVERY rank (one allgatherv at setup) and factored redundantly
// by the dense solver (at setup, or on first use where a device solve factors its own copy);
// each cycle then allgathers the coarse rhs and every rank solves and keeps its own rows -- no
// broadcast of the solution. The host cycle keeps every other level distributed; the device
// solve replicates the levels below 4M nonzeros whole on every GPU
// (amg/cuda/replicated_levels.hpp), where their halo exchanges cost more than their work.
// Redistributing onto a subset of ranks (GAMG's -pc_gamg_process_eq_limit, hypre's
// agglomeration) is not done.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amg/coarse_solver.hpp"
#include "amg/dist/device_operator_slot.hpp"
#include "amg/dist/dist_filtered_operator.hpp"
#include "amg/dist/dist_setup_backend.hpp"
#include "amg/dist/dist_smoothing.hpp"
#include "amg/hierarchy.hpp"
#include "dist/compact_spgemm.hpp"
#include "dist/ptap.hpp"

namespace tessera::amg {

struct DistLevel {
  dist::DistMatrix a;
  // A's copy on the rank's GPU, made by the first device phase of the level (the GPU backend's
  // strength phase) and reused by the eigenvalue estimate, the products and the device solve;
  // empty on the host.
  DeviceOperatorSlot device_a;
  DistNodes nodes;
  DenseMatrix near_null;   // owned rows x k of a coarse level, until its coarsening reads them
                           // (level 0 reads the caller's): empty after the setup
  Vector inv_diag;         // 1 / a_ii of the owned rows while the level is set up (the smoother
                           // then takes it over: smoother.inv_diag is Chebyshev's)
  EigenEstimate eigen;
  Smoother smoother;       // owned rows' coefficients
  // Transfer to the next coarser level; empty on the coarsest.
  DistAggregates aggregates;
  dist::DistMatrix p_tent, p, r;
  // A_F, where AmgOptions::filtered_smoothing is set and the strength graph dropped entries of A
  // on some rank: the operand of P's smoothing (and of its lambda_max) in place of A. Its values
  // are refreshed from A at each setup of the level's transfer. Its device copy (the GPU backend:
  // the eigenvalue estimate's and the products' A_F) stays for the re-setups, as A's does, and is
  // destroyed first, as it points at it.
  std::optional<DistFilteredOperator> filtered;
  DeviceOperatorSlot device_filtered;
  // P's and R's copies on the rank's GPU where the GPU setup kept the blocks it made (the merge's
  // P, R's owned block from its P^T), for the device solve, which shares them instead of
  // uploading P and R; empty otherwise. Marked stale when a re-setup changes the host values.
  DeviceOperatorSlot device_p, device_r;
  // A*P_tent's symbolic phase, kept for resetup. Its product is merged into P straight from
  // compact columns (never assembled); its A in [owned | ghost] form (a host copy, or the one
  // the backend holds) serves galerkin too, unless it is A_F's. galerkin handed its result over
  // to the next level's A, which its recomputes write into.
  std::unique_ptr<dist::CompactSpgemm> a_times_p_tent;
  std::unique_ptr<dist::DistPtap> galerkin;
  // Made by the first re-setup, replayed by the later ones: where each value of P comes from
  // (P_tent and A P_tent, through the merge); 16 bytes of host memory an entry of P.
  std::optional<SmoothedValueMap> p_sources;
  double omega = 0;
  SetupTimes times;        // this rank's
  // The re-setup's transfer planned where the products run (DistSetupBackend::transfer_on_device),
  // by the first re-setup that could, and run by the later ones; empty on the host. Last, so it
  // is destroyed first: its device copies point at this level's matrices.
  std::shared_ptr<DistLevelTransfer> transfer_plan;
};

/// Collective: every rank's rows of `a` on every rank, rows in rank order, global columns (a
/// small level: the coarsest operator, the device solve's replicated levels).
Csr<double> allgather_operator(const dist::Communicator& comm, const dist::DistMatrix& a);

class DistHierarchy {
 public:
  AmgOptions options;
  // Reserved for options.max_levels at construction and never grown beyond: a level stays at
  // one address, which its device copy of A points at (device_operator_slot.hpp).
  std::vector<DistLevel> levels;
  // Every rank holds the factor of the coarsest operator (made at setup or on first use, as
  // the backend's host_coarse_factor says).
  DenseCoarseSolver coarse;
  /// The whole coarsest operator as gathered for `coarse` (rows in rank order, so rank r's rows
  /// start at levels.back().a.row_begin()): a device solver factors it without a second
  /// collective. Empty unless coarse_direct.
  Csr<double> coarse_operator;
  bool coarse_direct = false;
  std::string stop_reason;

  /// Collective; throws InputError on every rank for bad input. Level 0 holds a copy of `a`.
  DistHierarchy(const dist::Communicator& comm, const dist::DistMatrix& a, const NearNullSpace& near_null,
                const AmgOptions& options, DistSetupBackend backend = {});
  /// The same, level 0 taking `a` over (no copy).
  DistHierarchy(const dist::Communicator& comm, dist::DistMatrix&& a, const NearNullSpace& near_null,
                const AmgOptions& options, DistSetupBackend backend = {});
  void resetup(const dist::Communicator& comm, const dist::DistMatrix& a);

  /// The coarsest level's direct solve: owned rhs in, owned solution out. Collective.
  void coarse_solve(const dist::Communicator& comm, const Vector& b, Vector& x) const;

 private:
  /// The level's inverse diagonal and eigenvalue estimate (what its smoothing and smoother read).
  void setup_level_numeric(const dist::Communicator& comm, DistLevel& level) const;
  /// The level's smoother, once nothing else reads its inverse diagonal (which it takes over).
  void make_level_smoother(DistLevel& level) const;
  /// P, R and the Galerkin product into coarse.a: handed over by a level's first product, its
  /// values recomputed in place by a re-setup's. `held_p_tent`: P_tent's blocks where the
  /// tentative prolongator's backend left them (DistTentative::held_p), for the first A*P_tent.
  void build_transfer(const dist::Communicator& comm, DistLevel& level, DistLevel& coarse, bool first_time,
                      std::shared_ptr<dist::HeldOperand> held_p_tent = nullptr) const;
  /// The backend's check of level `l`'s operator (coarse.a), which may leave its copy in the slot.
  void check_coarse_operator(const dist::Communicator& comm, DistLevel& coarse, std::size_t l) const;
  /// Where a level's first products read `a` (the level's A or A_F) from: the backend's hold on
  /// its copy in `slot`, or nothing (they copy it on the host).
  dist::ExtendedA held_extended_a(const dist::DistMatrix& a, DeviceOperatorSlot& slot) const;
  /// The operator P's smoothing multiplies (A_F where the level has one, else A), its values
  /// current (A_F refreshed from A), and omega from its lambda_max. Collective.
  const dist::DistMatrix& smoothing_operator(const dist::Communicator& comm, DistLevel& level) const;
  void setup_coarsest(const dist::Communicator& comm);

  DistSetupBackend backend_;
  std::int64_t coarse_row_begin_ = 0;  // this rank's rows within the gathered coarsest operator
};

}  // namespace tessera::amg
