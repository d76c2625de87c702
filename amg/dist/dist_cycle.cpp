#include "amg/dist/dist_cycle.hpp"

#include <algorithm>

#include "amg/dist/dist_level_ops.hpp"
#include "dist/spmv.hpp"
#include "local/core/error.hpp"

namespace tessera::amg {

DistCycle::DistCycle(const dist::Communicator& comm, const DistHierarchy& h) : comm_(comm), h_(h) {
  v_.resize(h.levels.size());
  for (std::size_t l = 0; l < h.levels.size(); ++l) {
    ops_.push_back(dist_level_ops(comm, h.levels[l].a));
    const std::size_t n = static_cast<std::size_t>(h.levels[l].a.owned_rows());
    v_[l].b.assign(n, 0.0);
    v_[l].x.assign(n, 0.0);
    v_[l].r.assign(n, 0.0);
    v_[l].correction.assign(n, 0.0);
  }
}

void DistCycle::apply(const Vector& r, Vector& z) {
  // A wrong size on one rank must not leave the others waiting in the first exchange.
  dist::throw_if_any_rank_failed(
      comm_, r.size() == v_[0].b.size()
                 ? ""
                 : tessera::detail::concat("AMG preconditioner: rank ", comm_.rank(), " passed ", r.size(),
                                  " entries for its ", v_[0].b.size(), " rows"));
  v_[0].b = r;
  std::fill(v_[0].x.begin(), v_[0].x.end(), 0.0);
  cycle(0, true);
  z = v_[0].x;
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
  v.product_input.owned = v.r;
  dist::spmv(comm_, level.r, v.product_input, c.b);  // restrict: R = P^T
  std::fill(c.x.begin(), c.x.end(), 0.0);
  const bool into_coarsest = l + 2 == h_.levels.size();
  const int visits = h_.options.cycle == CycleKind::w && !into_coarsest ? 2 : 1;
  for (int visit = 0; visit < visits; ++visit) cycle(l + 1, visit == 0);
  c.product_input.owned = c.x;
  dist::spmv(comm_, level.p, c.product_input, v.correction);  // prolongate
  for (std::size_t i = 0; i < v.x.size(); ++i) v.x[i] += v.correction[i];
  smooth(level.a.local, level.smoother, v.b, v.x, false, v.work, ops_[l]);
}

}  // namespace tessera::amg
