// Re-setup and bad input of the distributed AMG, 1-4 ranks: a re-setup with scaled values
// equals a fresh setup; products that read A from the backend's hold build the hierarchy the
// host copy of A builds, re-setup included; a host coarse factor deferred to its first use
// solves as the one made at setup; a changed pattern, a non-positive diagonal, an
// indefinite operator and a non-finite right-hand side are reported identically on every rank
// (no hang, no NaN).
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "dist_amg_test_util.hpp"
#include "local/core/error.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::amg {
namespace {

using testing::Problem;

struct Distributed {
  dist::RowPartition rows;
  dist::DistMatrix a;
  NearNullSpace near_null;
};

Distributed distribute(const dist::Communicator& comm, const Problem& pb, const Csr<double>& a, std::uint64_t seed) {
  Distributed d;
  d.rows = testing::aligned_partition(comm, a.rows, pb.near_null.block_size, true, seed);
  d.a = dist::testing::distribute(comm, a, d.rows, d.rows);
  d.near_null = testing::owned_rows(pb.near_null, d.rows.begin(comm.rank()), d.rows.end(comm.rank()));
  return d;
}

Csr<double> scaled(Csr<double> a, double s) {
  for (double& v : a.values) v *= s;
  return a;
}

/// A problem distributed on one partition with its own values (`first`) and scaled by `s`
/// (`second`, the same pattern), and options that give it several levels.
/// The partition is random, from a seed shared by the ranks (the tests trace it).
struct TwoValueSets {
  std::uint64_t seed;
  Problem pb;
  AmgOptions options;
  Distributed first, second;
};

TwoValueSets two_value_sets(const dist::Communicator& comm, const std::string& spec, double s) {
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  TwoValueSets t{seed, testing::make_problem(spec), {}, {}, {}};
  t.options.coarse_size = 40;
  t.first = distribute(comm, t.pb, t.pb.a, seed);
  t.second = distribute(comm, t.pb, scaled(t.pb.a, s), seed);
  return t;
}

/// What happened, as a string every rank can compare: the error text or the solve status.
std::string outcome(const std::function<std::string()>& run) {
  try {
    return run();
  } catch (const InputError& e) {
    return std::string("InputError: ") + e.what();
  }
}

void expect_same_on_every_rank(const dist::Communicator& comm, const std::string& text) {
  const std::string root = comm.broadcast(text, 0);
  EXPECT_EQ(text, root) << "rank " << comm.rank() << " disagrees with rank 0";
}

TEST(DistAmgResetup, ScaledValuesGiveTheFreshSetup) {
  const dist::Communicator comm;
  // A power of two scales exactly: the fresh setup then sees bit-identical strengths. (With
  // 3.75, elasticity's round-off couplings near the threshold may flip and the fresh setup
  // legitimately aggregates differently.)
  const TwoValueSets t = two_value_sets(comm, "elasticity3d:6", 4.0);
  SCOPED_TRACE("seed " + std::to_string(t.seed));
  const Distributed &first = t.first, &second = t.second;
  const AmgOptions& o = t.options;
  DistAmg reused(comm, first.a, first.near_null, o);
  const Vector ones(static_cast<std::size_t>(first.a.owned_rows()), 1.0);
  Vector z_before;
  reused.apply(ones, z_before);  // the cycle and its vectors exist before the re-setup, which keeps them
  reused.resetup(second.a);
  const DistAmg fresh(comm, second.a, second.near_null, o);
  const DistHierarchy &r = reused.hierarchy(), &f = fresh.hierarchy();
  ASSERT_EQ(r.levels.size(), f.levels.size());
  ASSERT_GE(r.levels.size(), 3u);
  for (std::size_t l = 0; l < r.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    const Csr<double> ra = dist::gather(comm, r.levels[l].a), fa = dist::gather(comm, f.levels[l].a);
    const bool last = l + 1 == r.levels.size();
    const Csr<double> rp = last ? Csr<double>{} : dist::gather(comm, r.levels[l].p);
    const Csr<double> fp = last ? Csr<double>{} : dist::gather(comm, f.levels[l].p);
    const Csr<double> rr = last ? Csr<double>{} : dist::gather(comm, r.levels[l].r);
    if (!last) {  // one [owned | ghost] copy of A a level, through the re-setup too
      ASSERT_TRUE(r.levels[l].a_times_p_tent && r.levels[l].galerkin);
      EXPECT_EQ(&r.levels[l].galerkin->ap_product().a_extended(), &r.levels[l].a_times_p_tent->a_extended());
    }
    if (comm.rank() != 0) continue;
    testing::expect_equal_to_rounding(ra, fa, "A");
    if (!last) testing::expect_equal_to_rounding(rp, fp, "P");
    if (!last) EXPECT_EQ(rr, ref::transpose(rp)) << "the re-setup's R is exactly its P^T";
  }
  // Its kept cycle applies the new levels: as the fresh one's, to rounding.
  Vector z_reused, z_fresh;
  reused.apply(ones, z_reused);
  fresh.apply(ones, z_fresh);
  ASSERT_EQ(z_reused.size(), z_fresh.size());
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < z_fresh.size(); ++i)
    worst = std::max(worst, std::fabs(z_reused[i] - z_fresh[i])), scale = std::max(scale, std::fabs(z_fresh[i]));
  worst = comm.allreduce(worst, dist::ReduceOp::max), scale = comm.allreduce(scale, dist::ReduceOp::max);
  EXPECT_GT(scale, 0);
  EXPECT_LE(worst, 1e-12 * scale) << "the re-set-up cycle's z differs from the fresh setup's";
  // And it solves like the fresh one.
  const Vector b(static_cast<std::size_t>(second.a.owned_rows()), 1.0);
  Vector x1(b.size(), 0.0), x2(b.size(), 0.0);
  const SolveResult s1 = dist_pcg(comm, second.a, b, x1, reused, {}), s2 = dist_pcg(comm, second.a, b, x2, fresh, {});
  EXPECT_TRUE(s1.converged()) << s1.message;
  EXPECT_LE(std::abs(s1.iterations - s2.iterations), 1);
}

/// Level by level, A, P and R gathered on rank 0, bitwise equal.
void expect_same_levels(const dist::Communicator& comm, const DistHierarchy& got, const DistHierarchy& want) {
  ASSERT_EQ(got.levels.size(), want.levels.size());
  for (std::size_t l = 0; l < got.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    const DistLevel &g = got.levels[l], &w = want.levels[l];
    const bool last = l + 1 == got.levels.size();
    for (auto [gm, wm, what] : {std::tuple{&g.a, &w.a, "A"}, {&g.p, &w.p, "P"}, {&g.r, &w.r, "R"}}) {
      if (last && gm != &g.a) continue;
      const Csr<double> gg = dist::gather(comm, *gm), wg = dist::gather(comm, *wm);
      if (comm.rank() == 0) EXPECT_EQ(gg, wg) << what;
    }
  }
}

// The first re-setup merges P's rows once more, recording where its values come from; later
// ones replay the record. Replayed values are the merge's bit for bit: a hierarchy re-set up twice (x0.5 then x4) equals one re-set up once to x4, level by
// level, with and without prolongator smoothing.
TEST(DistAmgResetup, LaterResetupsReplayTheFirstsRecords) {
  const dist::Communicator comm;
  for (const bool smooth : {true, false}) {
    SCOPED_TRACE(smooth ? "smoothed P" : "P = P_tent");
    TwoValueSets t = two_value_sets(comm, "poisson3d:10", 4.0);
    SCOPED_TRACE("seed " + std::to_string(t.seed));
    t.options.smooth_prolongator = smooth;
    const Distributed halved = distribute(comm, t.pb, scaled(t.pb.a, 0.5), t.seed);
    DistAmg twice(comm, t.first.a, t.first.near_null, t.options), once(comm, t.first.a, t.first.near_null, t.options);
    twice.resetup(halved.a);
    twice.resetup(t.second.a);
    once.resetup(t.second.a);
    const DistHierarchy& h = twice.hierarchy();
    ASSERT_GE(h.levels.size(), 3u);
    for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
      EXPECT_EQ(h.levels[l].p_sources.has_value(), smooth) << "level " << l;
    }
    expect_same_levels(comm, twice.hierarchy(), once.hierarchy());
    // And the values are those of a fresh setup on them (to rounding: the fresh setup's
    // lambda_max differs in the last bits).
    const DistAmg fresh(comm, t.second.a, t.second.near_null, t.options);
    for (std::size_t l = 0; l + 1 < h.levels.size(); ++l) {
      const Csr<double> rp = dist::gather(comm, h.levels[l].p), fp = dist::gather(comm, fresh.hierarchy().levels[l].p);
      if (comm.rank() == 0) testing::expect_equal_to_rounding(rp, fp, "P of level " + std::to_string(l));
    }
  }
}

/// P and P^T as a host stand-in for a backend's smoothing keeps them (the GPU's keeps them on
/// the device): copies made with P.
struct HostHeldP final : dist::HeldOperand {
  dist::DistMatrix p;
  Csr<double> p_transposed;
};

/// The chain's product as a host stand-in for the copy the GPU's hold keeps where it made it.
struct HostKeptProduct final : dist::HeldOperand {
  Csr<double> product;
};

/// A backend's hold on a level's A_ext, on the host: each product assembles A_ext from the
/// level's matrix as it is now (as the GPU backend's hold reads the level's device copy, kept
/// current by the re-setup) and counts itself; a chain with held operands assembles B_ext by the
/// host reference, from the held P's blocks (as the GPU's assembles it from P's device blocks),
/// and keeps a copy of its product (as the GPU's keeps it on the device).
class CountingHeldA final : public dist::HeldExtendedA {
 public:
  explicit CountingHeldA(const dist::DistMatrix& a) : a_(a) {}
  const dist::DistMatrix& source() const override { return a_; }
  Csr<double> times(const Csr<double>& b) override {
    ++times_calls;
    return dist::host_local_spgemm(dist::extended_block(a_), b);
  }
  dist::ChainedProduct chain(const Csr<double>& l, const Csr<double>& b) override {
    ++chain_calls;
    const Csr<double> ab = dist::host_local_spgemm(dist::extended_block(a_), b);
    return {dist::host_local_spgemm(l, ab), ab.nnz()};
  }
  dist::ChainedProduct chain(dist::HeldOperand& held, const dist::ExtendedBSource& source) override {
    ++held_chain_calls;
    auto& p = dynamic_cast<HostHeldP&>(held);
    EXPECT_EQ(p.p.local.values, source.b.local.values) << "the held P is not the product's";
    EXPECT_EQ(p.p.nonlocal.values, source.b.nonlocal.values) << "the held P is not the product's";
    const dist::ExtendedBSource from_held{p.p, source.remote, source.compact_to_global};
    const Csr<double> ab = dist::host_local_spgemm(dist::extended_block(a_), dist::compact_extended_rows(from_held));
    auto kept = std::make_shared<HostKeptProduct>();
    kept->product = dist::host_local_spgemm(p.p_transposed, ab);
    return {kept->product, ab.nnz(), kept};
  }
  int times_calls = 0, chain_calls = 0, held_chain_calls = 0;

 private:
  const dist::DistMatrix& a_;
};

// The products read A from what the backend holds (DistSetupBackend::held_extended_a): no host
// copy of A, one hold a level shared by A*P_tent and P^T A P, and the same hierarchy as the
// host copy's, bit for bit, after the setup and after a re-setup with other values. With
// `hold_p`, the smoothing also keeps P and P^T (SmoothedProlongator::held, as the GPU's does):
// the first P^T A P reads them through the hold's chain, and A*P's host B_ext waits for the
// re-setup, which makes it and then builds the same hierarchy. The outer product T the held chain
// kept reaches each coarse level's slot (as C's local block where C is T: every level on one rank;
// with its columns and the rows that receive elsewhere), and is dropped at the end of the setup, as
// no phase of this backend takes it; no level keeps near-null vectors after the setup (the
// re-setup does not read them).
// With `hold_p_tent` too, the tentative prolongator keeps P_tent (DistTentative::held_p, as the
// GPU's keeps its blocks on the device), and the smoothing forms A*P_tent through multiply_with
// from B_ext assembled out of that copy (as the GPU's assembles it there): no host B_ext is
// built for it before the re-setup, which makes it and builds the same hierarchy.
void check_products_read_the_hold(bool hold_p, bool hold_p_tent = false) {
  const dist::Communicator comm;
  const TwoValueSets t = two_value_sets(comm, "poisson3d:10", 0.75);
  SCOPED_TRACE("seed " + std::to_string(t.seed));
  const Distributed &first = t.first, &second = t.second;
  const AmgOptions& o = t.options;
  std::vector<std::shared_ptr<CountingHeldA>> holds;
  DistSetupBackend backend;
  backend.held_extended_a = [&](const dist::DistMatrix& a, DeviceOperatorSlot&) {
    holds.push_back(std::make_shared<CountingHeldA>(a));
    return holds.back();
  };
  if (hold_p_tent)
    backend.tentative = [](const dist::Communicator& c, const DistAggregates& agg, const DistNodes& fine,
                           const dist::DistMatrix& a, const DenseMatrix& b) {
      DistTentative t = dist_tentative_prolongator(c, agg, fine, a, b);
      auto held = std::make_shared<HostHeldP>();
      held->p = t.p;
      t.held_p = std::move(held);
      return t;
    };
  int held_p_tent_products = 0;
  // A P_tent from the held copy of P_tent, merged on the host.
  const auto smoothed_from_held_p_tent = [&](const dist::Communicator& c, dist::CompactSpgemm& a_times_p_tent,
                                             const dist::DistMatrix& p_tent, const Vector& inv_diag, double omega) {
    Csr<double> ap;
    a_times_p_tent.multiply_with(c, "A*P_tent from the held P_tent", [&](const dist::CompactSpgemm::Operands& o) {
      const auto* held = dynamic_cast<const HostHeldP*>(o.b_held);
      EXPECT_EQ(o.b, nullptr) << "B_ext was built on the host although P_tent is held";
      if (!held || !o.b_source || !o.a_held) throw InputError("the product got no held P_tent or no held A");
      EXPECT_EQ(held->p.local.values, p_tent.local.values) << "the held P_tent is not the product's";
      ++held_p_tent_products;
      ap = o.a_held->times(dist::compact_extended_rows({held->p, o.b_source->remote, o.b_source->compact_to_global}));
      return ap.nnz();
    });
    SmoothedProlongator s;
    s.p = smoothed_blocks(c, p_tent, ap, a_times_p_tent.compact_to_global(), inv_diag, omega);
    return s;
  };
  if (hold_p || hold_p_tent)
    backend.smoothing = [&, hold_p, hold_p_tent](const dist::Communicator& c, dist::CompactSpgemm& a_times_p_tent,
                                                 const dist::DistMatrix& p_tent, const Vector& inv_diag,
                                                 double omega) {
      SmoothedProlongator s = hold_p_tent ? smoothed_from_held_p_tent(c, a_times_p_tent, p_tent, inv_diag, omega)
                                          : dist_smoothed_prolongator(c, a_times_p_tent, p_tent, inv_diag, omega);
      if (!hold_p) return s;
      auto held = std::make_shared<HostHeldP>();
      held->p = s.p;
      held->p_transposed = ref::transpose(dist::extended_block(s.p));
      s.p_transposed = held->p_transposed;
      s.held = std::move(held);
      return s;
    };
  int kept = 0, kept_as_c = 0;  // coarse operators checked with the product's T in their slot
  backend.check_operator = [&](const dist::Communicator& c, const dist::DistMatrix& a, const std::string& what,
                               DeviceOperatorSlot& slot) {
    if (slot.outer_product) {
      ++kept;
      const Csr<double>& t = dynamic_cast<HostKeptProduct&>(*slot.outer_product->t).product;
      EXPECT_GE(t.rows, a.local.rows) << what;
      if (slot.outer_product->t_is_c) {
        ++kept_as_c;
        Csr<double> block = t;
        EXPECT_EQ(block.row_ptr[static_cast<std::size_t>(a.local.rows)], block.nnz()) << what;
        block.row_ptr.resize(static_cast<std::size_t>(a.local.rows + 1));
        block.rows = a.local.rows;
        block.cols = a.local.cols;
        EXPECT_EQ(block, a.local) << what << ": the kept product is not C's local block";
        EXPECT_EQ(a.nonlocal.nnz(), 0) << what;
      } else {
        EXPECT_EQ(static_cast<std::int64_t>(slot.outer_product->global_of.size()), t.cols) << what;
        EXPECT_TRUE(std::is_sorted(slot.outer_product->merged_rows.begin(), slot.outer_product->merged_rows.end()));
      }
    }
    host_operator_check(c, a, what, slot);
  };
  DistAmg held(comm, first.a, first.near_null, o, backend);
  DistAmg copied(comm, first.a, first.near_null, o);
  int own_partial_levels = 0;
  for (const DistLevel& level : held.hierarchy().levels) {
    EXPECT_EQ(level.device_a.outer_product, nullptr) << "a product's T left after the setup";
    EXPECT_TRUE(level.near_null.data.empty()) << "near-null vectors kept after their coarsening read them";
    own_partial_levels += level.galerkin && level.galerkin->result_is_own_partial();
  }
  const int coarse_levels = static_cast<int>(held.hierarchy().levels.size()) - 1;
  EXPECT_EQ(kept, hold_p ? coarse_levels : 0) << "each coarse level's T, where the hold read the held P";
  EXPECT_EQ(kept_as_c, hold_p ? own_partial_levels : 0);
  if (hold_p && comm.size() == 1) EXPECT_EQ(kept_as_c, coarse_levels) << "one rank: every C is T";
  const auto expect_same = [&](const char* when) {
    SCOPED_TRACE(when);
    const DistHierarchy &h = held.hierarchy(), &c = copied.hierarchy();
    ASSERT_EQ(h.levels.size(), c.levels.size());
    ASSERT_GE(h.levels.size(), 3u) << "the test wants a real hierarchy";
    ASSERT_EQ(holds.size(), h.levels.size() - 1) << "one hold a level with a transfer";
    for (std::size_t l = 0; l < h.levels.size(); ++l) {
      SCOPED_TRACE("level " + std::to_string(l));
      EXPECT_EQ(h.levels[l].a.local.values, c.levels[l].a.local.values);
      EXPECT_EQ(h.levels[l].a.nonlocal.values, c.levels[l].a.nonlocal.values);
      EXPECT_EQ(h.levels[l].a.ghost_cols, c.levels[l].a.ghost_cols);
      if (l + 1 == h.levels.size()) continue;
      EXPECT_EQ(h.levels[l].p.local.values, c.levels[l].p.local.values);
      EXPECT_EQ(h.levels[l].p.nonlocal.values, c.levels[l].p.nonlocal.values);
      const dist::ExtendedA shared = h.levels[l].a_times_p_tent->shared_a_extended();
      EXPECT_EQ(shared.host, nullptr) << "A was copied on the host";
      EXPECT_EQ(shared.held, holds[l]);
      EXPECT_EQ(&holds[l]->source(), &h.levels[l].a);
    }
  };
  expect_same("setup");
  for (const auto& hold : holds) {
    EXPECT_EQ(hold->times_calls, 1) << "A*P_tent";
    EXPECT_EQ(hold->chain_calls, hold_p ? 0 : 1) << "A*P inside P^T A P, from host operands";
    EXPECT_EQ(hold->held_chain_calls, hold_p ? 1 : 0) << "A*P inside P^T A P, from the held P and P^T";
  }
  for (std::size_t l = 0; hold_p && l + 1 < held.hierarchy().levels.size(); ++l)
    EXPECT_THROW(held.hierarchy().levels[l].galerkin->ap_product().b_extended(), Error)
        << "level " << l << ": A*P's host B_ext was made before any refresh";
  EXPECT_EQ(held_p_tent_products, hold_p_tent ? coarse_levels : 0) << "A*P_tent from the held P_tent";
  for (std::size_t l = 0; hold_p_tent && l + 1 < held.hierarchy().levels.size(); ++l)
    EXPECT_THROW(held.hierarchy().levels[l].a_times_p_tent->b_extended(), Error)
        << "level " << l << ": A*P_tent's host B_ext was made before any refresh";
  held.resetup(second.a);
  copied.resetup(second.a);
  expect_same("re-setup");
  for (const auto& hold : holds)
    EXPECT_EQ(hold->times_calls + hold->chain_calls + hold->held_chain_calls, 4) << "not run again";
}

TEST(DistAmgResetup, ProductsReadTheBackendsHoldOnA) { check_products_read_the_hold(false); }

TEST(DistAmgResetup, FirstGalerkinProductReadsTheBackendsHeldP) { check_products_read_the_hold(true); }

TEST(DistAmgResetup, FirstSmoothingProductReadsTheBackendsHeldPTent) { check_products_read_the_hold(true, true); }

// A backend that solves elsewhere (the GPUs) defers the host factor of the coarsest level to its
// first use: the setup leaves it unfactored, and the first host solve factors it and solves as
// the factor made at setup does, bit for bit, after a re-setup too.
TEST(DistAmgResetup, HostCoarseFactorOnFirstUseSolvesAsTheOneAtSetup) {
  const dist::Communicator comm;
  const TwoValueSets t = two_value_sets(comm, "poisson3d:10", 0.75);
  SCOPED_TRACE("seed " + std::to_string(t.seed));
  const Distributed &first = t.first, &second = t.second;
  const AmgOptions& o = t.options;
  DistSetupBackend deferring;
  deferring.host_coarse_factor = CoarseFactor::on_first_use;
  DistAmg deferred(comm, first.a, first.near_null, o, deferring);
  DistAmg at_setup(comm, first.a, first.near_null, o);
  const auto expect_same_solves = [&](const Distributed& d, const char* when) {
    SCOPED_TRACE(when);
    const DistHierarchy &h = deferred.hierarchy(), &e = at_setup.hierarchy();
    ASSERT_TRUE(h.coarse_direct) << "the test wants a factored coarsest level";
    ASSERT_GE(h.levels.size(), 3u);
    EXPECT_FALSE(h.coarse.factored());
    EXPECT_TRUE(e.coarse.factored());
    EXPECT_EQ(h.coarse.rows(), h.levels.back().a.global_rows());
    EXPECT_EQ(h.coarse_operator.values, e.coarse_operator.values);
    EXPECT_NE(deferred.statistics().coarse_method.find("host factor on first use"), std::string::npos)
        << deferred.statistics().coarse_method;
    EXPECT_FALSE(h.coarse.factored()) << "the statistics factored it";
    Vector b(static_cast<std::size_t>(d.a.owned_rows()));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(double(d.rows.begin(comm.rank()) + std::int64_t(i)));
    Vector x_deferred(b.size(), 0.0), x_at_setup(b.size(), 0.0);
    const SolveResult s1 = dist_pcg(comm, d.a, b, x_deferred, deferred, {});
    const SolveResult s2 = dist_pcg(comm, d.a, b, x_at_setup, at_setup, {});
    EXPECT_TRUE(s1.converged()) << s1.message;
    EXPECT_EQ(s1.iterations, s2.iterations);
    EXPECT_EQ(x_deferred, x_at_setup) << "the deferred factor is not the same factor";
    EXPECT_TRUE(h.coarse.factored()) << "the host solve ran without a factor";
    EXPECT_EQ(h.coarse.method(), e.coarse.method());
    EXPECT_EQ(deferred.statistics().coarse_method, at_setup.statistics().coarse_method);
  };
  expect_same_solves(first, "setup");
  deferred.resetup(second.a);
  at_setup.resetup(second.a);
  expect_same_solves(second, "re-setup");
}

TEST(DistAmgResetup, AnotherPatternIsRejectedOnEveryRank) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d:8");
  const Problem other = testing::make_problem("poisson3d27:8");
  const Distributed d = distribute(comm, pb, pb.a, seed), e = distribute(comm, pb, other.a, seed);
  DistAmg amg(comm, d.a, d.near_null, {});
  const std::string what = outcome([&] {
    amg.resetup(e.a);
    return std::string("accepted");
  });
  EXPECT_NE(what.find("pattern"), std::string::npos) << what;
  expect_same_on_every_rank(comm, what);
}

TEST(DistAmgBadInput, NegativeDiagonalOnOneRankIsReportedOnEveryRank) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d:9");
  Csr<double> a = pb.a;
  const std::int64_t bad_row = a.rows - 5;  // owned by the last rank owning rows
  for (std::int64_t p = a.row_ptr[bad_row]; p < a.row_ptr[bad_row + 1]; ++p)
    if (a.col_idx[p] == bad_row) a.values[p] = -2.0;
  const Distributed d = distribute(comm, pb, a, seed);
  const std::string what = outcome([&] {
    DistAmg amg(comm, d.a, d.near_null, {});
    return std::string("accepted");
  });
  EXPECT_NE(what.find("negative diagonal -2 at row " + std::to_string(bad_row)), std::string::npos) << what;
  expect_same_on_every_rank(comm, what);
}

TEST(DistAmgBadInput, IndefiniteOperatorIsReportedOnEveryRank) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d:10");
  Csr<double> a = pb.a;  // diagonal 6 -> 2: positive diagonal, eigenvalues down to 2 - 6 cos(pi/11) < 0
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      if (a.col_idx[p] == i) a.values[p] = 2.0;
  const Distributed d = distribute(comm, pb, a, seed);
  AmgOptions o;
  o.coarse_size = 50;
  const std::string what = outcome([&] {
    DistAmg amg(comm, d.a, d.near_null, o);
    Vector b(static_cast<std::size_t>(d.a.owned_rows()), 1.0), x(b.size(), 0.0);
    const SolveResult s = dist_pcg(comm, d.a, b, x, amg, {});
    return std::string(to_string(s.status)) + ": " + s.message;
  });
  EXPECT_EQ(what.find("converged"), std::string::npos) << what;
  EXPECT_EQ(what.find("nan"), std::string::npos) << what;
  expect_same_on_every_rank(comm, what);
}

TEST(DistAmgBadInput, NonFiniteRightHandSideOnOneRankIsReportedOnEveryRank) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d:8");
  const Distributed d = distribute(comm, pb, pb.a, seed);
  const DistAmg amg(comm, d.a, d.near_null, {});
  Vector b(static_cast<std::size_t>(d.a.owned_rows()), 1.0), x(b.size(), 0.0);
  const int victim = d.rows.owner(pb.a.rows - 1);
  if (comm.rank() == victim) b.back() = std::nan("");
  const std::string what = outcome([&] { return to_string(dist_pcg(comm, d.a, b, x, amg, {}).status); });
  EXPECT_NE(what.find("b has a non-finite value"), std::string::npos) << what;
  expect_same_on_every_rank(comm, what);
}

}  // namespace
}  // namespace tessera::amg
