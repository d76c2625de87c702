// Direct tests of assemble_compact (a rank-local compact product split into owned and ghost
// blocks, their [owned | ghost] extended block, and every bad-input path), of assemble_blocks
// (blocks already split, PETSc's way, with ghosts that no entry uses among them), and of the
// row-order accessors copy_values_in_row_order, row_order_offset and append_row_in_row_order.
// The reference is the global matrix built serially: a rank's rows read off it are its entries
// in row order (global column order), and each entry is owned or a ghost by its column alone.
#include <algorithm>
#include <climits>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dist_test_util.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"
#include "support/matrix_files.hpp"

namespace tessera::dist {
namespace {

using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

/// A rank's rows as a rank-local product hands them over: columns index `global_of`.
struct CompactRows {
  Csr<double> rows;
  std::vector<std::int64_t> global_of;
};

/// Rows [begin, end) of `a` in compact form. global_of lists the columns they use and, each with
/// probability `spare`, columns no entry uses (owned or not: those must not become ghosts).
CompactRows compact_rows(const Csr<double>& a, std::int64_t begin, std::int64_t end, double spare,
                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution unused_but_listed(spare);
  std::vector<char> listed(static_cast<std::size_t>(a.cols), 0);
  for (std::int64_t k = a.row_ptr[begin]; k < a.row_ptr[end]; ++k) listed[a.col_idx[k]] = 1;
  for (char& l : listed) l |= unused_but_listed(rng);
  CompactRows out;
  std::vector<std::int32_t> compact_of(listed.size(), -1);
  for (std::size_t c = 0; c < listed.size(); ++c)
    if (listed[c]) {
      compact_of[c] = static_cast<std::int32_t>(out.global_of.size());
      out.global_of.push_back(static_cast<std::int64_t>(c));
    }
  out.rows = Csr<double>::empty(end - begin, static_cast<std::int64_t>(out.global_of.size()));
  for (std::int64_t i = begin; i < end; ++i) {
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      out.rows.col_idx.push_back(compact_of[a.col_idx[k]]);
      out.rows.values.push_back(a.values[k]);
    }
    out.rows.row_ptr[i - begin + 1] = out.rows.nnz();
  }
  return out;
}

/// What rank `me` must hold, decided entry by entry from the global matrix.
struct Expected {
  Csr<double> local, nonlocal, extended;
  std::vector<std::int64_t> ghost_cols;
  std::vector<std::int64_t> row_offsets;  // row_order_offset of each owned row
  std::vector<std::int64_t> cols_in_row_order;
  std::vector<double> values_in_row_order;
};

void push_entry(Csr<double>& m, std::int64_t col, double value) {
  m.col_idx.push_back(static_cast<std::int32_t>(col));
  m.values.push_back(value);
}

Expected expected_on_rank(const Csr<double>& a, const RowPartition& rows, const RowPartition& cols, int me) {
  const std::int64_t rb = rows.begin(me), re = rows.end(me), cb = cols.begin(me), ce = cols.end(me);
  const auto owned = [&](std::int64_t c) { return c >= cb && c < ce; };
  Expected e;
  for (std::int64_t k = a.row_ptr[rb]; k < a.row_ptr[re]; ++k)
    if (!owned(a.col_idx[k])) e.ghost_cols.push_back(a.col_idx[k]);
  std::sort(e.ghost_cols.begin(), e.ghost_cols.end());
  e.ghost_cols.erase(std::unique(e.ghost_cols.begin(), e.ghost_cols.end()), e.ghost_cols.end());
  const auto ghosts = static_cast<std::int64_t>(e.ghost_cols.size());
  e.local = Csr<double>::empty(re - rb, ce - cb);
  e.nonlocal = Csr<double>::empty(re - rb, ghosts);
  e.extended = Csr<double>::empty(re - rb, ce - cb + ghosts);
  for (std::int64_t i = rb; i < re; ++i) {
    e.row_offsets.push_back(a.row_ptr[i] - a.row_ptr[rb]);
    std::vector<std::pair<std::int64_t, double>> ghost_entries;  // extended: owned first, then ghosts
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t c = a.col_idx[k];
      e.cols_in_row_order.push_back(c);
      e.values_in_row_order.push_back(a.values[k]);
      if (owned(c)) {
        push_entry(e.local, c - cb, a.values[k]);
        push_entry(e.extended, c - cb, a.values[k]);
      } else {
        const auto g = std::lower_bound(e.ghost_cols.begin(), e.ghost_cols.end(), c) - e.ghost_cols.begin();
        push_entry(e.nonlocal, g, a.values[k]);
        ghost_entries.emplace_back(ce - cb + g, a.values[k]);
      }
    }
    for (const auto& [col, value] : ghost_entries) push_entry(e.extended, col, value);
    e.local.row_ptr[i - rb + 1] = e.local.nnz();
    e.nonlocal.row_ptr[i - rb + 1] = e.nonlocal.nnz();
    e.extended.row_ptr[i - rb + 1] = e.extended.nnz();
  }
  return e;
}

void expect_same_csr(const Csr<double>& got, const Csr<double>& want, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col_idx, want.col_idx);
  EXPECT_EQ(got.values, want.values);  // moved, never computed: bitwise equal
}

/// The halo built at assembly brings x[ghost_cols] in ghost order (x[c] = c + 0.5). Every rank
/// takes part in the exchange whatever it finds (no early return: that would strand the others).
void expect_halo_brings_ghosts(const Communicator& comm, const DistMatrix& d) {
  std::vector<double> owned_x(static_cast<std::size_t>(d.col_partition.size(d.rank)));
  for (std::size_t j = 0; j < owned_x.size(); ++j) owned_x[j] = static_cast<double>(d.col_begin() + j) + 0.5;
  std::vector<double> send(static_cast<std::size_t>(d.halo.num_sent()));
  std::vector<double> ghosts(static_cast<std::size_t>(d.halo.num_ghosts()));
  d.halo.pack(owned_x.data(), 1, send.data());
  exchange(comm, d.halo.pattern, sizeof(double), send.data(), ghosts.data());
  EXPECT_EQ(ghosts.size(), d.ghost_cols.size());
  for (std::size_t g = 0; g < std::min(ghosts.size(), d.ghost_cols.size()); ++g)
    EXPECT_EQ(ghosts[g], static_cast<double>(d.ghost_cols[g]) + 0.5) << "ghost " << g;
}

/// copy_values_in_row_order, row_order_offset and append_row_in_row_order against the rows read
/// off the global matrix. Appends keep what the vectors held; a null vector is skipped.
void expect_row_order(const DistMatrix& d, const Expected& want) {
  const auto nnz = static_cast<std::size_t>(d.nnz());
  ASSERT_EQ(nnz, want.values_in_row_order.size());
  const double guard = 1e300;  // copy_values_in_row_order writes exactly nnz values
  std::vector<double> copied(nnz + 2, guard);
  copy_values_in_row_order(d, copied.data());
  EXPECT_EQ(std::vector<double>(copied.begin(), copied.begin() + nnz), want.values_in_row_order);
  EXPECT_EQ(copied[nnz], guard);
  EXPECT_EQ(copied[nnz + 1], guard);
  EXPECT_EQ(values_in_row_order(d), want.values_in_row_order);

  std::vector<std::int64_t> cols{-1}, cols_only{-2};
  std::vector<double> values{-0.25}, values_only{-0.5};
  for (std::int64_t r = 0; r < d.owned_rows(); ++r) {
    EXPECT_EQ(row_order_offset(d, r), want.row_offsets[r]) << "row " << r;
    EXPECT_EQ(static_cast<std::int64_t>(cols.size()) - 1, row_order_offset(d, r)) << "row " << r;
    append_row_in_row_order(d, r, &cols, &values);
    append_row_in_row_order(d, r, &cols_only, nullptr);
    append_row_in_row_order(d, r, nullptr, &values_only);
    append_row_in_row_order(d, r, nullptr, nullptr);
  }
  const auto with_prefix = [](auto prefix, const auto& rest) {
    std::vector<decltype(prefix)> v{prefix};
    v.insert(v.end(), rest.begin(), rest.end());
    return v;
  };
  EXPECT_EQ(cols, with_prefix(std::int64_t{-1}, want.cols_in_row_order));
  EXPECT_EQ(cols_only, with_prefix(std::int64_t{-2}, want.cols_in_row_order));
  EXPECT_EQ(values, with_prefix(-0.25, want.values_in_row_order));
  EXPECT_EQ(values_only, with_prefix(-0.5, want.values_in_row_order));
}

/// assemble_blocks of `d`'s own blocks, with ghost columns that no entry uses added to the list
/// (each other column with probability `spare`, as PETSc's garray keeps them after MatZeroRows),
/// must give `d` back: those dropped, the non-local columns renumbered, the same halo.
void check_blocks_round_trip(const Communicator& comm, const DistMatrix& d, double spare, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution listed_unused(spare);
  const std::int64_t cb = d.col_begin(), ce = cb + d.local.cols;
  std::vector<std::int64_t> ghosts;
  std::vector<std::int32_t> listed_at(d.ghost_cols.size());
  std::size_t g = 0;  // next used ghost
  for (std::int64_t c = 0; c < d.global_cols(); ++c) {
    if (c >= cb && c < ce) continue;
    const bool used = g < d.ghost_cols.size() && d.ghost_cols[g] == c;
    if (used) listed_at[g++] = static_cast<std::int32_t>(ghosts.size());
    if (used || listed_unused(rng)) ghosts.push_back(c);
  }
  Csr<double> nonlocal = d.nonlocal;
  for (std::int32_t& c : nonlocal.col_idx) c = listed_at[static_cast<std::size_t>(c)];
  nonlocal.cols = static_cast<std::int64_t>(ghosts.size());
  const DistMatrix b = assemble_blocks(comm, d.local, std::move(nonlocal), std::move(ghosts), d.row_partition,
                                       d.col_partition);
  EXPECT_EQ(b.rank, d.rank);
  EXPECT_EQ(b.row_partition, d.row_partition);
  EXPECT_EQ(b.col_partition, d.col_partition);
  EXPECT_EQ(b.ghost_cols, d.ghost_cols);
  expect_same_csr(b.local, d.local, "assemble_blocks: local block");
  expect_same_csr(b.nonlocal, d.nonlocal, "assemble_blocks: non-local block");
  EXPECT_EQ(b.halo.send_local, d.halo.send_local);
  expect_halo_brings_ghosts(comm, b);
}

/// assemble_compact of this rank's rows of `a` (listing unused columns with probability
/// `spare`) against the serial split, the extended block, the halo, the row-order accessors and
/// assemble() of the same rows.
void check_assembly(const Communicator& comm, const Csr<double>& a, const RowPartition& rows,
                    const RowPartition& cols, double spare, std::uint64_t seed) {
  const int me = comm.rank();
  CompactRows in = compact_rows(a, rows.begin(me), rows.end(me), spare, seed);
  const CompactRows copy = in;
  const std::int32_t* storage = in.rows.col_idx.data();
  const DistMatrix d = assemble_compact(comm, std::move(in.rows), in.global_of, rows, cols);
  const Expected want = expected_on_rank(a, rows, cols, me);
  EXPECT_EQ(d.rank, me);
  EXPECT_EQ(d.row_partition, rows);
  EXPECT_EQ(d.col_partition, cols);
  EXPECT_EQ(d.ghost_cols, want.ghost_cols);
  expect_same_csr(d.local, want.local, "local block");
  expect_same_csr(d.nonlocal, want.nonlocal, "non-local block");
  expect_same_csr(extended_block(d), want.extended, "extended block");
  if (copy.rows.nnz() > 0) EXPECT_EQ(d.local.col_idx.data(), storage) << "rows' storage not reused";
  expect_halo_brings_ghosts(comm, d);
  expect_row_order(d, want);

  // assemble() of the same rows agrees.
  const DistMatrix direct = testing::distribute(comm, a, rows, cols);
  EXPECT_EQ(direct.ghost_cols, d.ghost_cols);
  expect_same_csr(direct.local, d.local, "local block vs assemble()");
  expect_same_csr(direct.nonlocal, d.nonlocal, "non-local block vs assemble()");
  check_blocks_round_trip(comm, direct, spare, seed + 1);
}

/// Even cuts anywhere in the rows (Alignment::any: PETSc's ownership ranges).
RowPartition even_unaligned_partition(const Communicator& comm, std::int64_t n) {
  std::vector<std::int64_t> offsets;
  for (int r = 0; r <= comm.size(); ++r) offsets.push_back(n * r / comm.size());
  return RowPartition::from_offsets(comm, n, offsets, Alignment::any);
}

/// check_assembly over every test partition of a's rows (plus even unaligned cuts); the column
/// partition is the row partition for square matrices, an uneven one otherwise.
void check_on_every_partition(const Communicator& comm, const Csr<double>& a, std::uint64_t seed) {
  std::vector<testing::NamedPartition> parts = testing::test_partitions(comm, a, seed);
  parts.push_back({"even, off the tile grid", even_unaligned_partition(comm, a.rows)});
  const RowPartition rect_cols = testing::uneven_partition(comm, a.cols, seed + 1);
  std::uint64_t i = 2;
  for (const auto& part : parts) {
    SCOPED_TRACE(part.name);
    const RowPartition& cols = a.rows == a.cols ? part.partition : rect_cols;
    for (double spare : {0.0, 0.1}) {
      SCOPED_TRACE("spare columns " + std::to_string(spare));
      check_assembly(comm, a, part.partition, cols, spare, seed + i++);
    }
  }
}

TEST(AssembleCompact, MatchesTheSerialSplitOnRandomMatrices) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uint64_t i = 0;
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {1, 1}, {7, 7}, {37, 37}, {133, 58},
                            {58, 91}, {203, 203}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    const bool dense_row = rows > 100;
    const Csr<double> a = random_csr(RandomSpec{rows, cols, 0.08, 0.15, 0.1, dense_row}, seed + 100 * i++);
    check_on_every_partition(comm, a, seed + 100 * i++);
  }
}

/// Entries of `a` whose row is owned by `victim` and whose column is not, removed.
Csr<double> without_ghosts_on(const Csr<double>& a, const RowPartition& p, int victim) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (p.owner(i) != victim || p.owner(a.col_idx[k]) == victim) {
        r.push_back(i);
        c.push_back(a.col_idx[k]);
        v.push_back(a.values[k]);
      }
  return csr_from_triplets<double>(a.rows, a.cols, r, c, v);
}

TEST(AssembleCompact, RanksWithoutGhostColumns) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_csr(RandomSpec{101, 101, 0.1, 0.1, 0.0, false}, seed);
  std::uint64_t i = 1;
  for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
    SCOPED_TRACE(part.name);
    const RowPartition& p = part.partition;
    {
      SCOPED_TRACE("no rank has ghosts");
      check_assembly(comm, testing::block_diagonal_part(a, p), p, p, 0.1, seed + i++);
    }
    const int victim = comm.size() - 1;
    SCOPED_TRACE("only rank " + std::to_string(victim) + " has no ghosts");
    const Csr<double> one_without = without_ghosts_on(a, p, victim);
    ASSERT_TRUE(expected_on_rank(one_without, p, p, victim).ghost_cols.empty());
    check_assembly(comm, one_without, p, p, 0.1, seed + i++);
  }
}

TEST(AssembleCompact, StructuredAndRealMatrices) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uint64_t i = 0;
  for (const char* spec : {"poisson3d:5", "poisson3d27:5", "elasticity3d:3"}) {
    SCOPED_TRACE(spec);
    check_on_every_partition(comm, gen::generate(gen::parse_spec(spec)), seed + 100 * i++);
  }
  int real = 0;
  for (const auto& file : tessera::testing::manifest()) {
    if (file.name != "bcsstk02" && file.name != "1138_bus") continue;  // SPD, symmetric storage
    SCOPED_TRACE(file.name);
    check_on_every_partition(comm, io::read_matrix_market(file.path), seed + 100 * i++);
    ++real;
  }
  EXPECT_EQ(real, 2) << "bcsstk02 / 1138_bus not found in " << tessera::testing::matrix_dir();
}

// ---- Bad input: the same InputError on every rank, naming the failing rank ----

/// A global matrix whose every row holds three entries, on 8 * ranks + 5 rows (the last rank
/// owns at least 8 rows, so its rows 0-2 exist for the broken-row cases).
Csr<double> three_per_row(std::int64_t n) {
  std::vector<std::int64_t> r, c;
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j : {i, (i + 3) % n, (i + n / 2) % n}) {
      r.push_back(i);
      c.push_back(j);
      v.push_back(static_cast<double>(i + j + 1));
    }
  return csr_from_triplets<double>(n, n, r, c, v);
}

struct BadInput {
  std::string name;
  std::function<void(CompactRows&)> spoil;
  std::function<std::string(const CompactRows&)> expected;  // the message, from the valid input
};

/// Every malformed block compact_block_error refuses (global_cols: the column partition's size).
/// The sizes message names the block's sizes as spoiled, from the valid ones plus the change.
std::vector<BadInput> bad_inputs(std::int64_t global_cols) {
  using tessera::detail::concat;
  const auto sizes = [](std::int64_t more_rows, std::int64_t more_cols, std::int64_t more_entries) {
    return [=](const CompactRows& in) {
      return concat("compact block of ", in.rows.rows + more_rows, "x", in.rows.cols + more_cols, " (",
                    in.rows.nnz() + more_entries, " entries) for ", in.rows.rows, " rows and ", in.global_of.size(),
                    " columns");
    };
  };
  const auto map_at = [global_cols](std::size_t at) {
    const std::string text = concat("compact column map is not increasing within [0, ", global_cols, ") at ", at);
    return [text](const CompactRows&) { return text; };
  };
  const auto fixed = [](std::string text) { return [text](const CompactRows&) { return text; }; };
  return {
      {"one row too many", [](CompactRows& in) { in.rows.row_ptr.push_back(in.rows.nnz()), ++in.rows.rows; },
       sizes(1, 0, 0)},
      {"fewer columns than the map", [](CompactRows& in) { --in.rows.cols; }, sizes(0, -1, 0)},
      {"row_ptr one entry short", [](CompactRows& in) { in.rows.row_ptr.pop_back(); }, sizes(0, 0, 0)},
      {"row_ptr not starting at 0", [](CompactRows& in) { in.rows.row_ptr[0] = 1; }, sizes(0, 0, 0)},
      {"an entry past row_ptr's end", [](CompactRows& in) { in.rows.col_idx.push_back(0), in.rows.values.push_back(1); },
       sizes(0, 0, 1)},
      {"a value missing", [](CompactRows& in) { in.rows.values.pop_back(); }, sizes(0, 0, 0)},
      {"map repeats a column", [](CompactRows& in) { in.global_of[1] = in.global_of[0]; }, map_at(1)},
      {"map entry negative", [](CompactRows& in) { in.global_of[0] = -1; }, map_at(0)},
      {"map entry past the global columns", [](CompactRows& in) { in.global_of[2] = in.global_of[1] + (1 << 20); },
       map_at(2)},
      {"row_ptr decreasing", [](CompactRows& in) { in.rows.row_ptr[2] = in.rows.row_ptr[1] - 1; },
       fixed("row_ptr is broken at row 1")},
      {"row_ptr past the entries", [](CompactRows& in) { in.rows.row_ptr[1] = in.rows.nnz() + 1; },
       fixed("row_ptr is broken at row 0")},
      {"negative compact column", [](CompactRows& in) { in.rows.col_idx[0] = -1; },
       fixed("row 0 has compact column -1")},
      {"compact column past the map",
       [](CompactRows& in) { in.rows.col_idx[in.rows.row_ptr[3] - 1] = static_cast<std::int32_t>(in.global_of.size()); },
       [](const CompactRows& in) { return concat("row 2 has compact column ", in.global_of.size()); }},
      {"repeated column", [](CompactRows& in) { in.rows.col_idx[4] = in.rows.col_idx[3]; },
       [](const CompactRows& in) {
         return concat("row 1 columns are not strictly increasing at compact column ", in.rows.col_idx[3]);
       }},
      {"decreasing columns", [](CompactRows& in) { std::swap(in.rows.col_idx[0], in.rows.col_idx[1]); },
       [](const CompactRows& in) {
         return concat("row 0 columns are not strictly increasing at compact column ", in.rows.col_idx[0]);
       }},
  };
}

TEST(AssembleCompactInput, EachBadBlockThrowsTheSameErrorOnEveryRank) {
  const Communicator comm;
  const int me = comm.rank(), victim = comm.size() - 1;
  const std::int64_t n = 8 * comm.size() + 5;
  const Csr<double> a = three_per_row(n);
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  ASSERT_GE(p.size(victim), 8);
  for (const BadInput& bad : bad_inputs(n)) {
    SCOPED_TRACE(bad.name);
    CompactRows in = compact_rows(a, p.begin(me), p.end(me), 0.0, 1);
    const std::string want = bad.expected(in);
    if (me == victim) bad.spoil(in);
    const std::string text = testing::input_error_on_every_rank(
        comm, [&] { assemble_compact(comm, std::move(in.rows), in.global_of, p, p); });
    EXPECT_EQ(text, "assemble: rank " + std::to_string(victim) + ": " + comm.broadcast(want, victim));
  }
  // Two ranks failing: every rank reports the lower one. Then valid input still assembles.
  if (comm.size() >= 2) {
    CompactRows in = compact_rows(a, p.begin(me), p.end(me), 0.0, 1);
    if (me == 0 || me == victim) in.rows.col_idx[0] = -1;
    const std::string text = testing::input_error_on_every_rank(
        comm, [&] { assemble_compact(comm, std::move(in.rows), in.global_of, p, p); });
    EXPECT_EQ(text, "assemble: rank 0: row 0 has compact column -1");
  }
  check_assembly(comm, a, p, p, 0.0, 2);
}

/// One rank's blocks spoiled for assemble_blocks, and the message it must give.
struct BadBlocks {
  std::string name;
  std::function<void(Csr<double>& local, Csr<double>& nonlocal, std::vector<std::int64_t>& ghosts)> spoil;
};

TEST(AssembleBlocksInput, EachBadBlockThrowsTheSameErrorOnEveryRank) {
  using tessera::detail::concat;
  const Communicator comm;
  const int me = comm.rank(), victim = comm.size() - 1;
  const std::int64_t n = 8 * comm.size() + 5;
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const DistMatrix d = testing::distribute(comm, three_per_row(n), p, p);
  const std::int64_t cb = p.begin(victim), ce = p.end(victim);
  const auto ghost_error = [&](std::size_t g, std::int64_t column) {
    return concat("ghost columns must increase and lie in [0, ", n, ") outside the owned columns [", cb, ", ", ce,
                  "); ghost ", g, " is global column ", column);
  };
  // On one rank every column is owned: there are no ghosts to spoil.
  const bool has_ghosts =
      comm.allreduce(me == victim ? std::int64_t(d.ghost_cols.size()) : std::int64_t{0}, ReduceOp::max) >= 2;
  std::vector<BadBlocks> cases = {
      {"local block one column wide too many", [](Csr<double>& l, Csr<double>&, std::vector<std::int64_t>&) { ++l.cols; }},
      {"a local column past the owned ones",
       [](Csr<double>& l, Csr<double>&, std::vector<std::int64_t>&) { l.col_idx[l.row_ptr[1] - 1] = static_cast<std::int32_t>(l.cols); }},
  };
  if (has_ghosts) {
    cases.push_back({"ghosts out of order", [](Csr<double>&, Csr<double>&, std::vector<std::int64_t>& g) { std::swap(g[0], g[1]); }});
    cases.push_back({"a ghost among the owned columns", [&](Csr<double>&, Csr<double>&, std::vector<std::int64_t>& g) { g[0] = cb; }});
    cases.push_back({"a ghost past the matrix", [&](Csr<double>&, Csr<double>&, std::vector<std::int64_t>& g) { g.back() = n; }});
    cases.push_back({"a non-local column past the ghosts",
                     [](Csr<double>&, Csr<double>& nl, std::vector<std::int64_t>& g) { nl.col_idx[0] = static_cast<std::int32_t>(g.size()); }});
  }
  for (const BadBlocks& bad : cases) {
    SCOPED_TRACE(bad.name);
    Csr<double> local = d.local, nonlocal = d.nonlocal;
    std::vector<std::int64_t> ghosts = d.ghost_cols;
    std::string want;  // the victim's message, found from its spoiled blocks
    if (me == victim) {
      bad.spoil(local, nonlocal, ghosts);
      if (local.cols != ce - cb)
        want = concat("blocks of ", local.rows, "x", local.cols, " and ", nonlocal.rows, "x", nonlocal.cols, " for ",
                      local.rows, " owned rows, ", ce - cb, " owned columns and ", ghosts.size(), " ghost columns");
      for (std::size_t g = 0; g < ghosts.size() && want.empty(); ++g)
        if (ghosts[g] >= n || (ghosts[g] >= cb && ghosts[g] < ce) || (g > 0 && ghosts[g] <= ghosts[g - 1]))
          want = ghost_error(g, ghosts[g]);
      for (const auto& [block, what] : {std::pair{&local, "the local block"}, {&nonlocal, "the non-local block"}})
        if (want.empty()) try {
            validate(*block, what);
          } catch (const InputError& e) {
            want = e.what();
          }
      EXPECT_FALSE(want.empty()) << "the spoiled blocks are valid";
    }
    const std::string text = testing::input_error_on_every_rank(comm, [&] {
      assemble_blocks(comm, std::move(local), std::move(nonlocal), std::move(ghosts), p, p);
    });
    EXPECT_EQ(text, "assemble: rank " + std::to_string(victim) + ": " + comm.broadcast(want, victim));
  }
}

// check_rank_counts is rank-local: it throws on every rank because partitions are replicated.
TEST(AssembleCompactInput, PartitionOverAnotherRankCount) {
  const Communicator comm;
  const int ranks = comm.size();
  const std::int64_t n = 8 * ranks + 5;
  const RowPartition good = RowPartition::balanced_rows(n, ranks), other = RowPartition::balanced_rows(n, ranks + 1);
  const CompactRows in = compact_rows(three_per_row(n), good.begin(comm.rank()), good.end(comm.rank()), 0.0, 1);
  const auto text = [&](int row_ranks, int col_ranks) {
    return tessera::detail::concat("assemble: partitions over ", row_ranks, " and ", col_ranks,
                                   " ranks on a communicator of ", ranks);
  };
  EXPECT_EQ(testing::input_error_on_every_rank(
                comm, [&] { assemble_compact(comm, in.rows, in.global_of, other, good); }),
            text(ranks + 1, ranks));
  EXPECT_EQ(testing::input_error_on_every_rank(
                comm, [&] { assemble_compact(comm, in.rows, in.global_of, good, other); }),
            text(ranks, ranks + 1));
}

/// Rank 0 owns `owned` columns and (with 2+ ranks) its first row uses `ghosts` columns of rank
/// 1; the other ranks own 8 columns each and have empty rows. Nothing is O(columns).
DistMatrix assemble_wide(const Communicator& comm, std::int64_t owned, std::int64_t ghosts) {
  const int ranks = comm.size(), me = comm.rank();
  std::vector<std::int64_t> col_offsets{0, owned};
  for (int r = 1; r < ranks; ++r) col_offsets.push_back(owned + 8 * r);
  const RowPartition cols = RowPartition::from_offsets(comm, col_offsets.back(), col_offsets);
  const RowPartition rows = RowPartition::balanced_rows(8 * ranks, ranks);
  Csr<double> block = Csr<double>::empty(8, 0);
  std::vector<std::int64_t> global_of;
  if (me == 0) {
    global_of.push_back(0);
    for (std::int64_t g = 0; g < ghosts; ++g) global_of.push_back(owned + g);
    block.cols = static_cast<std::int64_t>(global_of.size());
    for (std::size_t c = 0; c < global_of.size(); ++c) push_entry(block, static_cast<std::int64_t>(c), 1.0 + c);
    std::fill(block.row_ptr.begin() + 1, block.row_ptr.end(), block.nnz());
  }
  return assemble_compact(comm, std::move(block), global_of, rows, cols);
}

TEST(AssembleCompactInput, OwnedPlusGhostColumnsMustFitInt32) {
  const Communicator comm;
  const std::int64_t limit = INT32_MAX;
  // One rank: its owned columns alone cross the limit (the last offset may end mid-tile). More
  // ranks: rank 0 owns 2^31 - 8 columns (a tile boundary) and its row uses 8, then 7, ghosts.
  const bool one = comm.size() == 1;
  const std::int64_t owned_over = one ? limit + 1 : limit - 7, ghosts_over = one ? 0 : 8;
  const std::int64_t owned_at = one ? limit : limit - 7, ghosts_at = one ? 0 : 7;
  EXPECT_EQ(testing::input_error_on_every_rank(comm, [&] { assemble_wide(comm, owned_over, ghosts_over); }),
            tessera::detail::concat("assemble: ", owned_over, " owned and ", ghosts_over,
                                    " ghost columns on one rank exceed the int32 local column index; use more ranks"));
  // At the limit exactly it assembles; the extended block spans INT32_MAX columns.
  const DistMatrix d = assemble_wide(comm, owned_at, ghosts_at);
  if (comm.rank() != 0) return;
  EXPECT_EQ(d.local.cols, owned_at);
  ASSERT_EQ(static_cast<std::int64_t>(d.ghost_cols.size()), ghosts_at);
  EXPECT_EQ(row_order_offset(d, 1), 1 + ghosts_at);
  std::vector<std::int64_t> cols;
  append_row_in_row_order(d, 0, &cols, nullptr);
  EXPECT_EQ(cols.back(), one ? 0 : owned_at + ghosts_at - 1);  // row 0: column 0, then the ghosts
  if (!one) {
    const Csr<double> extended = extended_block(d);
    EXPECT_EQ(extended.cols, limit);
    EXPECT_EQ(extended.col_idx.back(), limit - 1);
  }
}

}  // namespace
}  // namespace tessera::dist
