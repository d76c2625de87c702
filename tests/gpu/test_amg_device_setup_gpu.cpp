// The device-resident AMG setup (amg/cuda/device_hierarchy.hpp) against the host amg::setup,
// level by level: the same level count and stopping reason, equal patterns of A, P_tent, P and
// R, values to ~1e-12 of the largest entry, close eigenvalue estimates and damping; the same
// PCG iteration count (+-1) with DeviceAmgPreconditioner built from each hierarchy; device
// re-setup with new values against host resetup (filtered smoothing's A_F included); the same
// without kept plans (AmgOptions::keep_setup_plans false: less device memory, re-setup = full
// setup); bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "amg/cuda/device_cycle.hpp"
#include "amg/cuda/device_hierarchy.hpp"
#include "amg/cuda/device_pcg.hpp"
#include "amg/cuda/device_row_kernels.hpp"
#include "amg/hierarchy.hpp"
#include "amg/krylov.hpp"
#include "amg/separate_kinds.hpp"
#include "local/core/error.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/spmv_plan.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "support/matrix_files.hpp"
#include "support/random_matrix.hpp"
#include "gpu/amg_test_problems.hpp"

namespace tessera::amg {
namespace {

using tessera::cuda::OffloadSpgemm;

using testing_problems::generated;
using testing_problems::Problem;
using testing_problems::with_constant_space;

/// Odd sizes (3375, 375 with 6 rigid-body modes, 722 with 3, 729, 27 rows; a frame's 750, nodes
/// of 6 dofs), a real SPD matrix, a random and a power-law SPD matrix on fresh seeds, and the
/// l1-Jacobi / unsmoothed / smoothed-coarsest variants of the options.
std::vector<Problem> problems() {
  std::vector<Problem> out = {generated("poisson3d:15", 40), generated("elasticity3d:5", 30),
                              generated("elasticity2d:19", 30), generated("poisson3d27:9", 20),
                              generated("poisson3d:3", 4),      generated("frame3d:5", 30)};
  Problem jacobi = generated("poisson3d:11", 30);
  jacobi.name += " l1-jacobi, coarsest smoothed";
  jacobi.options.smoother = SmootherKind::l1_jacobi;
  jacobi.options.max_dense_rows = 1;
  out.push_back(jacobi);
  Problem plain = generated("poisson3d27:8", 20);
  plain.name += " unsmoothed P";
  plain.options.smooth_prolongator = false;
  out.push_back(plain);
  // Filtered prolongator smoothing: scalar nodes (a frame's kinds of dof separated) and nodes of
  // 3 dofs with 6 vectors (elasticity at a threshold that drops couplings).
  Problem frame = generated("frame3d:6:30", 30);
  frame.name += " kinds separated, filtered smoothing";
  frame.a = without_cross_kind_couplings(frame.a, 6);
  frame.nns = constant_near_null_space(frame.a.rows, 1);
  frame.options.filtered_smoothing = true;
  out.push_back(frame);
  Problem blocks = generated("elasticity3d:5", 30);
  blocks.name += " threshold 0.2, filtered smoothing";
  blocks.options.strength_threshold = 0.2;
  blocks.options.filtered_smoothing = true;
  out.push_back(blocks);
  // Coarse size 40 keeps three levels on both random matrices (host setup, 40 seeds each): the
  // power law's 1024 rows (hubs of ~350 entries) give a dense level of 77-101 rows that coarsens
  // again to 1-7; the random one's 1001 rows (~8 entries a row) ~100 rows, then ~5. So the hubs'
  // dense Galerkin operator goes through the products and the smoother setup too, not only the
  // dense solve; both need ~9 PCG iterations.
  out.push_back(testing_problems::power_law(testing::fresh_seed(), 40));
  const std::uint64_t seed = testing::fresh_seed();
  const Csr<double> pattern = testing::random_csr({1001, 1001, 0.004, 0.1}, seed);
  out.push_back(with_constant_space("random SPD n=1001 seed=" + std::to_string(seed),
                                    testing::diagonally_dominant_spd(pattern), 40));
  for (const testing::MatrixFile& f : testing::manifest())
    if (f.name == "bcsstk21" || f.name == "bcsstk06")
      out.push_back(with_constant_space(f.name, io::read_matrix_market(f.path), 40));
  return out;
}

template <class Allocator>
double max_abs(const std::vector<double, Allocator>& v) {
  double m = 0;
  for (const double x : v) m = std::max(m, std::abs(x));
  return m;
}

void expect_same_matrix(const tessera::cuda::DeviceCsr<double>& device, const Csr<double>& host, double rtol,
                        const std::string& what) {
  SCOPED_TRACE(what);
  const Csr<double> d = tessera::cuda::download(device);
  ASSERT_EQ(d.rows, host.rows);
  ASSERT_EQ(d.cols, host.cols);
  ASSERT_EQ(device.nnz, host.nnz());
  ASSERT_EQ(d.row_ptr, host.row_ptr);
  ASSERT_EQ(d.col_idx, host.col_idx);
  const double bound = rtol * max_abs(host.values);
  for (std::size_t k = 0; k < host.values.size(); ++k)
    ASSERT_LE(std::abs(d.values[k] - host.values[k]), bound) << "entry " << k;
}

void expect_close(double device, double host, double rtol, const char* what) {
  EXPECT_LE(std::abs(device - host), rtol * std::abs(host)) << what << ": device " << device << ", host " << host;
}

void expect_same_hierarchy(const gpu::DeviceHierarchy& device, const Hierarchy& host) {
  ASSERT_EQ(device.levels.size(), host.levels.size()) << "host stopped: " << host.stop_reason;
  EXPECT_EQ(device.stop_reason, host.stop_reason);
  EXPECT_EQ(device.coarse_direct, host.coarse_direct);
  for (std::size_t l = 0; l < host.levels.size(); ++l) {
    const std::string level = "level " + std::to_string(l);
    SCOPED_TRACE(level);
    const gpu::DeviceLevel& d = device.levels[l];
    const Level& h = host.levels[l];
    expect_same_matrix(d.a, h.a, 1e-12, "A");
    const bool smoothed = l + 1 < host.levels.size() || !host.coarse_direct;
    if (smoothed) {  // Lanczos with another summation order: close, not equal
      expect_close(d.eigen.ritz, h.eigen.ritz, 1e-8, "Ritz value");
      expect_close(d.eigen.gershgorin, h.eigen.gershgorin, 1e-12, "Gershgorin bound");
      // Once the Krylov space is exhausted (a level of at most `steps` rows), the next residual
      // norm is rounding noise against the 1e-12 breakdown test: either side may take one step
      // more. Above that, the step counts must agree.
      if (h.a.rows > host.options.eigen_iterations)
        EXPECT_EQ(d.eigen.steps, h.eigen.steps);
      else
        EXPECT_NEAR(d.eigen.steps, h.eigen.steps, 1);
      expect_close(d.smoother.upper, h.smoother.upper, 1e-8, "Chebyshev upper");
      expect_close(d.smoother.lower, h.smoother.lower, 1e-8, "Chebyshev lower");
      EXPECT_EQ(d.smoother.steps, h.smoother.steps);
      const std::vector<double> diag = (d.smoother.kind == SmootherKind::l1_jacobi ? d.l1_inv_diag : d.inv_diag).download();
      ASSERT_EQ(diag.size(), h.smoother.inv_diag.size());
      for (std::size_t i = 0; i < diag.size(); ++i)
        ASSERT_LE(std::abs(diag[i] - h.smoother.inv_diag[i]), 1e-13 * std::abs(h.smoother.inv_diag[i])) << "row " << i;
    }
    if (l + 1 == host.levels.size()) break;
    EXPECT_EQ(d.aggregates, h.aggregates.count);
    if (device.options.keep_setup_plans)
      ASSERT_EQ(d.filtered.has_value(), h.filtered.has_value());
    else
      EXPECT_FALSE(d.filtered.has_value());  // freed with the plans: a re-setup filters again
    if (d.filtered) expect_same_matrix(d.filtered->a, h.filtered->a, 1e-12, "A_F");
    expect_same_matrix(d.p_tent, h.p_tent, 1e-13, "P_tent");
    expect_close(d.omega, h.omega, 1e-8, "omega");
    // omega differs from the host's by the Ritz rounding, which P's values inherit.
    expect_same_matrix(d.p, h.p, 1e-9, "P");
    expect_same_matrix(d.r, h.r, 1e-9, "R");
  }
}

/// PCG iterations to 1e-8 with a device preconditioner built from `m` (`history`: the residual
/// of every iteration recorded).
SolveResult device_solve(const Csr<double>& a, gpu::DeviceAmgPreconditioner& m, bool history = false) {
  const tessera::cuda::DeviceCsr<double> da = tessera::cuda::upload(a);
  const tessera::cuda::SpmvPlan plan = tessera::cuda::make_spmv_plan(da);
  tessera::cuda::DeviceBuffer<double> db, dx(std::size_t(a.rows));
  db.upload(std::vector<double>(std::size_t(a.rows), 1.0));
  dx.fill_bytes(0);
  KrylovOptions ko;
  ko.rtol = 1e-8;
  ko.max_iterations = 500;
  ko.history = history;
  return gpu::device_pcg(da, plan, db.data(), dx.data(), [&](const double* r, double* z) { m.apply(r, z); }, ko);
}

Csr<double> rescaled(const Csr<double>& a) {  // S A S: new values, same pattern, still SPD
  Csr<double> s = a;
  const auto f = [](std::int64_t i) { return 1.0 + 0.01 * double(i % 7); };
  for (std::int64_t i = 0; i < s.rows; ++i)
    for (std::int64_t k = s.row_ptr[i]; k < s.row_ptr[i + 1]; ++k) s.values[k] *= f(i) * f(s.col_idx[k]);
  return s;
}

/// NaN (0xff bytes) into every device value array that device_resetup with kept plans rewrites,
/// so that a value it forgets fails expect_same_hierarchy: each level's A (level 0's by the copy of
/// the new values, the others by the Galerkin product into them), R (gathered from P), P where
/// smoothed (unsmoothed, P is P_tent's copy, kept), A_F (refreshed from A), the plan's CSR products
/// A P_tent (smoothing only) and A P (cuSPARSE/hash only; empty on tiles), rewritten in place by
/// multiply_into. inv_diag and l1_inv_diag (where l1-Jacobi set one up) are recomputed into fresh
/// buffers today; poisoned too, so that an in-place rewrite must write them whole. P_tent, nodes
/// and near-null vectors are kept by the re-setup: left alone.
void poison_resetup_values(gpu::DeviceHierarchy& h) {
  const auto poison = [&](tessera::cuda::DeviceBuffer<double>& v) { v.fill_bytes(0xff, h.stream); };
  for (std::size_t l = 0; l < h.levels.size(); ++l) {
    gpu::DeviceLevel& level = h.levels[l];
    poison(level.a.values);
    poison(level.inv_diag);
    poison(level.l1_inv_diag);
    if (l + 1 == h.levels.size()) break;
    poison(level.r.values);
    if (h.options.smooth_prolongator) poison(level.p.values);
    if (level.filtered) poison(level.filtered->a.values);
    if (level.plan && h.options.smooth_prolongator) poison(level.plan->ap_tent.values);
    if (level.plan) poison(level.plan->ap.values);
  }
}

class AmgDeviceSetup : public ::testing::TestWithParam<OffloadSpgemm> {};

TEST_P(AmgDeviceSetup, MatchesHostSetupLevelByLevel) {
  for (const Problem& problem : problems()) {
    SCOPED_TRACE(problem.name + ", " + tessera::cuda::to_string(GetParam()));
    const Hierarchy host = setup(problem.a, problem.nns, problem.options);
    const tessera::cuda::DeviceCsr<double> da = tessera::cuda::upload(problem.a);
    const gpu::DeviceHierarchy device = gpu::device_setup(da, problem.nns, problem.options, GetParam());
    expect_same_hierarchy(device, host);
    if (problem.options.filtered_smoothing)  // else the case would not test the filter
      EXPECT_TRUE(std::any_of(host.levels.begin(), host.levels.end(), [](const Level& l) { return l.filtered; }));
    const HierarchyStats stats = statistics(device);
    ASSERT_EQ(stats.levels.size(), host.levels.size());
    EXPECT_GT(stats.times.total(), 0.0);
  }
}

TEST_P(AmgDeviceSetup, PcgIterationsMatchHostHierarchy) {
  for (const Problem& problem : problems()) {
    SCOPED_TRACE(problem.name);
    const Hierarchy host = setup(problem.a, problem.nns, problem.options);
    const gpu::DeviceHierarchy device =
        gpu::device_setup(tessera::cuda::upload(problem.a), problem.nns, problem.options, GetParam());
    gpu::DeviceAmgPreconditioner from_host(host), from_device(device);
    const SolveResult h = device_solve(problem.a, from_host), d = device_solve(problem.a, from_device);
    ASSERT_TRUE(h.converged()) << h.message;
    EXPECT_TRUE(d.converged()) << d.message;
    EXPECT_LE(std::abs(d.iterations - h.iterations), 1) << "host hierarchy " << h.iterations;
  }
}

TEST_P(AmgDeviceSetup, ResetupMatchesHostResetup) {
  for (const Problem& problem : problems()) {
    SCOPED_TRACE(problem.name);
    Hierarchy host = setup(problem.a, problem.nns, problem.options);
    gpu::DeviceHierarchy device =
        gpu::device_setup(tessera::cuda::upload(problem.a), problem.nns, problem.options, GetParam());
    const Csr<double> scaled = rescaled(problem.a);
    resetup(host, scaled);
    tessera::cuda::DeviceBuffer<double> values;
    values.upload(scaled.values);
    poison_resetup_values(device);
    gpu::device_resetup(device, values.data());
    expect_same_hierarchy(device, host);
    gpu::DeviceAmgPreconditioner m(device);
    EXPECT_TRUE(device_solve(scaled, m).converged());
  }
}

template <class T>
void expect_same_bits(const tessera::cuda::DeviceBuffer<T>& x, const tessera::cuda::DeviceBuffer<T>& y,
                      const char* what) {
  const std::vector<T> hx = x.download(), hy = y.download();
  ASSERT_EQ(hx.size(), hy.size()) << what;
  EXPECT_EQ(std::memcmp(hx.data(), hy.data(), hx.size() * sizeof(T)), 0) << what << " differs in some bits";
}

/// The same operator set up twice on the GPU gives the same bits on every level (A, P, R, the
/// smoother's diagonal and eigen estimates), and PCG the same residual history: no product and
/// no SpMV of the setup or the solve sums with atomics, power-law hubs included (the tile
/// SpGEMM's listed rows, the hash SpGEMM's ordered accumulation, the nnz-split SpMV).
TEST_P(AmgDeviceSetup, SetupAndSolveRepeatBitForBit) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<Problem> cases = {
      testing_problems::power_law(seed, 40),
      with_constant_space("power-law SPD rmat:14:4:seed=" + std::to_string(seed), testing::power_law_spd(14, 4, seed),
                          40),
      generated("elasticity3d:5", 30)};
  for (const Problem& problem : cases) {
    SCOPED_TRACE(problem.name + ", " + tessera::cuda::to_string(GetParam()));
    const tessera::cuda::DeviceCsr<double> da = tessera::cuda::upload(problem.a);
    const gpu::DeviceHierarchy first = gpu::device_setup(da, problem.nns, problem.options, GetParam());
    const gpu::DeviceHierarchy second = gpu::device_setup(da, problem.nns, problem.options, GetParam());
    ASSERT_EQ(first.levels.size(), second.levels.size());
    for (std::size_t l = 0; l < first.levels.size(); ++l) {
      SCOPED_TRACE("level " + std::to_string(l));
      const gpu::DeviceLevel &x = first.levels[l], &y = second.levels[l];
      expect_same_bits(x.a.values, y.a.values, "A");
      expect_same_bits(x.inv_diag, y.inv_diag, "1 / diag(A)");
      EXPECT_EQ(x.eigen.ritz, y.eigen.ritz);
      EXPECT_EQ(x.smoother.upper, y.smoother.upper);
      if (l + 1 == first.levels.size()) break;
      EXPECT_EQ(x.omega, y.omega);
      expect_same_bits(x.p.values, y.p.values, "P");
      expect_same_bits(x.r.values, y.r.values, "R");
    }
    gpu::DeviceAmgPreconditioner m_first(first), m_second(second);
    const SolveResult s1 = device_solve(problem.a, m_first, true), s2 = device_solve(problem.a, m_second, true);
    EXPECT_TRUE(s1.converged()) << s1.message;
    EXPECT_GE(first.levels.size(), 2u) << "one level: no product ran";
    EXPECT_EQ(s1.history, s2.history) << "the PCG residuals differ";
    EXPECT_EQ(s1.relative_residual, s2.relative_residual);
  }
}

// keep_setup_plans = false: the plans are freed level by level and cuSPARSE runs one-shot; the
// hierarchy is the host's as before, holds less device memory than with plans, and a re-setup
// is a full setup that matches the host resetup.
Problem without_plans(Problem p) {
  p.options.keep_setup_plans = false;
  return p;
}

TEST_P(AmgDeviceSetup, WithoutPlansMatchesHostSetupAndHoldsLess) {
  for (const Problem& with : problems()) {
    const Problem problem = without_plans(with);
    SCOPED_TRACE(problem.name + ", no plans, " + tessera::cuda::to_string(GetParam()));
    const Hierarchy host = setup(problem.a, problem.nns, problem.options);
    const tessera::cuda::DeviceCsr<double> da = tessera::cuda::upload(problem.a);
    const gpu::DeviceHierarchy lean = gpu::device_setup(da, problem.nns, problem.options, GetParam());
    expect_same_hierarchy(lean, host);
    for (const gpu::DeviceLevel& level : lean.levels) EXPECT_TRUE(level.plan == nullptr);
    const gpu::DeviceHierarchy planned = gpu::device_setup(da, with.nns, with.options, GetParam());
    if (lean.levels.size() > 1)  // a single level has no products, hence no plans
      EXPECT_LT(gpu::device_bytes(lean), gpu::device_bytes(planned));
    else
      EXPECT_LE(gpu::device_bytes(lean), gpu::device_bytes(planned));
  }
}

TEST_P(AmgDeviceSetup, WithoutPlansResetupIsAFullSetup) {
  for (const Problem& with : problems()) {
    const Problem problem = without_plans(with);
    SCOPED_TRACE(problem.name + ", no plans");
    gpu::DeviceHierarchy device =
        gpu::device_setup(tessera::cuda::upload(problem.a), problem.nns, problem.options, GetParam());
    EXPECT_FALSE(device.resetup_was_full_setup);
    const Csr<double> scaled = rescaled(problem.a);
    // A full setup recomputes strength and aggregates from the new values, so its reference is
    // the host setup of the new operator, not the host re-setup (which keeps the aggregates).
    const Hierarchy host = setup(scaled, problem.nns, problem.options);
    tessera::cuda::DeviceBuffer<double> values;
    values.upload(scaled.values);
    gpu::device_resetup(device, values.data());
    EXPECT_TRUE(device.resetup_was_full_setup);
    expect_same_hierarchy(device, host);
    if (device.levels.size() > 1)  // a full setup times the coarsening phases too
      EXPECT_GT(statistics(device).times.aggregation, 0.0);
    gpu::DeviceAmgPreconditioner m(device);
    EXPECT_TRUE(device_solve(scaled, m).converged());
    // The new values went through a fresh setup: it equals device_setup of the scaled operator.
    const gpu::DeviceHierarchy fresh =
        gpu::device_setup(tessera::cuda::upload(scaled), problem.nns, problem.options, GetParam());
    EXPECT_EQ(gpu::device_bytes(device), gpu::device_bytes(fresh));
  }
}

INSTANTIATE_TEST_SUITE_P(Spgemm, AmgDeviceSetup, ::testing::Values(OffloadSpgemm::tile, OffloadSpgemm::cusparse, OffloadSpgemm::hash),
                         [](const auto& info) { return std::string(tessera::cuda::to_string(info.param)); });

/// The fine level's nodes and constant near-null space, made on the device, equal the host's.
TEST(AmgDeviceSetupEdges, FineLevelInputsMadeOnTheDevice) {
  for (const std::int64_t rows : {0, 3, 9, 3001 * 3}) {
    for (const int bs : {1, 3}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", block size " + std::to_string(bs));
      EXPECT_EQ(gpu::device_uniform_nodes(rows, bs).download(), uniform_nodes(rows, bs));
      const NearNullSpace host = constant_near_null_space(rows, bs);
      EXPECT_TRUE(host.constant);
      EXPECT_EQ(gpu::device_constant_near_null_space(rows, bs).download(), host.vectors.data);
    }
  }
  EXPECT_THROW(gpu::device_uniform_nodes(10, 3), InputError);
  EXPECT_THROW(gpu::device_constant_near_null_space(10, 3), InputError);
  EXPECT_FALSE(rigid_body_modes(std::vector<double>(9 * 3, 0.5), 9, 3).constant);
}

/// An automatic hierarchy picks its engine on the finest level (the level rule) and every
/// coarser level runs the same one.
TEST(AmgDeviceSetupEdges, AutomaticEngineChosenOnceForTheHierarchy) {
  for (const char* spec : {"poisson3d:16", "elasticity3d:6"}) {
    SCOPED_TRACE(spec);
    const Problem p = generated(spec, 40);
    const gpu::DeviceHierarchy h =
        gpu::device_setup(tessera::cuda::upload(p.a), p.nns, p.options, OffloadSpgemm::automatic);
    const std::vector<std::string> engines = gpu::product_engines(h);
    ASSERT_GE(engines.size(), 2u);
    for (const std::string& e : engines) EXPECT_EQ(e, engines.front());
    const bool tile = engines.front().find("tile") != std::string::npos;
    EXPECT_EQ(tile, std::string(spec).rfind("elasticity", 0) == 0) << engines.front();
  }
}

TEST(AmgDeviceSetupEdges, TinyOperatorsAndBadInput) {
  // 1x1 and 0x0: a single, directly solved level, as on the host.
  const Csr<double> one = csr_from_triplets<double>(1, 1, {0}, {0}, {4.0});
  const gpu::DeviceHierarchy h1 = gpu::device_setup(tessera::cuda::upload(one), constant_near_null_space(1, 1));
  ASSERT_EQ(h1.levels.size(), 1u);
  EXPECT_TRUE(h1.coarse_direct);
  EXPECT_EQ(h1.stop_reason, setup(one, constant_near_null_space(1, 1)).stop_reason);
  const Csr<double> none = Csr<double>::empty(0, 0);
  const gpu::DeviceHierarchy h0 = gpu::device_setup(tessera::cuda::upload(none), constant_near_null_space(0, 1));
  EXPECT_EQ(h0.levels.size(), 1u);

  Problem p = generated("poisson3d:5", 10);
  Csr<double> negative = p.a;
  for (std::int64_t k = negative.row_ptr[7]; k < negative.row_ptr[8]; ++k)
    if (negative.col_idx[k] == 7) negative.values[k] = -1.0;
  try {
    gpu::device_setup(tessera::cuda::upload(negative), p.nns, p.options);
    ADD_FAILURE() << "a negative diagonal was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpu::device_setup(tessera::cuda::upload(p.a), constant_near_null_space(p.a.rows + 1, 1), p.options),
               InputError);
  NearNullSpace nan_vector = p.nns;  // the setup's own copy of the check the host setup makes
  nan_vector.constant = false;
  nan_vector.vectors.at(9, 0) = std::nan("");
  try {
    gpu::device_setup(tessera::cuda::upload(p.a), nan_vector, p.options);
    ADD_FAILURE() << "a NaN near-null value was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("near-null vector 0 has a non-finite value nan at row 9"), std::string::npos)
        << e.what();
  }
  const Csr<double> rect = csr_from_triplets<double>(2, 3, {0, 1}, {0, 1}, {1.0, 1.0});
  EXPECT_THROW(gpu::device_setup(tessera::cuda::upload(rect), constant_near_null_space(2, 1)), InputError);
}

}  // namespace
}  // namespace tessera::amg
