#include "dist/dist_matrix.hpp"

#include <algorithm>
#include <climits>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_offsets.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/host_sort_unique.hpp"
#include "local/core/step_trace.hpp"
#include "local/formats/stack_rows.hpp"

namespace tessera::dist {

namespace {

// "" when `b` is a well-formed block of rows [begin, end) of a rows x cols matrix.
std::string row_block_error(const RowBlock& b, std::int64_t rows, std::int64_t cols, std::int64_t begin,
                            std::int64_t end) {
  const auto fail = [&](auto&&... parts) { return detail::concat(parts...); };
  if (b.global_rows != rows || b.global_cols != cols)
    return fail("row block is of a ", b.global_rows, "x", b.global_cols, " matrix, the partitions describe ", rows,
                "x", cols);
  if (b.row_begin != begin || b.row_end != end)
    return fail("row block holds rows [", b.row_begin, ", ", b.row_end, "), this rank owns [", begin, ", ", end, ")");
  if (static_cast<std::int64_t>(b.row_ptr.size()) != end - begin + 1 || b.row_ptr.front() != 0 ||
      b.row_ptr.back() != b.nnz() || b.values.size() != b.col.size())
    return fail("row block arrays are inconsistent (row_ptr ", b.row_ptr.size(), " entries, ", b.col.size(),
                " columns, ", b.values.size(), " values)");
  return host::first_failure(end - begin, [&](std::int64_t first, std::int64_t last) -> std::string {
    // Rows before `first` are another range's to check: this range's start must be in range.
    if (b.row_ptr[first] < 0 || b.row_ptr[first] > b.nnz())
      return fail("row_ptr of global row ", begin + first, " starts at ", b.row_ptr[first], ", outside the ", b.nnz(),
                  " entries");
    for (std::int64_t r = first; r < last; ++r) {
      if (b.row_ptr[r + 1] < b.row_ptr[r]) return fail("row_ptr decreases at global row ", begin + r);
      if (b.row_ptr[r + 1] > b.nnz())  // before the row is read: a later decrease is caught too late
        return fail("row_ptr of global row ", begin + r, " ends at ", b.row_ptr[r + 1], ", past the ", b.nnz(),
                    " entries");
      for (std::int64_t k = b.row_ptr[r]; k < b.row_ptr[r + 1]; ++k) {
        if (b.col[k] < 0 || b.col[k] >= cols)
          return fail("global row ", begin + r, " has column ", b.col[k], " outside [0, ", cols, ")");
        if (k > b.row_ptr[r] && b.col[k] <= b.col[k - 1])
          return fail("global row ", begin + r, " columns are not strictly increasing at column ", b.col[k]);
      }
    }
    return "";
  });
}

// extended_block() numbers owned and ghost columns together, so their sum must fit int32.
std::string block_size_error(std::int64_t owned_cols, std::int64_t ghosts) {
  if (owned_cols + ghosts > INT32_MAX)
    return detail::concat("assemble: ", owned_cols, " owned and ", ghosts,
                          " ghost columns on one rank exceed the int32 local column index; use more ranks");
  return "";
}

void check_rank_counts(const Communicator& comm, const RowPartition& row_partition, const RowPartition& col_partition) {
  if (row_partition.num_ranks() != comm.size() || col_partition.num_ranks() != comm.size())
    throw InputError(detail::concat("assemble: partitions over ", row_partition.num_ranks(), " and ",
                                    col_partition.num_ranks(), " ranks on a communicator of ", comm.size()));
}

// A rows x cols Csr with room for `entries` (reserved, not touched: the fill pushes once).
Csr<double> empty_block(std::int64_t rows, std::int64_t cols, std::int64_t entries) {
  Csr<double> m = Csr<double>::empty(rows, cols);
  m.col_idx.reserve(static_cast<std::size_t>(entries));
  m.values.reserve(static_cast<std::size_t>(entries));
  return m;
}

// Calls f(global_col, value_position) for every entry of owned row r in global column order.
template <class F>
void for_each_in_row_order(const DistMatrix& a, std::int64_t r, F&& f) {
  const std::int64_t nl_begin = a.nonlocal.row_ptr[r], nl_end = a.nonlocal.row_ptr[r + 1];
  std::int64_t k = nl_begin;
  for (; k < nl_end && a.ghost_cols[a.nonlocal.col_idx[k]] < a.col_begin(); ++k)
    f(a.ghost_cols[a.nonlocal.col_idx[k]], false, k);
  for (std::int64_t j = a.local.row_ptr[r]; j < a.local.row_ptr[r + 1]; ++j)
    f(a.col_begin() + a.local.col_idx[j], true, j);
  for (; k < nl_end; ++k) f(a.ghost_cols[a.nonlocal.col_idx[k]], false, k);
}

// Whether rows [first, last) of `b` have offsets in order within its entries and columns in
// [0, n), strictly increasing. Faults are or-ed, not returned at the first, so that the column
// loop vectorises: the products the setup checks are sound, and the worded check took 0.05-0.10 s
// on one thread for a Galerkin product's T at poisson3d:192 (21M entries; docs/performance.md,
// fifty-fourth session). A fault is then worded by that check.
bool rows_well_formed(const Csr<double>& b, std::int64_t first, std::int64_t last, std::int64_t n) {
  const std::int64_t entries = b.nnz();
  const std::int32_t* col = b.col_idx.data();
  // Compared as unsigned, a negative column is as far out of range as one past n.
  const std::uint32_t limit = static_cast<std::uint32_t>(std::min<std::int64_t>(n, UINT32_MAX));
  std::uint32_t fault = 0;
  for (std::int64_t r = first; r < last; ++r) {
    const std::int64_t s = b.row_ptr[r], e = b.row_ptr[r + 1];
    if (s < 0 || e < s || e > entries) return false;
    if (s == e) continue;
    fault |= static_cast<std::uint32_t>(col[s]) >= limit;
    for (std::int64_t k = s + 1; k < e; ++k)
      fault |= static_cast<std::uint32_t>(static_cast<std::uint32_t>(col[k]) >= limit) |
               static_cast<std::uint32_t>(col[k] <= col[k - 1]);
  }
  return fault == 0;
}

}  // namespace

// "" when `b` (columns: indices into global_of) is a well-formed block of `rows` rows.
std::string compact_block_error(const Csr<double>& b, const std::vector<std::int64_t>& global_of, std::int64_t rows,
                                std::int64_t global_cols) {
  const auto fail = [&](auto&&... parts) { return detail::concat(parts...); };
  const auto n = static_cast<std::int64_t>(global_of.size());
  if (b.rows != rows || b.cols != n || static_cast<std::int64_t>(b.row_ptr.size()) != rows + 1 ||
      b.row_ptr.front() != 0 || b.row_ptr.back() != b.nnz() || b.values.size() != b.col_idx.size())
    return fail("compact block of ", b.rows, "x", b.cols, " (", b.nnz(), " entries) for ", rows, " rows and ", n,
                " columns");
  for (std::int64_t c = 0; c < n; ++c)
    if (global_of[c] < 0 || global_of[c] >= global_cols || (c > 0 && global_of[c] <= global_of[c - 1]))
      return fail("compact column map is not increasing within [0, ", global_cols, ") at ", c);
  const host::RangeSplit ranges(rows);
  std::vector<char> sound(static_cast<std::size_t>(ranges.count()), 0);
  ranges.run([&](int range, std::int64_t first, std::int64_t last) {
    sound[static_cast<std::size_t>(range)] = rows_well_formed(b, first, last, n);
  });
  if (std::all_of(sound.begin(), sound.end(), [](char ok) { return ok != 0; })) return "";
  return host::first_failure(rows, [&](std::int64_t first, std::int64_t last) -> std::string {
    if (b.row_ptr[first] < 0 || b.row_ptr[first] > b.nnz()) return fail("row_ptr is broken at row ", first);
    for (std::int64_t r = first; r < last; ++r) {
      if (b.row_ptr[r + 1] < b.row_ptr[r] || b.row_ptr[r + 1] > b.nnz()) return fail("row_ptr is broken at row ", r);
      for (std::int64_t k = b.row_ptr[r]; k < b.row_ptr[r + 1]; ++k) {
        if (b.col_idx[k] < 0 || b.col_idx[k] >= n) return fail("row ", r, " has compact column ", b.col_idx[k]);
        if (k > b.row_ptr[r] && b.col_idx[k] <= b.col_idx[k - 1])
          return fail("row ", r, " columns are not strictly increasing at compact column ", b.col_idx[k]);
      }
    }
    return "";
  });
}

DistMatrix assemble(const Communicator& comm, const RowBlock& rows, const RowPartition& row_partition,
                    const RowPartition& col_partition) {
  TESSERA_TRACE_STEP("assemble");
  const int me = comm.rank();
  check_rank_counts(comm, row_partition, col_partition);
  const std::string error = row_block_error(rows, row_partition.global_rows(), col_partition.global_rows(),
                                            row_partition.begin(me), row_partition.end(me));
  throw_if_any_rank_failed(comm, error.empty() ? error : detail::concat("assemble: rank ", me, ": ", error));
  DistMatrix a;
  a.row_partition = row_partition;
  a.col_partition = col_partition;
  a.rank = me;
  const std::int64_t cb = col_partition.begin(me), ce = col_partition.end(me);
  const auto is_owned = [&](std::int64_t c) { return c >= cb && c < ce; };
  const host::RangeSplit split(rows.local_rows());
  // Ghosts: every outside column, collected range by range, then sorted and made unique.
  std::vector<std::vector<std::int64_t>> outside(static_cast<std::size_t>(split.count()));
  split.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = rows.row_ptr[begin]; k < rows.row_ptr[end]; ++k)
      if (!is_owned(rows.col[k])) outside[range].push_back(rows.col[k]);
  });
  for (const std::vector<std::int64_t>& cols : outside) a.ghost_cols.insert(a.ghost_cols.end(), cols.begin(), cols.end());
  host::sort_unique(a.ghost_cols);
  throw_if_any_rank_failed(comm, block_size_error(ce - cb, static_cast<std::int64_t>(a.ghost_cols.size())));

  // Each range splits its rows into its own pieces of both blocks; stack_rows joins them.
  const auto ghosts = static_cast<std::int64_t>(a.ghost_cols.size());
  std::vector<Csr<double>> local(static_cast<std::size_t>(split.count())), nonlocal(local.size());
  split.run([&](int range, std::int64_t begin, std::int64_t end) {
    const std::int64_t entries = rows.row_ptr[end] - rows.row_ptr[begin];
    const auto outside_entries = static_cast<std::int64_t>(outside[range].size());
    std::vector<std::int64_t>().swap(outside[range]);
    Csr<double>& l = local[range] = empty_block(end - begin, ce - cb, entries - outside_entries);
    Csr<double>& g = nonlocal[range] = empty_block(end - begin, ghosts, outside_entries);
    for (std::int64_t r = begin; r < end; ++r) {
      for (std::int64_t k = rows.row_ptr[r]; k < rows.row_ptr[r + 1]; ++k) {
        const std::int64_t c = rows.col[k];
        if (is_owned(c)) {
          l.col_idx.push_back(static_cast<std::int32_t>(c - cb));
          l.values.push_back(rows.values[k]);
        } else {
          const auto ghost = std::lower_bound(a.ghost_cols.begin(), a.ghost_cols.end(), c) - a.ghost_cols.begin();
          g.col_idx.push_back(static_cast<std::int32_t>(ghost));
          g.values.push_back(rows.values[k]);
        }
      }
      l.row_ptr[r - begin + 1] = l.nnz();
      g.row_ptr[r - begin + 1] = g.nnz();
    }
  });
  a.local = stack_rows(local, ce - cb);
  a.nonlocal = stack_rows(nonlocal, ghosts);
  a.halo = HaloPlan::build(comm, col_partition, a.ghost_cols);
  return a;
}

DistMatrix assemble_compact(const Communicator& comm, Csr<double> rows,
                            const std::vector<std::int64_t>& global_of, const RowPartition& row_partition,
                            const RowPartition& col_partition) {
  TESSERA_TRACE_STEP("assemble_compact");
  const int me = comm.rank();
  check_rank_counts(comm, row_partition, col_partition);
  const std::string error = compact_block_error(rows, global_of, row_partition.end(me) - row_partition.begin(me),
                                                col_partition.global_rows());
  throw_if_any_rank_failed(comm, error.empty() ? error : detail::concat("assemble: rank ", me, ": ", error));
  DistMatrix a;
  a.row_partition = row_partition;
  a.col_partition = col_partition;
  a.rank = me;
  const std::int64_t cb = col_partition.begin(me), ce = col_partition.end(me);
  // global_of is increasing: the owned columns are one index range [first_owned, end_owned).
  const auto first_owned = std::lower_bound(global_of.begin(), global_of.end(), cb) - global_of.begin();
  const auto end_owned = std::lower_bound(global_of.begin(), global_of.end(), ce) - global_of.begin();
  const auto is_owned = [&](std::int32_t c) { return c >= first_owned && c < end_owned; };
  // Ghosts: the outside columns some entry uses, numbered in (sorted) index order.
  std::vector<std::int32_t> ghost_of(global_of.size(), 0);
  std::int64_t owned = 0;
  for (std::int32_t c : rows.col_idx) {
    if (is_owned(c))
      ++owned;
    else
      ghost_of[c] = 1;
  }
  for (std::size_t c = 0; c < global_of.size(); ++c) {
    if (!ghost_of[c]) continue;
    ghost_of[c] = static_cast<std::int32_t>(a.ghost_cols.size());
    a.ghost_cols.push_back(global_of[c]);
  }
  throw_if_any_rank_failed(comm, block_size_error(ce - cb, static_cast<std::int64_t>(a.ghost_cols.size())));
  // Split in place: owned entries move to the front of rows' own arrays (the write position
  // never passes the read position), which become the local block; ghost entries are copied.
  a.nonlocal = empty_block(rows.rows, static_cast<std::int64_t>(a.ghost_cols.size()), rows.nnz() - owned);
  std::int64_t kept = 0, row_start = 0;
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    const std::int64_t row_end = rows.row_ptr[r + 1];
    for (std::int64_t k = row_start; k < row_end; ++k) {
      const std::int32_t c = rows.col_idx[k];
      if (is_owned(c)) {
        rows.col_idx[kept] = static_cast<std::int32_t>(global_of[c] - cb);
        rows.values[kept++] = rows.values[k];
      } else {
        a.nonlocal.col_idx.push_back(ghost_of[c]);
        a.nonlocal.values.push_back(rows.values[k]);
      }
    }
    // rows.row_ptr[r] and nonlocal.row_ptr[r] already hold row r's split starts (set above).
    rows.row_ptr[r + 1] = kept;
    a.nonlocal.row_ptr[r + 1] = a.nonlocal.nnz();
    row_start = row_end;
  }
  rows.col_idx.resize(static_cast<std::size_t>(kept));
  rows.values.resize(static_cast<std::size_t>(kept));
  rows.cols = ce - cb;
  a.local = std::move(rows);
  a.halo = HaloPlan::build(comm, col_partition, a.ghost_cols);
  return a;
}

namespace {

// "" when the blocks and ghosts are what assemble_blocks accepts for `rows` owned rows and owned
// columns [cb, ce) of a matrix of `global_cols` columns.
std::string split_blocks_error(const Csr<double>& local, const Csr<double>& nonlocal,
                               const std::vector<std::int64_t>& ghosts, std::int64_t rows, std::int64_t cb,
                               std::int64_t ce, std::int64_t global_cols) {
  const auto fail = [&](auto&&... parts) { return detail::concat(parts...); };
  const auto n_ghosts = static_cast<std::int64_t>(ghosts.size());
  if (local.rows != rows || nonlocal.rows != rows || local.cols != ce - cb || nonlocal.cols != n_ghosts)
    return fail("blocks of ", local.rows, "x", local.cols, " and ", nonlocal.rows, "x", nonlocal.cols, " for ", rows,
                " owned rows, ", ce - cb, " owned columns and ", n_ghosts, " ghost columns");
  for (std::int64_t g = 0; g < n_ghosts; ++g)
    if (ghosts[g] < 0 || ghosts[g] >= global_cols || (ghosts[g] >= cb && ghosts[g] < ce) ||
        (g > 0 && ghosts[g] <= ghosts[g - 1]))
      return fail("ghost columns must increase and lie in [0, ", global_cols, ") outside the owned columns [", cb,
                  ", ", ce, "); ghost ", g, " is global column ", ghosts[g]);
  try {
    validate(local, "the local block");
    validate(nonlocal, "the non-local block");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Drops the ghosts no entry of `nonlocal` uses; the kept ones keep their order, so every row
// stays sorted.
void drop_unused_ghosts(Csr<double>& nonlocal, std::vector<std::int64_t>& ghosts) {
  std::vector<std::int32_t> index(ghosts.size(), 0);
  for (std::int32_t g : nonlocal.col_idx) index[static_cast<std::size_t>(g)] = 1;
  std::int32_t kept = 0;
  for (std::size_t g = 0; g < ghosts.size(); ++g) {
    if (!index[g]) continue;
    ghosts[static_cast<std::size_t>(kept)] = ghosts[g];
    index[g] = kept++;
  }
  if (kept == static_cast<std::int32_t>(ghosts.size())) return;  // the common case: all used
  ghosts.resize(static_cast<std::size_t>(kept));
  host::for_ranges(nonlocal.nnz(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) nonlocal.col_idx[k] = index[static_cast<std::size_t>(nonlocal.col_idx[k])];
  });
  nonlocal.cols = kept;
}

}  // namespace

DistMatrix assemble_blocks(const Communicator& comm, Csr<double> local, Csr<double> nonlocal,
                           std::vector<std::int64_t> ghost_cols, const RowPartition& row_partition,
                           const RowPartition& col_partition) {
  TESSERA_TRACE_STEP("assemble_blocks");
  const int me = comm.rank();
  check_rank_counts(comm, row_partition, col_partition);
  const std::int64_t cb = col_partition.begin(me), ce = col_partition.end(me);
  const std::string error = split_blocks_error(local, nonlocal, ghost_cols, row_partition.end(me) - row_partition.begin(me),
                                               cb, ce, col_partition.global_rows());
  throw_if_any_rank_failed(comm, error.empty() ? error : detail::concat("assemble: rank ", me, ": ", error));
  drop_unused_ghosts(nonlocal, ghost_cols);
  throw_if_any_rank_failed(comm, block_size_error(ce - cb, static_cast<std::int64_t>(ghost_cols.size())));
  DistMatrix a;
  a.row_partition = row_partition;
  a.col_partition = col_partition;
  a.rank = me;
  a.local = std::move(local);
  a.nonlocal = std::move(nonlocal);
  a.ghost_cols = std::move(ghost_cols);
  a.halo = HaloPlan::build(comm, col_partition, a.ghost_cols);
  return a;
}

DistMatrix assemble(const Communicator& comm, const RowBlock& rows, const RowPartition& row_partition) {
  return assemble(comm, rows, row_partition, row_partition);
}

RowBlock owned_row_block(const DistMatrix& a) {
  RowBlock b;
  b.global_rows = a.global_rows();
  b.global_cols = a.global_cols();
  b.row_begin = a.row_begin();
  b.row_end = a.row_begin() + a.owned_rows();
  // A row's length is known (its two blocks' lengths): offsets first, then ranges of rows write
  // their entries in place.
  b.row_ptr.resize(static_cast<std::size_t>(a.owned_rows()) + 1);
  const std::int64_t nnz = host::offsets_from_counts(
      a.owned_rows(), [&](std::int64_t r) { return a.local.row_length(r) + a.nonlocal.row_length(r); },
      b.row_ptr.data());
  b.col.resize(static_cast<std::size_t>(nnz));  // every entry written below
  b.values.resize(static_cast<std::size_t>(nnz));
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t at = b.row_ptr[r];
      for_each_in_row_order(a, r, [&](std::int64_t c, bool is_local, std::int64_t k) {
        b.col[at] = c;
        b.values[at++] = is_local ? a.local.values[k] : a.nonlocal.values[k];
      });
    }
  });
  return b;
}

HostArray<double> values_in_row_order(const DistMatrix& a) {
  HostArray<double> v(static_cast<std::size_t>(a.nnz()));  // every entry written below
  copy_values_in_row_order(a, v.data());
  return v;
}

void copy_values_in_row_order(const DistMatrix& a, double* out) {
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    double* to = out + row_order_offset(a, begin);
    for (std::int64_t r = begin; r < end; ++r)
      for_each_in_row_order(a, r, [&](std::int64_t, bool is_local, std::int64_t k) {
        *to++ = is_local ? a.local.values[k] : a.nonlocal.values[k];
      });
  });
}

std::int64_t row_order_offset(const DistMatrix& a, std::int64_t r) {
  return a.local.row_ptr[r] + a.nonlocal.row_ptr[r];
}

void append_row_in_row_order(const DistMatrix& a, std::int64_t r, std::vector<std::int64_t>* cols,
                             std::vector<double>* values) {
  for_each_in_row_order(a, r, [&](std::int64_t c, bool is_local, std::int64_t k) {
    if (cols) cols->push_back(c);
    if (values) values->push_back(is_local ? a.local.values[k] : a.nonlocal.values[k]);
  });
}

void set_values_in_row_order(DistMatrix& a, const double* values, std::int64_t count) {
  TESSERA_REQUIRE_INPUT(count == a.nnz(), "value refresh: ", count, " values for a pattern of ", a.nnz(), " entries");
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    const double* from = values + row_order_offset(a, begin);
    for (std::int64_t r = begin; r < end; ++r)
      for_each_in_row_order(a, r, [&](std::int64_t, bool is_local, std::int64_t k) {
        (is_local ? a.local.values[k] : a.nonlocal.values[k]) = *from++;
      });
  });
}

// Row r of the extended block: its local entries, then its non-local ones (ghost g as column
// local.cols + g); every row starts at row_order_offset(a, r).
Csr<double> extended_block(const DistMatrix& a) {
  // One path for every rank: on one rank (no non-local entries) it copies the owned block in
  // parallel ranges, into arrays that are not zero-filled first (HostArray).
  Csr<double> ext = Csr<double>::empty(a.owned_rows(), a.local.cols + a.nonlocal.cols);
  host::for_ranges(a.owned_rows() + 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) ext.row_ptr[r] = row_order_offset(a, r);
  });
  ext.col_idx.resize(static_cast<std::size_t>(a.nnz()));
  ext.values.resize(ext.col_idx.size());
  const auto shift = static_cast<std::int32_t>(a.local.cols);
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t lb = a.local.row_ptr[r], le = a.local.row_ptr[r + 1];
      const std::int64_t nb = a.nonlocal.row_ptr[r], ne = a.nonlocal.row_ptr[r + 1];
      const auto to = ext.col_idx.begin() + ext.row_ptr[r];
      std::copy(a.local.col_idx.begin() + lb, a.local.col_idx.begin() + le, to);
      std::transform(a.nonlocal.col_idx.begin() + nb, a.nonlocal.col_idx.begin() + ne, to + (le - lb),
                     [&](std::int32_t g) { return shift + g; });
    }
  });
  fill_extended_values(a, ext);
  return ext;
}

void fill_extended_values(const DistMatrix& a, Csr<double>& ext) {
  TESSERA_ASSERT(ext.nnz() == a.nnz(), "extended block of ", ext.nnz(), " entries for a matrix of ", a.nnz());
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    double* out = ext.values.data() + row_order_offset(a, begin);
    for (std::int64_t r = begin; r < end; ++r) {
      out = std::copy(a.local.values.begin() + a.local.row_ptr[r], a.local.values.begin() + a.local.row_ptr[r + 1], out);
      out = std::copy(a.nonlocal.values.begin() + a.nonlocal.row_ptr[r],
                      a.nonlocal.values.begin() + a.nonlocal.row_ptr[r + 1], out);
    }
  });
}

Csr<double> gather(const Communicator& comm, const DistMatrix& a, int root) {
  const RowBlock mine = owned_row_block(a);
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(mine.local_rows()));
  for (std::int64_t r = 0; r < mine.local_rows(); ++r) lengths[r] = mine.row_ptr[r + 1] - mine.row_ptr[r];
  const std::vector<std::int64_t> all_lengths = comm.gatherv(lengths, root);
  const std::vector<std::int64_t> all_cols = comm.gatherv(mine.col, root);
  const std::vector<double> all_values = comm.gatherv(mine.values, root);
  if (comm.rank() != root) return Csr<double>{};
  RowBlock whole;
  whole.global_rows = whole.row_end = a.global_rows();
  whole.global_cols = a.global_cols();
  whole.row_ptr.assign(static_cast<std::size_t>(a.global_rows()) + 1, 0);
  for (std::int64_t r = 0; r < a.global_rows(); ++r) whole.row_ptr[r + 1] = whole.row_ptr[r] + all_lengths[r];
  whole.col.assign(all_cols.begin(), all_cols.end());
  whole.values.assign(all_values.begin(), all_values.end());
  return to_csr(whole);
}

}  // namespace tessera::dist
