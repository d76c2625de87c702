#pragma once
// The AMG cycle on a DistHierarchy: the serial cycle (amg/cycle.hpp) with every product a
// dist::spmv (halo exchange overlapping the local block) -- smoothing and residuals through
// the serial smooth() on a LevelOps bound to the level's operator, restriction by R = P^T,
// prolongation by P -- and the redundant direct solve on the coarsest level. Vectors are
// allocated at the first apply, not at construction: the device solve builds a DistCycle it
// may never apply, and zero-filling four vectors a level there cost the setup 0.04 s at 7M
// rows. The entry-wise work runs on the rank's threads (host/entrywise.hpp). A cycle must be
// rebuilt after the hierarchy is re-set up only if levels were added or removed (re-setup
// keeps them, so it is not).
#include <vector>

#include "amg/dist/dist_hierarchy.hpp"

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
    Vector ghosts;  // halo buffer of the transfer products that read this level's r (R) or x (P)
  };
  void size_vectors();
  void cycle(std::size_t level, bool x_is_zero);

  const dist::Communicator& comm_;
  const DistHierarchy& h_;
  std::vector<LevelOps> ops_;
  std::vector<LevelVectors> v_;
};

}  // namespace tessera::amg
