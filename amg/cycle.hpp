#pragma once
// The AMG cycle as a preconditioner: z = M^-1 r is one V- or W-cycle from z = 0, with the
// same smoother before and after the coarse correction (so M is symmetric for PCG).
// Per level: pre-smooth, fused residual, restrict (R = P^T as an SpMV), recurse (twice for
// W except into the coarsest), prolongate and add, post-smooth. Vectors are allocated once.
#include <vector>

#include "amg/hierarchy.hpp"
#include "amg/level_ops.hpp"

namespace tessera::amg {

class AmgPreconditioner {
 public:
  /// Keeps a reference to `h`: it must outlive the preconditioner (re-setup in place is fine).
  explicit AmgPreconditioner(const Hierarchy& h, LevelOps ops = host_reference_ops());

  /// z = M^-1 r.
  void apply(const Vector& r, Vector& z);

 private:
  struct LevelVectors {
    Vector b, x, r, correction;
    SmootherWork work;
  };
  void cycle(std::size_t level, bool x_is_zero);

  const Hierarchy& h_;
  LevelOps ops_;
  std::vector<LevelVectors> v_;
};

}  // namespace tessera::amg
