#include "amg/cycle.hpp"

#include <algorithm>

#include "local/core/error.hpp"

namespace tessera::amg {

AmgPreconditioner::AmgPreconditioner(const Hierarchy& h, LevelOps ops) : h_(h), ops_(std::move(ops)) {
  TESSERA_REQUIRE_INPUT(!h.levels.empty(), "AMG preconditioner: the hierarchy was never set up");
  v_.resize(h.levels.size());
  for (std::size_t l = 0; l < h.levels.size(); ++l) {
    const std::size_t n = static_cast<std::size_t>(h.levels[l].a.rows);
    v_[l].b.assign(n, 0.0);
    v_[l].x.assign(n, 0.0);
    v_[l].r.assign(n, 0.0);
    v_[l].correction.assign(n, 0.0);
  }
}

void AmgPreconditioner::apply(const Vector& r, Vector& z) {
  TESSERA_REQUIRE_INPUT(r.size() == v_[0].b.size(), "AMG preconditioner: vector has ", r.size(), " entries, A has ",
                        v_[0].b.size(), " rows");
  v_[0].b = r;
  std::fill(v_[0].x.begin(), v_[0].x.end(), 0.0);
  cycle(0, true);
  z = v_[0].x;
}

void AmgPreconditioner::cycle(std::size_t l, bool x_is_zero) {
  const Level& level = h_.levels[l];
  LevelVectors& v = v_[l];
  if (l + 1 == h_.levels.size()) {
    if (h_.coarse_direct) {
      h_.coarse.solve(v.b, v.x);
    } else {
      smooth(level.a, level.smoother, v.b, v.x, x_is_zero, v.work, ops_);
    }
    return;
  }
  smooth(level.a, level.smoother, v.b, v.x, x_is_zero, v.work, ops_);
  ops_.residual(level.a, v.x, v.b, v.r);
  LevelVectors& c = v_[l + 1];
  ops_.apply(level.r, v.r, c.b);
  std::fill(c.x.begin(), c.x.end(), 0.0);
  const bool into_coarsest = l + 2 == h_.levels.size();
  const int visits = h_.options.cycle == CycleKind::w && !into_coarsest ? 2 : 1;
  for (int visit = 0; visit < visits; ++visit) cycle(l + 1, visit == 0);
  ops_.apply(level.p, c.x, v.correction);
  for (std::size_t i = 0; i < v.x.size(); ++i) v.x[i] += v.correction[i];
  smooth(level.a, level.smoother, v.b, v.x, false, v.work, ops_);
}

}  // namespace tessera::amg
