// Distributed SpGEMM, transpose and PtAP against the serial reference on the gathered inputs:
// uneven / nnz-balanced partitions, a rank owning no rows, a rank whose rows are all empty,
// block-diagonal operands (no ghosts), rectangular P, and numeric refreshes with new values.
#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "dist/ptap.hpp"
#include "dist/spgemm.hpp"
#include "dist/transpose.hpp"
#include "dist/transpose_values.hpp"
#include "dist_test_util.hpp"
#include "support/host_threads_scope.hpp"
#include "local/core/error.hpp"
#include "local/gen/generators.hpp"

namespace tessera::dist {
namespace {

using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

// Same pattern, fresh values.
Csr<double> new_values(Csr<double> a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (double& v : a.values) v = (rng() & 1 ? 1 : -1) * u(rng);
  return a;
}

// Rows [p.begin(r), p.end(r)) of `a` emptied for r = the rank count's middle rank.
Csr<double> empty_rows_of_one_rank(const Csr<double>& a, const RowPartition& p) {
  const int victim = p.num_ranks() / 2;
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < a.rows; ++i)
    if (p.owner(i) != victim)
      for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        r.push_back(i);
        c.push_back(a.col_idx[k]);
        v.push_back(a.values[k]);
      }
  return csr_from_triplets<double>(a.rows, a.cols, r, c, v);
}

Csr<double> block_diagonal(const Csr<double>& a, const RowPartition& rows, const RowPartition& cols) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (rows.owner(i) == cols.owner(a.col_idx[k])) {
        r.push_back(i);
        c.push_back(a.col_idx[k]);
        v.push_back(a.values[k]);
      }
  return csr_from_triplets<double>(a.rows, a.cols, r, c, v);
}

void expect_spgemm_matches(const Communicator& comm, const DistMatrix& c, const Csr<double>& a, const Csr<double>& b) {
  const Csr<double> got = gather(comm, c);
  if (comm.rank() != 0) return;
  testing::expect_matches_reference(comm, got, ref::spgemm(a, b), ref::spgemm(testing::ones(a), testing::ones(b)),
                                    ref::spgemm(testing::absolute(a), testing::absolute(b)));
}

void expect_ptap_matches(const Communicator& comm, const DistMatrix& c, const Csr<double>& a, const Csr<double>& p) {
  const Csr<double> got = gather(comm, c);
  if (comm.rank() != 0) return;
  testing::expect_matches_reference(comm, got, ref::ptap(a, p), ref::ptap(testing::ones(a), testing::ones(p)),
                                    ref::ptap(testing::absolute(a), testing::absolute(p)));
}

// C = A*B with A m x k, B k x n: A's rows on `rows`, A's columns = B's rows on `inner`.
void check_spgemm(const Communicator& comm, const Csr<double>& a, const Csr<double>& b, const RowPartition& rows,
                  const RowPartition& inner, const RowPartition& outer, std::uint64_t seed) {
  const DistMatrix da = testing::distribute(comm, a, rows, inner);
  const DistMatrix db = testing::distribute(comm, b, inner, outer);
  DistSpgemm product(comm, da, db);
  EXPECT_EQ(product.result().row_partition, rows);
  EXPECT_EQ(product.result().col_partition, outer);
  expect_spgemm_matches(comm, product.result(), a, b);

  // Numeric refresh: new values, same patterns; equal to a fresh product, bit for bit.
  const Csr<double> a2 = new_values(a, seed), b2 = new_values(b, seed + 1);
  const DistMatrix da2 = testing::distribute(comm, a2, rows, inner);
  const DistMatrix db2 = testing::distribute(comm, b2, inner, outer);
  const std::int64_t symbolic_bytes = product.stats().remote_row_bytes;
  product.recompute(comm, da2, db2);
  // The refresh receives values only: the symbolic fetch was lengths + (column, value) pairs.
  EXPECT_EQ(symbolic_bytes, 2 * product.stats().remote_row_bytes + 8 * da.halo.num_ghosts());
  const Csr<double> refreshed = gather(comm, product.result());
  const Csr<double> fresh = gather(comm, DistSpgemm(comm, da2, db2).result());
  if (comm.rank() == 0) EXPECT_EQ(refreshed, fresh);
  expect_spgemm_matches(comm, product.result(), a2, b2);
}

TEST(DistSpgemm, SquareMatchesReferenceOnEveryPartition) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int i = 0;
  for (std::int64_t n : {0, 1, 11, 70, 181}) {
    const Csr<double> a = random_csr(RandomSpec{n, n, 0.06, 0.1, 0.1, false}, seed + i++);
    const Csr<double> b = random_csr(RandomSpec{n, n, 0.06, 0.1, 0.1, false, }, seed + i++);
    for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(part.name + ", n = " + std::to_string(n));
      check_spgemm(comm, a, b, part.partition, part.partition, part.partition, seed + i++);
    }
  }
}

TEST(DistSpgemm, RectangularWithThreePartitions) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_rectangular_product_case(comm, seed, [&](auto&&... args) { check_spgemm(comm, args...); });
}

TEST(DistSpgemm, RankWithEmptyRowsAndBlockDiagonalOperands) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * 3 * comm.size() + 3;
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const Csr<double> a = random_csr(RandomSpec{n, n, 0.1, 0, 0, false}, seed);
  const Csr<double> hollow = empty_rows_of_one_rank(a, p);
  check_spgemm(comm, hollow, a, p, p, p, seed + 1);
  check_spgemm(comm, a, hollow, p, p, p, seed + 2);
  const Csr<double> diag = block_diagonal(a, p, p);
  const DistMatrix dd = testing::distribute(comm, diag, p, p);
  EXPECT_TRUE(dd.ghost_cols.empty());
  check_spgemm(comm, diag, diag, p, p, p, seed + 3);
}

// A local kernel that throws on one rank only, at its `fail_at`-th call (0-based): the ranks
// must agree and all throw the same error instead of waiting in the next collective.
LocalSpgemm failing_on_one_rank(const Communicator& comm, int victim, int fail_at, std::function<void()> raise) {
  auto calls = std::make_shared<int>(0);
  return [&comm, victim, fail_at, raise, calls](const Csr<double>& a, const Csr<double>& b) {
    if (comm.rank() == victim && (*calls)++ == fail_at) raise();
    return host_local_spgemm(a, b);
  };
}

// Runs `product` (expected to throw on every rank) and checks every rank caught the same
// error class and text, which names the step, the failing rank and the original message.
template <class Expected, class Product>
void expect_same_error_on_every_rank(const Communicator& comm, const std::string& step, int victim, Product product) {
  std::string text;
  try {
    product();
    ADD_FAILURE() << "no exception on rank " << comm.rank();
  } catch (const Expected& e) {
    text = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception class on rank " << comm.rank() << ": " << e.what();
  }
  EXPECT_EQ(text, comm.broadcast(text, 0));
  EXPECT_EQ(text, step + ": rank " + std::to_string(victim) + ": injected failure");
}

TEST(DistSpgemm, LocalKernelFailingOnOneRankThrowsOnEveryRank) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * comm.size() + 5;
  const Csr<double> a = random_csr(RandomSpec{n, n, 0.1, 0.1, 0.1, false}, seed);
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const DistMatrix da = testing::distribute(comm, a, p, p);
  const int victim = comm.size() - 1;
  const auto input_error = [] { throw InputError("injected failure"); };
  const auto out_of_memory = [] { throw DeviceError("injected failure"); };
  const auto other = [] { throw std::runtime_error("injected failure"); };

  // DistSpgemm calls the kernel once in the constructor, once per recompute.
  expect_same_error_on_every_rank<InputError>(comm, "spgemm: local product", victim, [&] {
    DistSpgemm(comm, da, da, failing_on_one_rank(comm, victim, 0, input_error));
  });
  DistSpgemm product(comm, da, da, failing_on_one_rank(comm, victim, 1, out_of_memory));
  expect_same_error_on_every_rank<DeviceError>(comm, "spgemm: local product", victim,
                                               [&] { product.recompute(comm, da, da); });

  // DistPtap: A*P, then the outer product P^T*(AP), in the constructor and in each recompute.
  expect_same_error_on_every_rank<InputError>(comm, "ptap: local products", victim, [&] {
    DistPtap(comm, da, da, failing_on_one_rank(comm, victim, 1, other));
  });
  DistPtap ptap(comm, da, da, failing_on_one_rank(comm, victim, 3, input_error));
  expect_same_error_on_every_rank<InputError>(comm, "ptap: local products", victim,
                                              [&] { ptap.recompute(comm, da, da); });

  // The communicator is still usable and a working kernel still gives the reference product.
  expect_spgemm_matches(comm, DistSpgemm(comm, da, da).result(), a, a);
}

// DistPtap runs A*P and P^T(AP) as one call of the backend's chain (a device backend keeps AP
// on the GPU between them), in the symbolic phase and in each recompute, with the result of
// the default chain bit for bit; a chain that misreports nnz(AP) at the recompute is an error
// on every rank.
TEST(DistPtap, RunsBothLocalProductsAsOneChain) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * comm.size() + 13, nc = 3 * comm.size() + 2;
  const Csr<double> a = random_csr(RandomSpec{n, n, 0.15, 0.1, 0.1, false}, seed);
  const Csr<double> p = random_csr(RandomSpec{n, nc, 0.2, 0.1, 0.1, false}, seed + 1);
  const RowPartition rows = testing::uneven_partition(comm, n, seed + 2);
  const RowPartition coarse = RowPartition::balanced_rows(nc, comm.size());
  const DistMatrix da = testing::distribute(comm, a, rows, rows), dp = testing::distribute(comm, p, rows, coarse);
  auto multiplies = std::make_shared<int>(0), chains = std::make_shared<int>(0), skew = std::make_shared<int>(0);
  const LocalSpgemm counted(
      [multiplies](const Csr<double>& x, const Csr<double>& y) {
        ++*multiplies;
        return host_local_spgemm(x, y);
      },
      [chains, skew](const Csr<double>& l, const Csr<double>& x, const Csr<double>& y) {
        ++*chains;
        const Csr<double> xy = host_local_spgemm(x, y);
        return ChainedProduct{host_local_spgemm(l, xy), xy.nnz() + *skew};
      });
  DistPtap chained(comm, da, dp, counted);
  const DistPtap plain(comm, da, dp);
  EXPECT_EQ(*chains, 1);
  EXPECT_EQ(*multiplies, 0);
  const Csr<double> got = gather(comm, chained.result()), want = gather(comm, plain.result());
  if (comm.rank() == 0) EXPECT_EQ(got, want);
  const DistMatrix dp2 = testing::distribute(comm, new_values(p, seed + 3), rows, coarse);
  chained.recompute(comm, da, dp2);
  EXPECT_EQ(*chains, 2);
  const Csr<double> refreshed = gather(comm, chained.result()), fresh = gather(comm, DistPtap(comm, da, dp2).result());
  if (comm.rank() == 0) EXPECT_EQ(refreshed, fresh);
  // nnz(AP) misreported on the last rank: every rank throws.
  if (comm.rank() == comm.size() - 1) *skew = 1;
  const std::string text = testing::input_error_on_every_rank(comm, [&] { chained.recompute(comm, da, dp); });
  EXPECT_NE(text.find("ptap: local products: rank " + std::to_string(comm.size() - 1)), std::string::npos) << text;
}

// A local kernel whose numeric product loses an entry on one rank (a kernel bug): the broken
// invariant is an error on every rank, not an assertion on one while the others wait.
TEST(DistSpgemm, PatternChangeOnOneRankThrowsOnEveryRank) {
  const Communicator comm;
  const std::int64_t n = 8 * comm.size() + 5;
  std::vector<std::int64_t> diagonal(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) diagonal[static_cast<std::size_t>(i)] = i;
  const Csr<double> eye = csr_from_triplets<double>(n, n, diagonal, diagonal, std::vector<double>(diagonal.size(), 2.0));
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const DistMatrix de = testing::distribute(comm, eye, p, p);
  const int victim = comm.size() - 1;
  ASSERT_GT(p.end(victim) - p.begin(victim), 0) << "the victim owns rows, so its product has entries to lose";
  // Loses the last entry of the victim's product at its `at`-th call (0-based).
  const auto losing_an_entry = [&comm, victim](int at) -> LocalSpgemm {
    auto calls = std::make_shared<int>(0);
    return [&comm, victim, calls, at](const Csr<double>& a, const Csr<double>& b) {
      Csr<double> c = host_local_spgemm(a, b);
      if (comm.rank() == victim && (*calls)++ == at && c.nnz() > 0) {
        const std::int64_t nnz = c.nnz();
        c.col_idx.pop_back(), c.values.pop_back();
        for (auto& end : c.row_ptr)
          if (end == nnz) --end;
      }
      return c;
    };
  };
  const auto expect_error_on_every_rank = [&](const std::string& where, auto recompute) {
    const std::string text = testing::input_error_on_every_rank(comm, recompute);
    EXPECT_NE(text.find(where + std::to_string(victim)), std::string::npos) << text;
    EXPECT_NE(text.find("the symbolic phase had"), std::string::npos) << text;
  };
  // DistSpgemm: the recompute's call is the second.
  DistSpgemm product(comm, de, de, losing_an_entry(1));
  expect_error_on_every_rank("spgemm: local product: rank ", [&] { product.recompute(comm, de, de); });
  // DistPtap: A*P, then P^T*(AP), in the constructor and again in the recompute (the fourth call).
  DistPtap ptap(comm, de, de, losing_an_entry(3));
  expect_error_on_every_rank("ptap recompute: rank ", [&] { ptap.recompute(comm, de, de); });
}

// A local outer product P^T (AP) that comes back broken on one rank (a column outside the
// compact columns, or a row out of order) is an InputError on every rank before C's pattern
// reads it or any of its rows is sent, and names the rank.
TEST(DistPtap, BrokenOuterProductOnOneRankThrowsOnEveryRank) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * comm.size() + 5;
  const Csr<double> a = random_csr(RandomSpec{n, n, 0.3, 0.1, 0, false}, seed);
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const DistMatrix da = testing::distribute(comm, a, p, p);
  const int victim = comm.size() - 1;
  // The chain's second call (the constructor's outer product) on the victim, broken by `harm`.
  const auto breaking = [&comm, victim](std::function<void(Csr<double>&)> harm) -> LocalSpgemm {
    auto calls = std::make_shared<int>(0);
    return [&comm, victim, calls, harm](const Csr<double>& l, const Csr<double>& r) {
      Csr<double> c = host_local_spgemm(l, r);
      if (comm.rank() == victim && (*calls)++ == 1) harm(c);
      return c;
    };
  };
  const auto expect_refused = [&](const LocalSpgemm& local, const std::string& why) {
    const std::string text = testing::input_error_on_every_rank(comm, [&] { DistPtap(comm, da, da, local); });
    EXPECT_NE(text.find("ptap: rank " + std::to_string(victim) + ": P^T (AP): "), std::string::npos) << text;
    EXPECT_NE(text.find(why), std::string::npos) << text;
  };
  expect_refused(breaking([](Csr<double>& c) {
                   ASSERT_GT(c.nnz(), 0);
                   c.col_idx.back() = static_cast<std::int32_t>(c.cols);
                 }),
                 "has compact column");
  expect_refused(breaking([](Csr<double>& c) {
                   for (std::int64_t r = 0; r < c.rows; ++r)
                     if (c.row_length(r) > 1) {
                       std::swap(c.col_idx[c.row_ptr[r]], c.col_idx[c.row_ptr[r] + 1]);
                       return;
                     }
                   FAIL() << "no row of two entries to disorder";
                 }),
                 "not strictly increasing");
}

// is_symmetric on every partition: the serial answer (A against ref::transpose(A)) on every
// rank, for exactly symmetric matrices, a non-symmetric one with a symmetric pattern, one entry
// off by more than the tolerance and one within it, and a partition of columns unlike the rows.
TEST(DistTranspose, IsSymmetricGivesTheSerialAnswerOnEveryRank) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> random = random_csr(RandomSpec{50, 50, 0.1, 0.1, 0.1, false}, seed);
  const Csr<double> transposed = ref::transpose(random);
  Csr<double> symmetric;  // random + random^T, by triplets
  {
    std::vector<std::int64_t> r, c;
    std::vector<double> v;
    for (const Csr<double>* m : {&random, &transposed})
      for (std::int64_t i = 0; i < m->rows; ++i)
        for (std::int64_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; ++k)
          r.push_back(i), c.push_back(m->col_idx[k]), v.push_back(m->values[k]);
    symmetric = csr_from_triplets<double>(50, 50, r, c, v);
  }
  ASSERT_EQ(ref::transpose(symmetric), symmetric);
  // One off-diagonal pair made unequal by 1e-6 (refused) or 1e-14 (accepted) relative.
  const auto nudged = [&](double relative) {
    Csr<double> m = symmetric;
    for (std::int64_t row = 0; row < m.rows; ++row)
      for (std::int64_t k = m.row_ptr[row]; k < m.row_ptr[row + 1]; ++k)
        if (m.col_idx[k] != row && m.values[k] != 0) {
          m.values[k] *= 1 + relative;
          return m;
        }
    ADD_FAILURE() << "no off-diagonal entry to nudge";
    return m;
  };
  const std::vector<std::pair<std::string, std::pair<Csr<double>, bool>>> cases = {
      {"poisson3d", {gen::generate(gen::parse_spec("poisson3d:5")), true}},
      {"convdiff3d", {gen::generate(gen::parse_spec("convdiff3d:5")), false}},
      {"random + random^T", {symmetric, true}},
      {"random", {random, false}},
      {"one pair off by 1e-6", {nudged(1e-6), false}},
      {"one pair off by 1e-14", {nudged(1e-14), true}},
  };
  int i = 1;
  for (const auto& [name, c] : cases) {
    const auto& [a, symmetric_here] = c;
    for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(name + ", " + part.name);
      const DistMatrix d = testing::distribute(comm, a, part.partition, part.partition);
      const bool got = is_symmetric(comm, d);
      EXPECT_EQ(got, symmetric_here);
      EXPECT_TRUE(testing::same_on_every_rank(comm, std::int64_t{got}));
    }
  }
  if (comm.size() > 1) {  // columns partitioned unlike the rows: not a symmetric operator
    const Csr<double> a = gen::generate(gen::parse_spec("poisson3d:5"));
    const RowPartition rows = testing::uneven_partition(comm, a.rows, seed + i++);
    const RowPartition cols = RowPartition::balanced_rows(a.cols, comm.size());
    if (rows != cols) EXPECT_FALSE(is_symmetric(comm, testing::distribute(comm, a, rows, cols)));
  }
}

// P's shapes for the transposes: empty, 1x1, rectangular both ways, square.
constexpr std::pair<std::int64_t, std::int64_t> kTransposeShapes[] = {{0, 0}, {1, 1}, {77, 20}, {20, 77}, {128, 128}};

TEST(DistTranspose, MatchesReferenceExactly) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int i = 0;
  for (auto shape : kTransposeShapes) {
    const Csr<double> p = random_csr(RandomSpec{shape.first, shape.second, 0.15, 0.2, 0.2, false}, seed + i++);
    const RowPartition cols = testing::uneven_partition(comm, p.cols, seed + i++);
    for (const auto& part : testing::test_partitions(comm, p, seed + i++)) {
      SCOPED_TRACE(part.name + " " + std::to_string(shape.first) + "x" + std::to_string(shape.second));
      const DistMatrix dp = testing::distribute(comm, p, part.partition, cols);
      const DistMatrix pt = transpose(comm, dp);
      EXPECT_EQ(pt.row_partition, cols);
      EXPECT_EQ(pt.col_partition, part.partition);
      const Csr<double> got = gather(comm, pt);
      if (comm.rank() == 0) EXPECT_EQ(got, ref::transpose(p));
      // Every rank's blocks, ghosts and halo plan are those of the transpose assembled directly.
      const DistMatrix expected = testing::distribute(comm, ref::transpose(p), cols, part.partition);
      EXPECT_EQ(pt.local, expected.local);
      EXPECT_EQ(pt.nonlocal, expected.nonlocal);
      EXPECT_EQ(pt.ghost_cols, expected.ghost_cols);
      EXPECT_EQ(pt.halo.send_local, expected.halo.send_local);
      EXPECT_EQ(pt.halo.pattern.send_ranks, expected.halo.pattern.send_ranks);
      EXPECT_EQ(pt.halo.pattern.send_offsets, expected.halo.pattern.send_offsets);
      EXPECT_EQ(pt.halo.pattern.recv_ranks, expected.halo.pattern.recv_ranks);
      EXPECT_EQ(pt.halo.pattern.recv_offsets, expected.halo.pattern.recv_offsets);
      // The local block transposed by the caller (as an AMG level passes DistPtap's): the same.
      const DistMatrix given = transpose(comm, dp, ref::transpose(dp.local));
      EXPECT_EQ(given.local, pt.local);
      EXPECT_EQ(given.nonlocal, pt.nonlocal);
      EXPECT_EQ(given.ghost_cols, pt.ghost_cols);
      EXPECT_EQ(given.halo.send_local, pt.halo.send_local);
    }
  }
  // A given block of the wrong shape on the last rank alone is refused on every rank.
  const Csr<double> p = random_csr(RandomSpec{40, 24, 0.15, 0.2, 0.2, false}, seed + i);
  const DistMatrix dp = testing::distribute(comm, p, RowPartition::balanced_rows(p.rows, comm.size()),
                                            RowPartition::balanced_rows(p.cols, comm.size()));
  const bool victim = comm.rank() == comm.size() - 1;
  const std::string text = testing::input_error_on_every_rank(comm, [&] {
    transpose(comm, dp,
              victim ? Csr<double>::empty(dp.local.cols + 1, dp.owned_rows()) : ref::transpose(dp.local));
  });
  EXPECT_NE(text.find("transpose: rank " + std::to_string(comm.size() - 1) + ": the given transpose of P's local block is"),
            std::string::npos)
      << text;
}

// R's values refreshed from a value map (an AMG re-setup's R = P^T): for new values of P with
// the same pattern, exactly the transpose made from scratch, on every partition and shape
// (empty, 1x1, rectangular both ways, ranks owning no rows); an R of another pattern is
// refused on every rank when the map is made, P of other counts when it is used.
TEST(DistTranspose, ValueMapRefreshesExactly) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int i = 0;
  for (auto shape : kTransposeShapes) {
    const Csr<double> p = random_csr(RandomSpec{shape.first, shape.second, 0.15, 0.2, 0.2, false}, seed + i++);
    const Csr<double> p2 = new_values(p, seed + i++);
    const RowPartition cols = testing::uneven_partition(comm, p.cols, seed + i++);
    for (const auto& part : testing::test_partitions(comm, p, seed + i++)) {
      SCOPED_TRACE(part.name + " " + std::to_string(shape.first) + "x" + std::to_string(shape.second));
      const DistMatrix dp = testing::distribute(comm, p, part.partition, cols);
      const DistMatrix dp2 = testing::distribute(comm, p2, part.partition, cols);
      DistMatrix r = transpose(comm, dp);
      const TransposeValueMap map = transpose_value_map(comm, dp, r);
      // Poisoned first: every value must be written by the refresh.
      for (HostArray<double>* v : {&r.local.values, &r.nonlocal.values}) std::fill(v->begin(), v->end(), std::nan(""));
      refresh_transpose_values(comm, map, dp2, r);
      const DistMatrix fresh = transpose(comm, dp2);
      EXPECT_EQ(r.local, fresh.local);
      EXPECT_EQ(r.nonlocal, fresh.nonlocal);
      refresh_transpose_values(comm, map, dp, r);  // and back
      const Csr<double> got = gather(comm, r);
      if (comm.rank() == 0) EXPECT_EQ(got, ref::transpose(p));
    }
  }
  // An R missing one entry on the last rank: refused on every rank.
  const Csr<double> p = random_csr(RandomSpec{40, 24, 0.15, 0.2, 0.2, false}, seed + i);
  const RowPartition rows = RowPartition::balanced_rows(p.rows, comm.size()), cols = RowPartition::balanced_rows(p.cols, comm.size());
  const DistMatrix dp = testing::distribute(comm, p, rows, cols);
  const bool victim = comm.rank() == comm.size() - 1;
  const Csr<double> pt = ref::transpose(p);
  const std::int64_t dropped_row = cols.begin(comm.size() - 1);  // the first row of R the last rank owns
  std::vector<std::int64_t> tr, tc;
  std::vector<double> tv;
  for (std::int64_t row = 0; row < pt.rows; ++row)
    for (std::int64_t k = pt.row_ptr[row]; k < pt.row_ptr[row + 1]; ++k)
      if (row != dropped_row || k != pt.row_ptr[row]) tr.push_back(row), tc.push_back(pt.col_idx[k]), tv.push_back(pt.values[k]);
  const DistMatrix other = testing::distribute(comm, csr_from_triplets<double>(pt.rows, pt.cols, tr, tc, tv), cols, rows);
  if (dropped_row < pt.rows && pt.row_ptr[dropped_row + 1] > pt.row_ptr[dropped_row]) {  // the same on every rank
    const std::string text = testing::input_error_on_every_rank(comm, [&] { transpose_value_map(comm, dp, other); });
    EXPECT_NE(text.find("transpose value map: rank " + std::to_string(comm.size() - 1)), std::string::npos) << text;
  }
  // P with another entry count on the last rank, at the refresh: refused on every rank.
  DistMatrix r = transpose(comm, dp);
  const TransposeValueMap map = transpose_value_map(comm, dp, r);
  const DistMatrix none = testing::distribute(comm, Csr<double>::empty(p.rows, p.cols), rows, cols);
  if (comm.allreduce(dp.nnz(), ReduceOp::min) > 0) {
    const std::string text = testing::input_error_on_every_rank(
        comm, [&] { refresh_transpose_values(comm, map, victim ? none : dp, r); });
    EXPECT_NE(text.find("transpose values: rank " + std::to_string(comm.size() - 1)), std::string::npos) << text;
  }
}

// PtAP sharing A's extended block with an A*P product (as an AMG level shares A*P_tent's):
// bitwise the unshared products, also when the block last held other values of A (the other
// product's refresh), and refused on every rank when it is another pattern's.
void check_shared_a_extended(const Communicator& comm, const DistMatrix& da, const DistMatrix& dp,
                             const DistMatrix& da2, const DistMatrix& dp2) {
  DistSpgemm ap(comm, da, dp);
  ap.recompute(comm, da2, dp2);  // the shared block now holds A2's values
  DistPtap galerkin(comm, da, dp, host_local_spgemm, ap.compact().shared_a_extended());
  EXPECT_EQ(&galerkin.ap_product().a_extended(), &ap.compact().a_extended()) << "not shared";
  const auto expect_same = [&](const DistMatrix& got, const DistMatrix& want, const char* what) {
    const Csr<double> g = gather(comm, got), w = gather(comm, want);
    if (comm.rank() == 0) EXPECT_EQ(g, w) << what;
  };
  expect_same(galerkin.result(), DistPtap(comm, da, dp).result(), "symbolic phase after A*P saw A2");
  galerkin.recompute(comm, da2, dp2);
  expect_same(galerkin.result(), DistPtap(comm, da2, dp2).result(), "PtAP refreshed with A2");
  ap.recompute(comm, da, dp);  // refills the shared block with A's first values
  expect_same(ap.result(), DistSpgemm(comm, da, dp).result(), "A*P refreshed with A after PtAP saw A2");
  galerkin.recompute(comm, da2, dp2);
  expect_same(galerkin.result(), DistPtap(comm, da2, dp2).result(), "PtAP refreshed with A2 after A*P saw A");

  // A block of another pattern (here: A without entries, on every rank that has some).
  if (comm.allreduce(da.nnz(), ReduceOp::sum) == 0) return;
  const DistMatrix none =
      testing::distribute(comm, Csr<double>::empty(da.global_rows(), da.global_cols()), da.row_partition, da.col_partition);
  const std::string text = testing::input_error_on_every_rank(
      comm, [&] { DistPtap(comm, none, dp, host_local_spgemm, ap.compact().shared_a_extended()); });
  EXPECT_NE(text.find("the shared extended block is not this A's pattern"), std::string::npos) << text;
}

// The product's P_own^T gives P^T's local block with P's current values, copied or handed
// over (`take`: the next recompute makes P^T anew, and a second hand-over before it is refused):
// dist::transpose with it (an AMG level's R) equals the transpose made from scratch, block by
// block.
void expect_local_transpose(const Communicator& comm, DistPtap& galerkin, const DistMatrix& dp, bool take) {
  Csr<double> local = take ? galerkin.take_p_local_transposed() : galerkin.p_local_transposed();
  EXPECT_EQ(local, ref::transpose(dp.local));
  if (take) {
    EXPECT_THROW(galerkin.take_p_local_transposed(), Error) << "handed over twice";
    EXPECT_THROW(galerkin.p_local_transposed(), Error) << "copied after the hand-over";
  }
  const DistMatrix shared = transpose(comm, dp, std::move(local)), fresh = transpose(comm, dp);
  EXPECT_EQ(shared.local, fresh.local);
  EXPECT_EQ(shared.nonlocal, fresh.nonlocal);
  EXPECT_EQ(shared.ghost_cols, fresh.ghost_cols);
}

void expect_same_blocks(const DistMatrix& got, const DistMatrix& want, const char* what) {
  EXPECT_EQ(got.local, want.local) << what;
  EXPECT_EQ(got.nonlocal, want.nonlocal) << what;
  EXPECT_EQ(got.ghost_cols, want.ghost_cols) << what;
  EXPECT_EQ(got.halo.send_local, want.halo.send_local) << what;
}

// C is built from T's rows and the received partial rows directly (dist/summed_rows.hpp):
// block for block what assemble() makes of C's rows, and on several host threads with short
// ranges (rows that receive and rows that do not in one range) what one thread makes.
void expect_direct_assembly(const Communicator& comm, const DistMatrix& da, const DistMatrix& dp,
                            const DistPtap& galerkin) {
  const DistMatrix& c = galerkin.result();
  expect_same_blocks(c, assemble(comm, owned_row_block(c), c.row_partition, c.col_partition), "assemble()");
  const DistPtap threaded = tessera::testing::with_host_threads(3, [&] { return DistPtap(comm, da, dp); }, 2);
  expect_same_blocks(threaded.result(), c, "3 host threads");
  EXPECT_EQ(threaded.contribution_positions(threaded.result()), galerkin.contribution_positions(c));
}

// Where a rank sends and receives nothing and T uses its owned columns from the first on, C is T
// handed over, contribution i its entry i (dist/summed_rows.hpp: sum_is_own_rows). On one rank it
// is whenever every column of C holds an entry (then A*P uses every column).
void expect_t_handed_over_where_it_is_c(const Communicator& comm, const DistPtap& galerkin) {
  const DistMatrix& c = galerkin.result();
  if (galerkin.result_is_own_partial()) {
    std::vector<std::int64_t> entry_i(static_cast<std::size_t>(c.nnz()));
    std::iota(entry_i.begin(), entry_i.end(), 0);
    EXPECT_EQ(galerkin.contribution_positions(c), entry_i);
    EXPECT_EQ(c.nonlocal.nnz(), 0);
  }
  if (comm.size() > 1) return;
  std::vector<bool> used(static_cast<std::size_t>(c.local.cols), false);
  for (std::int32_t col : c.local.col_idx) used[static_cast<std::size_t>(col)] = true;
  if (std::find(used.begin(), used.end(), false) == used.end()) EXPECT_TRUE(galerkin.result_is_own_partial());
}

// C handed over (as an AMG level's first product hands it to the next level's A): the blocks
// the product kept, then refused to be read or taken again, and recomputes write into the
// taken C (bitwise a kept product's); a C of another partition on one rank is refused on all.
void check_result_hand_over(const Communicator& comm, const DistMatrix& da, const DistMatrix& dp,
                            const DistMatrix& da2, const DistMatrix& dp2) {
  DistPtap kept(comm, da, dp), handing(comm, da, dp);
  DistMatrix c = handing.take_result();
  expect_same_blocks(c, kept.result(), "handed over");
  EXPECT_THROW(handing.result(), Error) << "read after the hand-over";
  EXPECT_THROW(handing.take_result(), Error) << "handed over twice";
  EXPECT_THROW(handing.recompute(comm, da2, dp2), Error) << "recomputed into its own C after the hand-over";
  handing.recompute(comm, da2, dp2, c);
  kept.recompute(comm, da2, dp2);
  expect_same_blocks(c, kept.result(), "recomputed into the handed-over C");
  handing.recompute(comm, da, dp, c);
  expect_same_blocks(c, DistPtap(comm, da, dp).result(), "recomputed back to the first values");

  DistMatrix wrong = c;
  const int victim = comm.size() - 1;
  if (comm.rank() == victim) wrong.row_partition = RowPartition::balanced_rows(c.global_rows() + 8, comm.size());
  const std::string text = testing::input_error_on_every_rank(comm, [&] { handing.recompute(comm, da2, dp2, wrong); });
  EXPECT_NE(text.find("ptap recompute: rank " + std::to_string(victim) + "'s C holds"), std::string::npos) << text;
}

// A (n x n, on `rows`) and a rectangular P (n x nc, rows on `rows`, columns on `coarse`).
void check_ptap(const Communicator& comm, const Csr<double>& a, const Csr<double>& p, const RowPartition& rows,
                const RowPartition& coarse, std::uint64_t seed) {
  const DistMatrix da = testing::distribute(comm, a, rows, rows);
  const DistMatrix dp = testing::distribute(comm, p, rows, coarse);
  DistPtap galerkin(comm, da, dp);
  EXPECT_EQ(galerkin.result().row_partition, coarse);
  EXPECT_EQ(galerkin.result().col_partition, coarse);
  expect_ptap_matches(comm, galerkin.result(), a, p);
  expect_direct_assembly(comm, da, dp, galerkin);
  expect_t_handed_over_where_it_is_c(comm, galerkin);
  // P^T made elsewhere (the GPU backend's merge makes it): the same product, refreshes included.
  DistPtap given(comm, da, dp, host_local_spgemm, {}, ref::transpose(extended_block(dp)));
  expect_same_blocks(given.result(), galerkin.result(), "P^T given");

  const Csr<double> a2 = new_values(a, seed), p2 = new_values(p, seed + 1);
  const DistMatrix da2 = testing::distribute(comm, a2, rows, rows);
  const DistMatrix dp2 = testing::distribute(comm, p2, rows, coarse);
  expect_local_transpose(comm, galerkin, dp, false);
  expect_local_transpose(comm, given, dp, true);  // as an AMG level's first setup does
  galerkin.recompute(comm, da2, dp2);
  expect_local_transpose(comm, galerkin, dp2, true);
  given.recompute(comm, da2, dp2);  // P^T made anew from P, values included
  expect_same_blocks(given.result(), galerkin.result(), "P^T given, handed over, refreshed");
  expect_local_transpose(comm, given, dp2, false);
  const Csr<double> refreshed = gather(comm, galerkin.result());
  const Csr<double> fresh = gather(comm, DistPtap(comm, da2, dp2).result());
  if (comm.rank() == 0) EXPECT_EQ(refreshed, fresh);
  expect_ptap_matches(comm, galerkin.result(), a2, p2);
  given.recompute(comm, da, dp);  // through the source map the remaking recorded
  expect_local_transpose(comm, given, dp, false);
  galerkin.recompute(comm, da, dp);  // made anew after the hand-over above
  expect_same_blocks(given.result(), galerkin.result(), "refreshed back to the first values");
  expect_same_blocks(galerkin.result(), DistPtap(comm, da, dp).result(), "refreshed back, against a fresh product");
  check_shared_a_extended(comm, da, dp, da2, dp2);
  check_result_hand_over(comm, da, dp, da2, dp2);
}

TEST(DistPtap, RectangularProlongatorOnEveryPartition) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_rectangular_galerkin_case(
      comm, seed,
      [&](const Csr<double>& a, const Csr<double>& p, const RowPartition& fine, const RowPartition& coarse,
          std::uint64_t case_seed) {
        check_ptap(comm, a, p, fine, coarse, case_seed);
        check_ptap(comm, a, p, fine, RowPartition::balanced_rows(p.cols, comm.size()), case_seed + 1);
      });
}

TEST(DistPtap, AggregationProlongatorWithEmptyAndBlockDiagonalParts) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * 4 * comm.size() + 6, nc = (n + 3) / 4;
  const RowPartition rows = RowPartition::balanced_rows(n, comm.size());
  const RowPartition coarse = RowPartition::balanced_rows(nc, comm.size());
  // Piecewise-constant aggregates of 4 consecutive rows (the shape SA-AMG produces).
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) {
    r.push_back(i);
    c.push_back(i / 4);
    v.push_back(1.0 + 0.01 * static_cast<double>(i % 5));
  }
  const Csr<double> p = csr_from_triplets<double>(n, nc, r, c, v);
  const Csr<double> a = random_csr(RandomSpec{n, n, 0.05, 0.1, 0, false}, seed);
  check_ptap(comm, a, p, rows, coarse, seed + 1);
  check_ptap(comm, empty_rows_of_one_rank(a, rows), p, rows, coarse, seed + 2);
  check_ptap(comm, block_diagonal(a, rows, rows), p, rows, coarse, seed + 3);
}

// Operators that couple no two ranks: every rank's C is its T handed over (no exchange), on
// every rank count, through the whole of check_ptap (recomputes and hand-overs included).
TEST(DistPtap, RanksCoupledToNoOtherHandTheirOuterProductOver) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 32 * comm.size(), nc = n / 4;
  const RowPartition rows = RowPartition::balanced_rows(n, comm.size());
  const RowPartition coarse = RowPartition::balanced_rows(nc, comm.size());
  // Aggregates of 4 consecutive rows; tridiagonal A cut at every rank's rows and aggregates.
  std::vector<std::int64_t> pr, pc, ar, ac;
  std::vector<double> pv, av;
  const auto owner = [&](std::int64_t i) { return rows.owner(i); };
  for (std::int64_t i = 0; i < n; ++i) {
    pr.push_back(i), pc.push_back(i / 4), pv.push_back(1.0 + 0.01 * static_cast<double>(i % 5));
    for (std::int64_t j : {i - 1, i, i + 1})
      if (j >= 0 && j < n && owner(j) == owner(i)) ar.push_back(i), ac.push_back(j), av.push_back(i == j ? 2.5 : -1.0);
  }
  const Csr<double> p = csr_from_triplets<double>(n, nc, pr, pc, pv), a = csr_from_triplets<double>(n, n, ar, ac, av);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(coarse.owner(i / 4), owner(i)) << "an aggregate across ranks";
  const DistMatrix da = testing::distribute(comm, a, rows, rows), dp = testing::distribute(comm, p, rows, coarse);
  EXPECT_TRUE(DistPtap(comm, da, dp).result_is_own_partial()) << "rank " << comm.rank();
  check_ptap(comm, a, p, rows, coarse, seed + 1);
}

// A numeric refresh with operands of another pattern (here P with one more entry, on the last
// rank only) is refused on every rank with the same message, not a read past P's values; so is
// a P^T given for the symbolic phase that does not fit P (one row short, on the last rank only).
TEST(DistPtap, OperandsOfAnotherPatternThrowOnEveryRank) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * 3 * comm.size() + 5, nc = (n + 3) / 4;
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) r.push_back(i), c.push_back(i / 4), v.push_back(1.0);
  const Csr<double> p = csr_from_triplets<double>(n, nc, r, c, v);
  r.push_back(n - 1), c.push_back(0), v.push_back(0.5);  // the last row also joins aggregate 0
  const Csr<double> p_more = csr_from_triplets<double>(n, nc, r, c, v);
  const Csr<double> a = random_csr(RandomSpec{n, n, 0.05, 0.1, 0, false}, seed);
  const RowPartition rows = RowPartition::balanced_rows(n, comm.size());
  const RowPartition coarse = RowPartition::balanced_rows(nc, comm.size());
  const DistMatrix da = testing::distribute(comm, a, rows, rows);
  const DistMatrix dp = testing::distribute(comm, p, rows, coarse);
  const DistMatrix dp_more = testing::distribute(comm, p_more, rows, coarse);
  const auto expect_refused = [&](auto&& refresh, const std::string& expected) {
    const std::string text = testing::input_error_on_every_rank(comm, refresh);
    EXPECT_NE(text.find(expected), std::string::npos) << text;
  };
  DistPtap galerkin(comm, da, dp);
  expect_refused([&] { galerkin.recompute(comm, da, dp_more); }, "entries of P, the symbolic phase saw");
  DistSpgemm ap(comm, da, dp);
  expect_refused([&] { ap.recompute(comm, da, dp_more); }, "entries of B, the symbolic phase saw");
  // Still usable with the pattern it was built for.
  galerkin.recompute(comm, da, dp);
  expect_ptap_matches(comm, galerkin.result(), a, p);
  Csr<double> pt = ref::transpose(extended_block(dp));
  if (comm.rank() == comm.size() - 1) pt = Csr<double>::empty(pt.rows - 1, pt.cols);
  expect_refused([&] { DistPtap(comm, da, dp, host_local_spgemm, {}, std::move(pt)); }, "the given P^T is");
}

TEST(DistPtap, GeneratedPoissonWithEachRankGeneratingItsRows) {
  const Communicator comm;
  for (const char* spec_text : {"poisson3d:6", "elasticity3d:3"}) {
    SCOPED_TRACE(spec_text);
    const gen::ProblemSpec spec = gen::parse_spec(spec_text);
    const std::int64_t n = gen::num_rows(spec), nc = (n + 7) / 8;
    const RowPartition by_rows = RowPartition::balanced_rows(n, comm.size());
    const int me = comm.rank();
    const RowBlock first = gen::generate_rows(spec, by_rows.begin(me), by_rows.end(me));
    std::vector<std::int64_t> lengths;
    for (std::int64_t r = 0; r < first.local_rows(); ++r) lengths.push_back(first.row_ptr[r + 1] - first.row_ptr[r]);
    const RowPartition rows = RowPartition::balanced_nnz(comm, by_rows, lengths);
    const DistMatrix da = assemble(comm, gen::generate_rows(spec, rows.begin(me), rows.end(me)), rows);
    // Aggregates of 8 consecutive rows: P's columns are partitioned like A's tile-rows.
    RowBlock pb;
    pb.global_rows = n;
    pb.global_cols = nc;
    pb.row_begin = rows.begin(me);
    pb.row_end = rows.end(me);
    for (std::int64_t i = pb.row_begin; i < pb.row_end; ++i) {
      pb.col.push_back(i / 8);
      pb.values.push_back(1.0);
      pb.row_ptr.push_back(pb.nnz());
    }
    const RowPartition coarse = RowPartition::balanced_rows(nc, comm.size());
    const DistMatrix dp = assemble(comm, pb, rows, coarse);
    const DistMatrix c = ptap(comm, da, dp);
    const DistMatrix a2 = spgemm(comm, da, da);
    const Csr<double> a = gen::generate(spec);
    const Csr<double> p = gather(comm, dp);
    expect_ptap_matches(comm, c, a, p);
    expect_spgemm_matches(comm, a2, a, a);
  }
}

}  // namespace
}  // namespace tessera::dist
