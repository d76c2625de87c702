#include "amg/dist/dist_cycle.hpp"

#include "amg/dist/dist_level_ops.hpp"
#include "dist/spmv.hpp"
#include "local/core/error.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {

DistCycle::DistCycle(const dist::Communicator& comm, const DistHierarchy& h) : comm_(comm), h_(h) {
  v_.resize(h.levels.size());
  for (std::size_t l = 0; l < h.levels.size(); ++l) ops_.push_back(dist_level_ops(comm, h.levels[l].a));
}

void DistCycle::size_vectors() {
  for (std::size_t l = 0; l < h_.levels.size(); ++l) {
    const std::size_t n = static_cast<std::size_t>(h_.levels[l].a.owned_rows());
    for (Vector* x : {&v_[l].b, &v_[l].x, &v_[l].r, &v_[l].correction}) x->resize(n);
  }
}

void DistCycle::apply(const Vector& r, Vector& z) {
  const auto rows = static_cast<std::size_t>(h_.levels[0].a.owned_rows());
  // A wrong size on one rank must not leave the others waiting in the first exchange.
  dist::throw_if_any_rank_failed(
      comm_, r.size() == rows ? ""
                              : tessera::detail::concat("AMG preconditioner: rank ", comm_.rank(), " passed ",
                                                        r.size(), " entries for its ", rows, " rows"));
  if (v_[0].b.size() != rows) size_vectors();
  host::copy(r, v_[0].b);
  host::fill(v_[0].x, 0.0);
  cycle(0, true);
  host::copy(v_[0].x, z);
}

void DistCycle::cycle(std::size_t l, bool x_is_zero) {
  const DistLevel& level = h_.levels[l];
  LevelVectors& v = v_[l];
  if (l + 1 == h_.levels.size()) {
    if (h_.coarse_direct) {
      h_.coarse_solve(comm_, v.b, v.x);
    } else {
      smooth(level.a.local, level.smoother, v.b, v.x, x_is_zero, v.work, ops_[l]);
    }
    return;
  }
  smooth(level.a.local, level.smoother, v.b, v.x, x_is_zero, v.work, ops_[l]);
  ops_[l].residual(level.a.local, v.x, v.b, v.r);
  LevelVectors& c = v_[l + 1];
  dist::spmv(comm_, level.r, v.r, v.ghosts, c.b);  // restrict: R = P^T
  host::fill(c.x, 0.0);
  const bool into_coarsest = l + 2 == h_.levels.size();
  const int visits = h_.options.cycle == CycleKind::w && !into_coarsest ? 2 : 1;
  for (int visit = 0; visit < visits; ++visit) cycle(l + 1, visit == 0);
  dist::spmv(comm_, level.p, c.x, c.ghosts, v.correction);  // prolongate
  host::for_entries(static_cast<std::int64_t>(v.x.size()), [&](std::int64_t i) { v.x[i] += v.correction[i]; });
  smooth(level.a.local, level.smoother, v.b, v.x, false, v.work, ops_[l]);
}

}  // namespace tessera::amg
