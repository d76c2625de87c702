#pragma once
// The AMG behind PCTESSERA: tessera::amg::DistAmg over the operator's ranks. Builds of
// tessera_amg that do not carry the distributed AMG yet (TESSERA_PETSC_HAVE_DIST_AMG unset)
// run the serial hierarchy on one rank -- the algorithm DistAmg reproduces exactly on one
// rank -- and refuse more ranks with an InputError.
#include <memory>
#include <vector>

#include "amg/hierarchy_stats.hpp"
#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"

namespace tessera::petsc {

class AmgInstance {
 public:
  /// Collective setup on `a` (comm must outlive the instance).
  AmgInstance(const dist::Communicator& comm, const dist::DistMatrix& a, const amg::NearNullSpace& near_null,
              const amg::AmgOptions& options);
  ~AmgInstance();
  /// Collective: same pattern, new values (numeric phases only).
  void resetup(const dist::DistMatrix& a);
  /// Collective: z = one cycle on r (owned entries).
  void apply(const std::vector<double>& r, std::vector<double>& z);
  /// Collective.
  amg::HierarchyStats statistics() const;
  /// "distributed" or "serial (1 rank)".
  const char* kind() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::petsc
