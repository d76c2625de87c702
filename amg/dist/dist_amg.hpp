#pragma once
// The distributed smoothed-aggregation AMG: the same phases as the serial reference
// (amg/hierarchy.hpp), on row-partitioned operators (dist::DistMatrix), one rank per GPU.
// Products go through dist::DistSpgemm / dist::DistPtap, smoothing through dist::spmv,
// reductions through the Communicator. On one rank it builds the serial hierarchy exactly.
#include <cstdio>
#include <memory>
#include <vector>

#include "amg/dist/dist_setup_backend.hpp"
#include "amg/hierarchy_stats.hpp"
#include "amg/krylov.hpp"
#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/spgemm.hpp"

namespace tessera::amg {

class DistHierarchy;  // levels, transfer operators, smoothers, coarse solver (dist_hierarchy.hpp)
class DistCycle;      // the V/W-cycle on a DistHierarchy (dist_cycle.hpp)

class DistAmg {
 public:
  /// Collective setup. `near_null` holds this rank's owned rows of the near-null space
  /// (owned_rows x k); InputError (on every rank) for a bad operator or options. `backend` says
  /// where the setup's products, graph phases, eigenvalue estimates and the products' reads of A
  /// run (dist_setup_backend.hpp: the host by default).
  DistAmg(const dist::Communicator& comm, const dist::DistMatrix& a, const NearNullSpace& near_null,
          const AmgOptions& options = {}, DistSetupBackend backend = {});
  /// The same, the hierarchy taking `a` over as its level 0 instead of copying it.
  DistAmg(const dist::Communicator& comm, dist::DistMatrix&& a, const NearNullSpace& near_null,
          const AmgOptions& options = {}, DistSetupBackend backend = {});
  ~DistAmg();
  DistAmg(DistAmg&&) noexcept;
  DistAmg& operator=(DistAmg&&) noexcept;

  /// Collective. Same pattern, new values: only numeric phases run (every symbolic product,
  /// the aggregates and P_tent are reused). InputError if the pattern changed.
  void resetup(const dist::DistMatrix& a);

  /// Level 0's operator as the hierarchy holds it (the one it took over, or its copy). A caller
  /// that keeps no copy of A refreshes its values here, pattern untouched, then calls
  /// resetup(fine_operator()); that re-setup checks the values, not the pattern, which is the
  /// caller's to keep.
  dist::DistMatrix& fine_operator();

  /// Hands level 0's operator back and frees everything else, leaving this object empty (only
  /// destruction or assignment may follow): a caller that sets up again from scratch on the same
  /// A takes it back instead of keeping a copy (tessera-amg's repeated setups). The setup only
  /// read it, so it is the matrix taken over (or copied) at construction.
  dist::DistMatrix release_fine_operator() &&;

  /// Collective. z = one cycle applied to r (owned entries of both).
  void apply(const std::vector<double>& r, std::vector<double>& z) const;

  /// Collective. Per-level rows/nnz (global), complexities, setup times (max over ranks).
  HierarchyStats statistics() const;

  /// Collective. Ranks owning rows of each level.
  std::vector<int> active_ranks() const;

  /// The levels, for tests and drivers (this rank's parts).
  const DistHierarchy& hierarchy() const { return *hierarchy_; }

 private:
  const dist::Communicator* comm_;
  std::unique_ptr<DistHierarchy> hierarchy_;
  std::unique_ptr<DistCycle> cycle_;
};

/// The serial level table (amg/hierarchy_stats.hpp) with a column of active ranks per level.
void print(std::FILE* out, const HierarchyStats& s, const std::vector<int>& active_ranks);

/// Collective PCG on the distributed operator with `m` (e.g. DistAmg::apply); b and x are the
/// owned entries; the final relative residual is recomputed from x.
SolveResult dist_pcg(const dist::Communicator& comm, const dist::DistMatrix& a, const std::vector<double>& b,
                     std::vector<double>& x, const DistAmg& m, const KrylovOptions& options);

/// Collective flexible GMRES (amg/fgmres.cpp) on the distributed operator with `m`: the
/// solver for non-symmetric A (options.restart vectors a cycle); the same contract as dist_pcg.
SolveResult dist_fgmres(const dist::Communicator& comm, const dist::DistMatrix& a, const std::vector<double>& b,
                        std::vector<double>& x, const DistAmg& m, const KrylovOptions& options);

}  // namespace tessera::amg
