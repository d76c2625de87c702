// The distributed hierarchy against the serial one on the gathered problem, 1-4 ranks, on a
// balanced and an uneven partition with a rank owning no rows: same aggregates (a global map
// gathered on rank 0), same level sizes and patterns, operators, prolongators, filtered operators
// and smoother coefficients equal to rounding; PCG (FGMRES on the non-symmetric problem)
// iteration counts equal to serial (+-1).
#include "amg/cycle.hpp"
#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "amg/hierarchy.hpp"
#include "amg/separate_kinds.hpp"
#include "amg/smoother.hpp"
#include "dist/dist_matrix.hpp"
#include "dist_amg_test_util.hpp"
#include "local/reference/kernels.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg {
namespace {

using testing::Problem;

AmgOptions small_coarse(SmootherKind smoother = SmootherKind::chebyshev) {
  AmgOptions o;
  o.coarse_size = 40;  // several levels on these small problems
  o.smoother = smoother;
  return o;
}

/// Rank 0's comparison of one level gathered from the ranks with the serial level (apart from
/// expect_same_hierarchy's collective gathers, so that a failed ASSERT returns from here alone).
/// The smoother's 1 / a_ii: a_ii may differ by expect_equal_to_rounding's 1e-11 max|A|, so its
/// inverse by that times (1 / a_ii)^2 (on 1138_bus's level 1 the sums' order moved 1 / a_ii by
/// 1.1e-13 of itself).
void expect_same_level(const Level& s, const DistLevel& level, bool last, const Csr<double>& a, const Csr<double>& p,
                       const Csr<double>& r, const std::vector<std::int64_t>& aggregates,
                       const std::vector<double>& smoother) {
  testing::expect_equal_to_rounding(a, s.a, "A");
  if (last) return;
  EXPECT_EQ(aggregates, std::vector<std::int64_t>(s.aggregates.of_node.begin(), s.aggregates.of_node.end()));
  testing::expect_equal_to_rounding(p, s.p, "P");
  EXPECT_EQ(r, ref::transpose(p)) << "R is exactly P^T (its local block from the Galerkin product's P^T)";
  EXPECT_NEAR(level.eigen.safe, s.eigen.safe, 1e-12 * s.eigen.safe);
  ASSERT_EQ(smoother.size(), s.smoother.inv_diag.size());
  const double a_tolerance = 1e-11 * testing::max_abs(s.a);
  for (std::size_t i = 0; i < smoother.size(); ++i) {
    const double inv = std::fabs(s.smoother.inv_diag[i]);
    ASSERT_NEAR(smoother[i], s.smoother.inv_diag[i], std::max(1e-13 * inv, a_tolerance * inv * inv)) << "row " << i;
  }
}

void expect_same_hierarchy(const dist::Communicator& comm, const Hierarchy& serial, const DistHierarchy& d) {
  ASSERT_EQ(d.levels.size(), serial.levels.size());  // the same on every rank: a global count
  EXPECT_EQ(d.stop_reason, serial.stop_reason);
  for (std::size_t l = 0; l < serial.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    const Level& s = serial.levels[l];
    const DistLevel& level = d.levels[l];
    EXPECT_EQ(level.a.global_rows(), s.a.rows);
    const Csr<double> a = dist::gather(comm, level.a);
    const bool last = l + 1 == serial.levels.size();
    const Csr<double> p = last ? Csr<double>{} : dist::gather(comm, level.p);
    const Csr<double> r = last ? Csr<double>{} : dist::gather(comm, level.r);
    const std::vector<std::int64_t> aggregates = comm.gatherv(level.aggregates.of_node, 0);
    const std::vector<double> smoother = comm.gatherv(level.smoother.inv_diag, 0);
    // Filtered smoothing's A_F (where the level has one: the same answer on every rank).
    EXPECT_EQ(level.filtered.has_value(), s.filtered.has_value());
    const Csr<double> a_f = level.filtered && s.filtered ? dist::gather(comm, level.filtered->a) : Csr<double>{};
    if (comm.rank() == 0 && level.filtered && s.filtered) testing::expect_equal_to_rounding(a_f, s.filtered->a, "A_F");
    if (comm.rank() == 0) expect_same_level(s, level, last, a, p, r, aggregates, smoother);
  }
}

enum class Krylov { cg, fgmres };

/// PCG (or FGMRES) from 0 on b = A x* (x* random, shared): iterations of the serial and
/// distributed solves.
void expect_same_convergence(const dist::Communicator& comm, const Problem& pb, const Hierarchy& serial,
                             const DistAmg& amg, const dist::DistMatrix& a, std::uint64_t seed, Krylov krylov) {
  std::mt19937_64 rng(seed);
  Vector x_star(static_cast<std::size_t>(pb.a.rows)), b(x_star.size()), x(x_star.size(), 0.0);
  for (double& v : x_star) v = std::uniform_real_distribution<double>(-1, 1)(rng);
  ref::spmv(1.0, pb.a, x_star, 0.0, b);
  AmgPreconditioner m(serial);
  const Preconditioner apply = [&](const Vector& r, Vector& z) { m.apply(r, z); };
  const bool cg = krylov == Krylov::cg;
  const SolveResult want = cg ? pcg(pb.a, b, x, apply, KrylovOptions{}) : fgmres(pb.a, b, x, apply, KrylovOptions{});
  EXPECT_TRUE(want.converged()) << want.message;

  const auto first = b.begin() + a.row_begin();
  const Vector b_owned(first, first + a.owned_rows());
  Vector x_owned(b_owned.size(), 0.0);
  const SolveResult got = cg ? dist_pcg(comm, a, b_owned, x_owned, amg, KrylovOptions{})
                             : dist_fgmres(comm, a, b_owned, x_owned, amg, KrylovOptions{});

  EXPECT_TRUE(got.converged()) << got.message;
  EXPECT_LE(got.relative_residual, 1e-8);
  EXPECT_LE(std::abs(got.iterations - want.iterations), 1) << "serial " << want.iterations << ", distributed "
                                                           << got.iterations;
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, got.iterations));
}

void check_problem(const Problem& pb, const AmgOptions& options, Krylov krylov = Krylov::cg,
                   std::size_t min_levels = 3) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE(pb.spec + ", seed " + std::to_string(seed));
  const Hierarchy serial = setup(pb.a, pb.near_null, options);
  ASSERT_GE(serial.levels.size(), min_levels) << "the test wants a real hierarchy";
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows =
        testing::aligned_partition(comm, pb.a.rows, pb.near_null.block_size, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const DistAmg amg(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                      options);
    expect_same_hierarchy(comm, serial, amg.hierarchy());
    expect_same_convergence(comm, pb, serial, amg, a, seed, krylov);
  }
}

void check_problem(const std::string& spec, const AmgOptions& options, Krylov krylov = Krylov::cg) {
  check_problem(testing::make_problem(spec), options, krylov);
}

/// `a` with every `every`-th row and column reduced to its diagonal (as Dirichlet rows
/// eliminated symmetrically): nodes with no connection, which no aggregate takes.
Csr<double> decoupled_rows(const Csr<double>& a, std::int64_t every) {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> values;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const std::int64_t j = a.col_idx[p];
      if (i != j && (i % every == 0 || j % every == 0)) continue;
      rows.push_back(i), cols.push_back(j), values.push_back(a.values[p]);
    }
  return csr_from_triplets<double>(a.rows, a.cols, rows, cols, values);
}

TEST(DistAmgHierarchy, Poisson7PointMatchesSerial) { check_problem("poisson3d:12", small_coarse()); }

// Real SPD matrices (../shared/matrices), the irregular graphs the generators do not make: power
// networks (the *_bus matrices), structural stiffness and mass matrices (bcsstk08, bcsstk21,
// bcsstm07), a finite-element graph (gr_30_30) and Laplacians read from files; the tiny bcsstk01
// (48 rows) and LFAT5 (14 rows: most ranks own none) and the diagonal bcsstm05 (no strong edge:
// one level). Scalar nodes, the constant near-null space. On 1-4 ranks the hierarchy is the serial
// one and PCG takes the serial iteration count (+-1), on both partitions.
TEST(DistAmgHierarchy, SuiteSparseSpdMatricesMatchSerial) {
  const std::vector<std::string> names{"1138_bus", "494_bus",  "662_bus", "685_bus",  "gr_30_30",
                                       "lap2D_5pt_n100", "lap3D_7pt_n20", "bcsstk08", "bcsstk21", "bcsstm07",
                                       "bcsstk01", "LFAT5", "bcsstm05"};
  const std::vector<Problem> problems = testing::file_problems(names);
  ASSERT_EQ(problems.size(), names.size()) << "matrices missing from " << ::tessera::testing::matrix_dir();
  for (const Problem& pb : problems) check_problem(pb, small_coarse(), Krylov::cg, 1);
}

// rtol out of reach (Poisson's rounding floor is near 1e-16): the distributed PCG stops every rank
// at the same iteration with accuracy_limit (amg/krylov.hpp), as the serial PCG does.
TEST(DistAmgHierarchy, UnreachableToleranceStopsEveryRankAtTheAccuracyLimit) {
  const dist::Communicator comm;
  const Problem pb = testing::make_problem("poisson3d:9");
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const DistAmg amg(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                    small_coarse());
  const Vector b_global = tessera::testing::random_values(pb.a.rows, seed);
  const Vector b(b_global.begin() + a.row_begin(), b_global.begin() + a.row_begin() + a.owned_rows());
  Vector x(b.size(), 0.0);
  KrylovOptions ko;
  ko.rtol = 1e-17;
  const SolveResult r = dist_pcg(comm, a, b, x, amg, ko);
  EXPECT_EQ(r.status, SolveStatus::accuracy_limit) << r.message;
  EXPECT_LT(r.iterations, 40) << "it iterated on rounding noise";
  EXPECT_LE(r.relative_residual, 1e-14);
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, r.iterations));
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, static_cast<std::int64_t>(r.status)));
}

// A times 1e200, past the range of the strength rule's plain squares (they overflowed: no strong
// edge, one level): the distributed hierarchy is the serial one of the scaled A, on both
// partitions, and has the unscaled A's levels (rows, nnz); PCG on (cA) x = b, b = A x* (in range
// for PCG's norms, which b = cA x* would overflow), takes the unscaled serial count (+-1).
TEST(DistAmgHierarchy, PoissonTimes1e200HasTheUnscaledLevelsAndIterations) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d:8");
  Problem scaled = pb;
  for (double& v : scaled.a.values) v *= 1e200;
  scaled.spec += " times 1e200";
  SCOPED_TRACE(scaled.spec + ", seed " + std::to_string(seed));
  const Hierarchy serial = setup(pb.a, pb.near_null, small_coarse());
  const HierarchyStats want = statistics(serial);
  ASSERT_GE(want.levels.size(), 3u) << "the test wants a real hierarchy";
  const Hierarchy serial_scaled = setup(scaled.a, scaled.near_null, small_coarse());
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, scaled.a, rows, rows);
    const DistAmg amg(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                      small_coarse());
    expect_same_hierarchy(comm, serial_scaled, amg.hierarchy());
    const HierarchyStats got = amg.statistics();
    EXPECT_EQ(got.levels.size(), want.levels.size());  // not ASSERT: the solve below is collective
    for (std::size_t l = 0; l < std::min(got.levels.size(), want.levels.size()); ++l) {
      EXPECT_EQ(got.levels[l].rows, want.levels[l].rows) << "level " << l;
      EXPECT_EQ(got.levels[l].nnz, want.levels[l].nnz) << "level " << l;
    }
    expect_same_convergence(comm, pb, serial, amg, a, seed, Krylov::cg);
  }
}

// b out of b.b's range (amg/krylov.hpp) on the ranks, uneven partition with an empty rank:
// dist_pcg and dist_fgmres scale it alike on every rank (the scale comes from allreduced dots).
// Times 2^700, x is the unscaled x times 2^700 bit for bit (a power of two scales every step
// exactly); times 1e200 or 1e-200 (each entry rounded, relative 1.1e-16) the unscaled iterations
// (+-1) and x / c within 1e-12 of x relative to max|x| (serially it moves by about 1e-15).
TEST(DistAmgHierarchy, RightHandSidesNear1e200Or1em200SolveLikeTheUnscaled) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("poisson3d:9, seed " + std::to_string(seed));
  const Problem pb = testing::make_problem("poisson3d:9");
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const DistAmg amg(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                    small_coarse());
  Vector b_global(static_cast<std::size_t>(pb.a.rows));
  ref::spmv(1.0, pb.a, tessera::testing::random_values(pb.a.rows, seed), 0.0, b_global);
  const Vector b(b_global.begin() + a.row_begin(), b_global.begin() + a.row_begin() + a.owned_rows());
  for (const Krylov krylov : {Krylov::cg, Krylov::fgmres}) {
    SCOPED_TRACE(krylov == Krylov::cg ? "dist_pcg" : "dist_fgmres");
    const auto solve = [&](const Vector& rhs, Vector& x) {
      x.assign(rhs.size(), 0.0);
      return krylov == Krylov::cg ? dist_pcg(comm, a, rhs, x, amg, KrylovOptions{})
                                  : dist_fgmres(comm, a, rhs, x, amg, KrylovOptions{});
    };
    Vector x, xc;
    const SolveResult want = solve(b, x);
    EXPECT_TRUE(want.converged()) << want.message;
    double x_max = 0;
    for (const double v : x) x_max = std::max(x_max, std::fabs(v));
    x_max = comm.allreduce(x_max, dist::ReduceOp::max);
    for (const auto& [c, name] : testing::kOutOfRangeFactors) {
      SCOPED_TRACE(std::string("b times ") + name);
      Vector bc(b.size());
      for (std::size_t i = 0; i < b.size(); ++i) bc[i] = c * b[i];
      const SolveResult got = solve(bc, xc);
      testing::expect_solved_like_unscaled(comm, c, want, x, got, xc, x_max);
    }
  }
}

// P_tent's rows of unaggregated dofs are empty on every rank, as in the serial setup.
TEST(DistAmgHierarchy, DecoupledRowsStayOutOfTheAggregatesAsInSerial) {
  Problem pb = testing::make_problem("poisson3d:12");
  pb.a = decoupled_rows(pb.a, 7);
  pb.spec += " with every 7th row decoupled";
  check_problem(pb, small_coarse());
}

// A non-symmetric operator: the same hierarchy as the serial setup, and FGMRES (the serial
// solver on the distributed operations) with the serial iteration count.
TEST(DistAmgHierarchy, ConvectionDiffusionWithFgmresMatchesSerial) {
  check_problem("convdiff3d:12", small_coarse(), Krylov::fgmres);
}

// FGMRES refuses bad input on every rank alike: a non-finite b on one rank only, a restart of 0.
TEST(DistAmgHierarchy, FgmresRefusesBadInputOnEveryRank) {
  const dist::Communicator comm;
  const Problem pb = testing::make_problem("convdiff3d:8");
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, false, 1);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const DistAmg amg(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                    small_coarse());
  Vector b(static_cast<std::size_t>(a.owned_rows()), 1.0), x(b.size(), 0.0);
  const int last = comm.size() - 1;  // owns rows in the balanced partition
  if (comm.rank() == last) b.back() = std::nan("");
  EXPECT_THROW(dist_fgmres(comm, a, b, x, amg, KrylovOptions{}), InputError);
  if (comm.rank() == last) b.back() = 1.0;
  KrylovOptions no_restart;
  no_restart.restart = 0;
  EXPECT_THROW(dist_fgmres(comm, a, b, x, amg, no_restart), InputError);
  const SolveResult solved = dist_fgmres(comm, a, b, x, amg, KrylovOptions{});  // and then it solves
  EXPECT_TRUE(solved.converged()) << solved.message;
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, solved.iterations));
}

// A non-finite near-null value on one rank only is refused on every rank (none is left in the
// setup's collectives), the rank that holds it naming its global row.
TEST(DistAmgHierarchy, NonFiniteNearNullVectorIsRefusedOnEveryRank) {
  const dist::Communicator comm;
  const Problem pb = testing::make_problem("elasticity3d:5");
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 3, false, 1);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  NearNullSpace b = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
  const int last = comm.size() - 1;  // owns rows in the balanced partition
  if (comm.rank() == last) b.vectors.at(b.vectors.rows - 1, 5) = std::numeric_limits<double>::infinity();
  std::string message;
  try {
    const DistAmg amg(comm, a, b, small_coarse());
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_FALSE(message.empty()) << "rank " << comm.rank() << " accepted a near-null space with an Inf";
  if (comm.rank() == last) {
    EXPECT_NE(message.find(tessera::detail::concat("near-null vector 5 has a non-finite value inf at row ",
                                                   rows.end(last) - 1, " (rank ", last, ")")),
              std::string::npos)
        << message;
  }
}

TEST(DistAmgHierarchy, Poisson27PointL1JacobiMatchesSerial) {
  check_problem("poisson3d27:12", small_coarse(SmootherKind::l1_jacobi));
}

// The distributed l1-Jacobi sums read A's owned and ghost blocks in place: bit for bit the sums
// over the [owned | ghost] copy they replace, and the serial sums to rounding (whose order puts
// ghost columns left of the owned ones first).
TEST(DistAmgHierarchy, L1SumsOverTheBlocksEqualThoseOfTheExtendedCopy) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d27:9");
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const std::vector<double> got = owned_l1_inverse_diagonal(a);
    EXPECT_EQ(got, l1_inverse_diagonal(dist::extended_block(a)));
    const Vector serial = l1_inverse_diagonal(pb.a);
    // Not ASSERTs: the next partition is collective.
    const std::size_t owned = static_cast<std::size_t>(a.owned_rows());
    EXPECT_EQ(got.size(), owned);
    for (std::size_t i = 0; i < std::min(got.size(), owned); ++i) {
      const double want = serial[static_cast<std::size_t>(a.row_begin()) + i];
      if (!(std::fabs(got[i] - want) <= 1e-14 * std::fabs(want))) {
        EXPECT_NEAR(got[i], want, 1e-14 * std::fabs(want)) << "owned row " << i << " on rank " << comm.rank();
        break;
      }
    }
  }
}

// owned_diagonal finds each row's diagonal by a binary search of its sorted columns: the serial
// diagonal at every owned row, 0 where a row has none (here every fifth row, and the rows of
// ranks that own none), on a balanced partition and an uneven one with an empty rank.
TEST(DistAmgHierarchy, OwnedDiagonalIsTheSerialDiagonal) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Csr<double> full = testing::make_problem("poisson3d27:7").a;
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < full.rows; ++i)
    for (std::int64_t p = full.row_ptr[i]; p < full.row_ptr[i + 1]; ++p)
      if (full.col_idx[p] != i || i % 5 != 0)
        r.push_back(i), c.push_back(full.col_idx[p]), v.push_back(full.values[p] + 0.001 * static_cast<double>(i));
  const Csr<double> a = csr_from_triplets<double>(full.rows, full.cols, r, c, v);
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, a.rows, 1, uneven, seed);
    const std::vector<double> got = owned_diagonal(dist::testing::distribute(comm, a, rows, rows));
    const std::size_t owned = static_cast<std::size_t>(rows.size(comm.rank()));
    EXPECT_EQ(got.size(), owned);  // not ASSERT: the next partition is collective
    for (std::size_t k = 0; k < std::min(got.size(), owned); ++k) {
      const std::int64_t i = rows.begin(comm.rank()) + static_cast<std::int64_t>(k);
      double want = 0.0;  // by a scan of the serial row
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        if (a.col_idx[p] == i) want = a.values[p];
      EXPECT_EQ(want == 0.0, i % 5 == 0) << "row " << i;
      EXPECT_EQ(got[k], want) << "row " << i << " on rank " << comm.rank();
    }
  }
}

TEST(DistAmgHierarchy, ElasticityRigidBodyModesMatchesSerial) { check_problem("elasticity3d:6", small_coarse()); }

// 2 dofs a node, 3 modes: 338 rows, so some partitions cut the grid's rows of nodes unevenly.
TEST(DistAmgHierarchy, PlaneElasticityRigidBodyModesMatchesSerial) {
  check_problem("elasticity2d:13", small_coarse());
}

// Nodes that rotate: 6 dofs a node, the modes turning the rotations too (750 rows, partitions at
// multiples of 24).
TEST(DistAmgHierarchy, FrameRigidBodyModesWithRotationsMatchSerial) { check_problem("frame3d:5", small_coarse()); }

// Filtered prolongator smoothing (amg/dist/dist_filtered_operator.hpp) on a frame with its kinds
// of dof separated, where the strength graph drops the weak couplings: every level's A_F, P and
// operator are the serial setup's to rounding, and PCG takes the serial iteration count.
TEST(DistAmgHierarchy, FilteredSmoothingOnASeparatedFrameMatchesSerial) {
  const gen::ProblemSpec spec = gen::parse_spec("frame2d:16:30");
  const Csr<double> a = without_cross_kind_couplings(gen::generate(spec), gen::block_size(spec));
  AmgOptions o = small_coarse();
  o.filtered_smoothing = true;
  const Problem pb{"frame2d:16:30 separated", a, constant_near_null_space(a.rows, 1)};
  ASSERT_TRUE(setup(pb.a, pb.near_null, o).levels[0].filtered) << "the graph dropped nothing: no test of the filter";
  check_problem(pb, o);
}

// The hierarchy that takes A over (tessera-amg and PCTESSERA keep no copy of it) is the one a
// copy builds, and release_fine_operator hands A back as it came: the same blocks and halo, a
// second setup from it builds the same hierarchy again, and a solve on it converges alike.
TEST(DistAmgHierarchy, ATakenOverIsHandedBackForTheNextSetup) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const Problem pb = testing::make_problem("poisson3d:11");
  const Hierarchy serial = setup(pb.a, pb.near_null, small_coarse());
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, /*uneven=*/true, seed);
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const NearNullSpace nns = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
  DistAmg taken(comm, dist::DistMatrix(a), nns, small_coarse());
  expect_same_hierarchy(comm, serial, taken.hierarchy());
  dist::DistMatrix back = std::move(taken).release_fine_operator();
  EXPECT_EQ(back.local, a.local);
  EXPECT_EQ(back.nonlocal, a.nonlocal);
  EXPECT_EQ(back.ghost_cols, a.ghost_cols);
  EXPECT_TRUE(back.row_partition == a.row_partition && back.col_partition == a.col_partition);
  const DistAmg again(comm, std::move(back), nns, small_coarse());
  const DistHierarchy& h = again.hierarchy();
  expect_same_hierarchy(comm, serial, h);
  expect_same_convergence(comm, pb, serial, again, h.levels[0].a, seed, Krylov::cg);  // its halo too
}

TEST(DistAmgHierarchy, StatisticsAreGlobal) {
  const dist::Communicator comm;
  const Problem pb = testing::make_problem("poisson3d:10");
  const dist::RowPartition rows = dist::RowPartition::balanced_rows(pb.a.rows, comm.size());
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const DistAmg amg(comm, a, testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank())),
                    small_coarse());
  const HierarchyStats got = amg.statistics();
  const HierarchyStats want = statistics(setup(pb.a, pb.near_null, small_coarse()));
  ASSERT_EQ(got.levels.size(), want.levels.size());
  for (std::size_t l = 0; l < want.levels.size(); ++l) {
    EXPECT_EQ(got.levels[l].rows, want.levels[l].rows);
    EXPECT_EQ(got.levels[l].nnz, want.levels[l].nnz);
    EXPECT_EQ(got.levels[l].p_nnz, want.levels[l].p_nnz);
  }
  EXPECT_NEAR(got.operator_complexity, want.operator_complexity, 1e-14);
  EXPECT_EQ(got.nnz_ap, want.nnz_ap);
  const std::vector<int> active = amg.active_ranks();
  EXPECT_EQ(active.front(), std::min<int>(comm.size(), static_cast<int>((pb.a.rows + 7) / 8)));
  for (int r : active) EXPECT_GE(r, 1);
  EXPECT_TRUE(dist::testing::same_on_every_rank(comm, static_cast<std::int64_t>(got.times.total() * 1e9)));
}

}  // namespace
}  // namespace tessera::amg
