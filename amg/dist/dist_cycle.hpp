#pragma once
// The AMG cycle on a DistHierarchy: the serial cycle (amg/cycle.hpp) with every product a
// dist::spmv (halo exchange overlapping the local block) -- smoothing and residuals through
// the serial smooth() on a LevelOps bound to the level's operator, restriction by R = P^T,
// prolongation by P -- and the redundant direct solve on the coarsest level. Vectors are
// allocated once; a cycle must be rebuilt after the hierarchy is re-set up only if levels
// were added or removed (re-setup keeps them, so it is not).
#include <vector>

#include "amg/dist/dist_hierarchy.hpp"
#include "dist/dist_vector.hpp"

namespace tessera::amg {

class DistCycle {
 public:
  /// Keeps references to `comm` and `h`, which must outlive the cycle.
  DistCycle(const dist::Communicator& comm, const DistHierarchy& h);

  /// z = M^-1 r on the owned entries. Collective.
  void apply(const Vector& r, Vector& z);

 private:
  struct LevelVectors {
    Vector b, x, r, correction;
    SmootherWork work;
    dist::DistVector product_input;  // owned copy + ghosts for the transfer products
  };
  void cycle(std::size_t level, bool x_is_zero);

  const dist::Communicator& comm_;
  const DistHierarchy& h_;
  std::vector<LevelOps> ops_;
  std::vector<LevelVectors> v_;
};

}  // namespace tessera::amg
