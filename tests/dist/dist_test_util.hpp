#pragma once
// Helpers shared by the distributed tests: one seed for all ranks, the partitions every test
// runs over (balanced by rows, uneven with an empty rank, balanced by nonzeros), distribution
// of a replicated global matrix, and the comparison of a gathered result with the serial
// reference (identical pattern; values within a rounding bound, or exact for integer data).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/partition.hpp"
#include "local/core/error.hpp"
#include "local/formats/row_block.hpp"
#include "local/reference/kernels.hpp"
#include "support/random_matrix.hpp"

namespace tessera::dist::testing {

/// A fresh seed drawn on rank 0 and shared, so every rank builds the same global inputs.
inline std::uint64_t shared_seed(const Communicator& comm) {
  // The sign bit cleared (not shifted out), so that TESSERA_TEST_SEED=<printed seed> replays it.
  std::int64_t seed = comm.rank() == 0 ? static_cast<std::int64_t>(tessera::testing::fresh_seed() & INT64_MAX) : 0;
  return static_cast<std::uint64_t>(comm.allreduce(seed, ReduceOp::max));
}

struct NamedPartition {
  std::string name;
  RowPartition partition;
};

/// Uneven tile-aligned cuts from `seed`; with 2+ ranks one rank owns no rows.
inline RowPartition uneven_partition(const Communicator& comm, std::int64_t n, std::uint64_t seed) {
  const int ranks = comm.size();
  std::mt19937_64 rng(seed);
  const std::int64_t tiles = (n + 7) / 8;
  std::vector<std::int64_t> offsets{0};
  for (int r = 1; r < ranks; ++r) offsets.push_back(std::min(n, 8 * static_cast<std::int64_t>(rng() % (tiles + 1))));
  offsets.push_back(n);
  std::sort(offsets.begin(), offsets.end());
  if (ranks >= 3) offsets[2] = offsets[1];  // rank 1 owns nothing
  if (ranks == 2) offsets[1] = 0;           // rank 0 owns nothing
  return RowPartition::from_offsets(comm, n, offsets);
}

inline std::vector<std::int64_t> row_lengths(const Csr<double>& a, std::int64_t begin, std::int64_t end) {
  std::vector<std::int64_t> out;
  for (std::int64_t r = begin; r < end; ++r) out.push_back(a.row_length(r));
  return out;
}

/// The partitions of a's rows every test runs over.
inline std::vector<NamedPartition> test_partitions(const Communicator& comm, const Csr<double>& a, std::uint64_t seed) {
  const RowPartition by_rows = RowPartition::balanced_rows(a.rows, comm.size());
  const int me = comm.rank();
  return {{"balanced rows", by_rows},
          {"uneven with an empty rank", uneven_partition(comm, a.rows, seed)},
          {"balanced nnz", RowPartition::balanced_nnz(comm, by_rows, row_lengths(a, by_rows.begin(me), by_rows.end(me)))}};
}

/// The entries of `full` inside each rank's diagonal block under `p`: no rank has a ghost
/// column (the exchange-free case every product must handle).
inline Csr<double> block_diagonal_part(const Csr<double>& full, const RowPartition& p) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < full.rows; ++i)
    for (std::int64_t k = full.row_ptr[i]; k < full.row_ptr[i + 1]; ++k)
      if (p.owner(i) == p.owner(full.col_idx[k])) {
        r.push_back(i);
        c.push_back(full.col_idx[k]);
        v.push_back(full.values[k]);
      }
  return csr_from_triplets<double>(full.rows, full.cols, r, c, v);
}

/// The rectangular product case of every SpGEMM implementation: C = A B with A 133 x 58 and
/// B 58 x 91, so rows, inner and outer dimensions each cut mid-tile; A's rows on each test
/// partition, the inner dimension uneven, the outer one balanced.
/// check(a, b, row_partition, inner, outer, seed), inside SCOPED_TRACE(partition name).
template <class Check>
void for_each_rectangular_product_case(const Communicator& comm, std::uint64_t seed, Check&& check) {
  const Csr<double> a = tessera::testing::random_csr(tessera::testing::RandomSpec{133, 58, 0.08, 0.1, 0.1, false}, seed);
  const Csr<double> b = tessera::testing::random_csr(tessera::testing::RandomSpec{58, 91, 0.08, 0.1, 0.1, true}, seed + 1);
  const RowPartition inner = uneven_partition(comm, 58, seed + 2);
  const RowPartition outer = RowPartition::balanced_rows(91, comm.size());
  for (const auto& part : test_partitions(comm, a, seed + 3)) {
    SCOPED_TRACE(part.name);
    check(a, b, part.partition, inner, outer, seed + 4);
  }
}

/// The rectangular Galerkin cases of every PtAP implementation: random square A and P from 1 ->
/// 1 up to 203 -> 64 rows, A on each test partition, P's columns on an uneven partition.
/// check(a, p, fine_partition, coarse_partition, seed), inside SCOPED_TRACE(case name).
template <class Check>
void for_each_rectangular_galerkin_case(const Communicator& comm, std::uint64_t seed, Check&& check) {
  std::uint64_t i = 0;
  for (auto shape : {std::pair<std::int64_t, std::int64_t>{1, 1}, {29, 7}, {150, 41}, {203, 64}}) {
    const Csr<double> a = tessera::testing::random_csr(tessera::testing::RandomSpec{shape.first, shape.first, 0.06, 0.1, 0.1, false}, seed + i++);
    const Csr<double> p = tessera::testing::random_csr(tessera::testing::RandomSpec{shape.first, shape.second, 0.1, 0.1, 0.1, false}, seed + i++);
    const RowPartition coarse = uneven_partition(comm, shape.second, seed + i++);
    for (const auto& part : test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(part.name + ", " + std::to_string(shape.first) + " -> " + std::to_string(shape.second));
      check(a, p, part.partition, coarse, seed + i++);
    }
  }
}

/// Each rank takes its rows of a replicated global matrix.
inline DistMatrix distribute(const Communicator& comm, const Csr<double>& a, const RowPartition& rows,
                             const RowPartition& cols) {
  const int me = comm.rank();
  return assemble(comm, row_block(a, rows.begin(me), rows.end(me)), rows, cols);
}

inline Csr<double> absolute(Csr<double> a) {
  for (double& v : a.values) v = std::fabs(v);
  return a;
}

inline Csr<double> ones(Csr<double> a) {
  for (double& v : a.values) v = 1.0;
  return a;
}

/// Checks a gathered result (rank 0 only) against the serial reference. `terms[k]` is the
/// number of products summed into entry k and `magnitude[k]` the sum of their absolute values:
/// two summation orders of K products differ by at most 2*gamma_{K+2}*magnitude
/// (gamma_m = m*eps/(1-m*eps); +2 for the rounding of the products themselves).
inline void expect_matches_reference(const Communicator& comm, const Csr<double>& got, const Csr<double>& want,
                                     const Csr<double>& terms, const Csr<double>& magnitude) {
  if (comm.rank() != 0) return;
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  ASSERT_EQ(got.row_ptr, want.row_ptr) << "row pattern differs";
  ASSERT_EQ(got.col_idx, want.col_idx) << "column pattern differs";
  ASSERT_EQ(terms.col_idx, want.col_idx);
  const double eps = std::numeric_limits<double>::epsilon() / 2;
  for (std::size_t k = 0; k < want.values.size(); ++k) {
    const double m = terms.values[k] + 2, gamma = m * eps / (1 - m * eps);
    ASSERT_LE(std::fabs(got.values[k] - want.values[k]), 2 * gamma * magnitude.values[k])
        << "entry " << k << ": " << got.values[k] << " vs " << want.values[k];
  }
}

/// Agreement across ranks: the same value everywhere.
inline bool same_on_every_rank(const Communicator& comm, std::int64_t value) {
  return comm.allreduce(value, ReduceOp::min) == comm.allreduce(value, ReduceOp::max);
}

/// Runs `make`, which must throw InputError on every rank (a failure is recorded on each rank
/// that did not), and returns its text after checking that every rank holds rank 0's text.
template <class Make>
std::string input_error_on_every_rank(const Communicator& comm, Make&& make) {
  std::string text;
  try {
    make();
    ADD_FAILURE() << "no InputError on rank " << comm.rank();
  } catch (const InputError& e) {
    text = e.what();
  }
  EXPECT_EQ(text, comm.broadcast(text, 0)) << "rank " << comm.rank() << " disagrees with rank 0";
  return text;
}

}  // namespace tessera::dist::testing
