#include "dist/summed_rows.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <optional>
#include <utility>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_offsets.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/host_sort_unique.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::dist {

namespace {

// A merged row costs its entries' copies and sort (tens of entries): a range gets at least this
// many rows, so that starting a thread pays.
constexpr std::int64_t kRowsARange = 256;

struct Contribution {
  std::int64_t col;    // global column
  std::int64_t index;  // contribution number (own entries first, then received ones)
  bool operator<(const Contribution& o) const { return col != o.col ? col < o.col : index < o.index; }
};

/// Sorts a merged row's contributions: its own row, then the partial rows it received, each
/// sorted by column already (a product's rows are). Merging those runs in turn is cheaper than
/// a sort (a few runs of tens of entries); contributions are distinct, so any order of merging
/// gives the sorted row. Many runs (a partial row out of order) fall back to a sort.
void sort_runs(Contribution* first, Contribution* last, std::vector<Contribution>& scratch) {
  constexpr int kMostRuns = 8;
  Contribution* sorted_end = first;  // [first, sorted_end) is sorted
  for (int runs = 0; sorted_end != last; ++runs) {
    if (runs == kMostRuns) {
      std::sort(first, last);
      return;
    }
    Contribution* run_end = sorted_end + 1;
    while (run_end != last && run_end[-1] < run_end[0]) ++run_end;
    if (sorted_end != first) {
      scratch.resize(static_cast<std::size_t>(run_end - first));
      std::merge(first, sorted_end, sorted_end, run_end, scratch.begin());
      std::copy(scratch.begin(), scratch.end(), first);
    }
    sorted_end = run_end;
  }
}

/// The rows that receive partial rows, each with all its contributions (own entries, then
/// received) sorted by (column, contribution): row j's are items[ptr[j], ptr[j+1]).
struct MergedRows {
  std::vector<std::int32_t> of_row;  // owned row -> its merged row, or -1
  std::vector<std::int64_t> rows;    // merged row j -> its owned row, increasing
  std::vector<std::int64_t> ptr{0};
  std::vector<Contribution> items;
};

MergedRows merged_rows(const Csr<double>& own, std::int64_t rows, const std::vector<std::int64_t>& global_of,
                       const ReceivedRows& received) {
  MergedRows m;
  m.of_row.assign(static_cast<std::size_t>(rows), -1);
  std::vector<std::int64_t> receiving;
  for (std::size_t i = 0; i < received.row.size(); ++i) {
    const std::int64_t r = received.row[i];
    TESSERA_ASSERT(r >= 0 && r < rows, "summed rows: a partial row for row ", r, " of ", rows);
    if (received.lengths[i] > 0 && m.of_row[r] < 0) {
      m.of_row[r] = 0;  // seen; numbered below, in row order
      receiving.push_back(r);
    }
  }
  std::sort(receiving.begin(), receiving.end());
  for (std::size_t j = 0; j < receiving.size(); ++j) {
    const std::int64_t r = receiving[j];
    m.of_row[r] = static_cast<std::int32_t>(j);
    m.ptr.push_back(own.row_length(r));  // lengths first, then offsets
  }
  for (std::size_t i = 0; i < received.row.size(); ++i)
    if (received.lengths[i] > 0) m.ptr[m.of_row[received.row[i]] + 1] += received.lengths[i];
  for (std::size_t j = 0; j < receiving.size(); ++j) m.ptr[j + 1] += m.ptr[j];
  m.rows = receiving;
  // Where each contribution goes: a merged row holds its own entries, then its partial rows in
  // the order received. The offsets are found in one pass over the partial rows; the entries
  // (hundreds of thousands on a 3D surface) are then copied by ranges, in parallel.
  m.items.resize(static_cast<std::size_t>(m.ptr.back()));
  host::for_ranges(static_cast<std::int64_t>(receiving.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j)
      for (std::int64_t k = own.row_ptr[receiving[j]], to = m.ptr[j]; k < own.row_ptr[receiving[j] + 1]; ++k)
        m.items[to++] = Contribution{global_of[own.col_idx[k]], k};
  }, kRowsARange);
  std::vector<std::int64_t> at(receiving.size());  // merged row j's next free item: after its own entries
  for (std::size_t j = 0; j < receiving.size(); ++j) at[j] = m.ptr[j] + own.row_length(receiving[j]);
  std::vector<std::int64_t> item_of(received.row.size()), entry_of(received.row.size() + 1, 0);
  for (std::size_t i = 0; i < received.row.size(); ++i) {
    entry_of[i + 1] = entry_of[i] + received.lengths[i];
    if (received.lengths[i] == 0) continue;
    std::int64_t& next = at[static_cast<std::size_t>(m.of_row[received.row[i]])];
    item_of[i] = next;
    next += received.lengths[i];
  }
  const std::int64_t first_received = own.row_ptr[rows];  // contribution number of the first received entry
  host::for_ranges(static_cast<std::int64_t>(received.row.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t e = entry_of[i]; e < entry_of[i + 1]; ++e)
        m.items[item_of[i] + (e - entry_of[i])] = Contribution{received.cols[e], first_received + e};
  }, kRowsARange);
  host::for_ranges(static_cast<std::int64_t>(receiving.size()), [&](std::int64_t begin, std::int64_t end) {
    std::vector<Contribution> scratch;
    for (std::int64_t j = begin; j < end; ++j)
      sort_runs(m.items.data() + m.ptr[j], m.items.data() + m.ptr[j + 1], scratch);
  }, kRowsARange);
  return m;
}

// What a merged row's contribution costs a pass over the rows, against an entry of a row that
// receives nothing: its position is stored, and a column only received is searched among the
// ghosts (5-6 ns against 1 ns an entry, one thread at poisson3d:160 on two ranks).
constexpr std::int64_t kMergedItemCost = 4;

/// The owned rows [0, rows) in ranges of about equal work, for the passes that treat every row.
/// The merged rows lie at the ends of a rank's rows (its surface), and a split by row count gave
/// them all to one thread, which the others waited for (docs/performance.md, fifty-third
/// session). `merged_before(r)`: the merged rows' contributions (or entries) in rows [0, r).
template <class MergedBefore>
host::RangeSplit rows_by_work(const Csr<double>& own, std::int64_t rows, MergedBefore&& merged_before) {
  return host::RangeSplit::by_cost(rows, [&](std::int64_t r) {
    return own.row_ptr[r] + r + kMergedItemCost * merged_before(r);
  });
}

/// Collective: the first of the two collectives every sum makes, whichever way a rank makes it
/// (ranks may differ): this agreement, before ghosts are numbered, then the halo plan's build.
void agree_on_column_limit(const Communicator& comm, std::int64_t owned, std::int64_t ghosts) {
  throw_if_any_rank_failed(comm, owned + ghosts <= INT32_MAX
                                     ? ""
                                     : detail::concat("summed rows: rank ", comm.rank(), "'s ", owned, " owned and ",
                                                      ghosts, " ghost columns exceed the int32 local column index; "
                                                      "use more ranks"));
}

/// Calls column(c) for each distinct column c of a sorted merged row, in order, and after it
/// contribution(index) for each of that column's contributions. column(c, first) also gets the
/// column's first contribution: an own entry, if the row has one in that column.
template <class Column, class Contribution>
void for_each_merged(const MergedRows& m, std::int32_t j, Column&& column, Contribution&& contribution) {
  for (std::int64_t q = m.ptr[j]; q < m.ptr[j + 1]; ++q) {
    if (q == m.ptr[j] || m.items[q].col != m.items[q - 1].col) column(m.items[q].col, m.items[q].index);
    contribution(m.items[q].index);
  }
}

/// Row r of a sum as its own partial row lays it out in row order (global column order): the
/// non-local entries [nb, nb + left) of ghosts left of the owned columns, the local entries
/// [lb, le), then the non-local entries [nb + left, ne).
struct RowLayout {
  std::int64_t lb, le, nb, ne, left;
};

/// Ghost indices below this one are columns left of the owned ones (ghosts are sorted).
std::int32_t first_right_ghost(const DistMatrix& sum) {
  return static_cast<std::int32_t>(std::lower_bound(sum.ghost_cols.begin(), sum.ghost_cols.end(), sum.col_begin()) -
                                   sum.ghost_cols.begin());
}

RowLayout row_layout(const DistMatrix& sum, std::int32_t right_ghosts_from, std::int64_t r) {
  RowLayout row{sum.local.row_ptr[r], sum.local.row_ptr[r + 1], sum.nonlocal.row_ptr[r], sum.nonlocal.row_ptr[r + 1],
                0};
  const auto col = sum.nonlocal.col_idx.begin();
  row.left = std::lower_bound(col + row.nb, col + row.ne, right_ghosts_from) - (col + row.nb);
  return row;
}

/// Position -> value, over the sum's [local | non-local] values.
class ValuesByPosition {
 public:
  explicit ValuesByPosition(DistMatrix& sum)
      : local_(sum.local.values.data()), nonlocal_(sum.nonlocal.values.data()), local_entries_(sum.local.nnz()) {}
  double& operator[](std::int64_t position) const {
    return position < local_entries_ ? local_[position] : nonlocal_[position - local_entries_];
  }

 private:
  double* local_;
  double* nonlocal_;
  std::int64_t local_entries_;
};

}  // namespace

bool sum_is_own_rows(const Csr<double>& own, const std::vector<std::int64_t>& global_of,
                     const ReceivedRows& received, const RowPartition& partition, int rank) {
  const std::int64_t rows = partition.end(rank) - partition.begin(rank);
  const auto used = static_cast<std::int64_t>(global_of.size());
  // global_of increases, so its ends decide whether it is [begin, begin + used) inside the owned range.
  const bool first_columns = used == 0 || (global_of.front() == partition.begin(rank) &&
                                           global_of.back() == partition.begin(rank) + used - 1 && used <= rows);
  return received.cols.empty() && own.rows >= rows && own.row_ptr[rows] == own.nnz() && first_columns;
}

SummedPattern own_rows_as_sum(const Communicator& comm, Csr<double>&& own, const RowPartition& partition) {
  const int me = comm.rank();
  const std::int64_t rows = partition.end(me) - partition.begin(me);
  SummedPattern out;
  out.map.own_entries = own.row_ptr[rows];
  DistMatrix& a = out.sum;
  a.row_partition = a.col_partition = partition;
  a.rank = me;
  // The rows after the owned ones (partial rows for other ranks) are empty here: cut them off.
  own.rows = rows;
  own.cols = rows;
  own.row_ptr.resize(static_cast<std::size_t>(rows + 1));
  a.local = std::move(own);
  a.nonlocal = Csr<double>::empty(rows, 0);
  agree_on_column_limit(comm, rows, 0);
  a.halo = HaloPlan::build(comm, partition, a.ghost_cols);
  return out;
}

SummedPattern summed_pattern(const Communicator& comm, const Csr<double>& own,
                             const std::vector<std::int64_t>& global_of, const ReceivedRows& received,
                             const RowPartition& partition) {
  const int me = comm.rank();
  const std::int64_t rows = partition.end(me) - partition.begin(me);
  const std::int64_t cb = partition.begin(me), ce = partition.end(me);
  TESSERA_ASSERT(own.rows >= rows && received.row.size() == received.lengths.size(), "summed rows: ", own.rows,
                 " partial rows for ", rows, " owned rows");
  for (std::int64_t c : received.cols)
    TESSERA_ASSERT(c >= 0 && c < partition.global_rows(), "summed rows: received column ", c);
  // The parts, traced under the caller's step (ptap.pattern).
  std::optional<trace::Step> part(std::in_place, "merged_rows");
  const MergedRows merged = merged_rows(own, rows, global_of, received);

  // global_of increases: own columns in the owned range are one index range, and each own row
  // is [outside left | owned | outside right].
  const auto index_of = [&](std::int64_t g) {
    return static_cast<std::int32_t>(std::lower_bound(global_of.begin(), global_of.end(), g) - global_of.begin());
  };
  const std::int32_t first_owned = index_of(cb), end_owned = index_of(ce);
  const auto split = [&](std::int64_t r) {
    const auto col = own.col_idx.begin();
    const std::int64_t s = own.row_ptr[r], e = own.row_ptr[r + 1];
    const std::int64_t lo = std::lower_bound(col + s, col + e, first_owned) - col;
    return std::array<std::int64_t, 4>{s, lo, std::lower_bound(col + lo, col + e, end_owned) - col, e};
  };
  const auto is_owned = [&](std::int64_t g) { return g >= cb && g < ce; };

  SummedPattern out;
  DistMatrix& a = out.sum;
  a.row_partition = a.col_partition = partition;
  a.rank = me;
  a.local = Csr<double>::empty(rows, ce - cb);
  a.nonlocal = Csr<double>::empty(rows, 0);

  // One pass over the rows, cut by work: each row's owned and outside entry counts, and which
  // outside columns the rows use.
  part.emplace("row_lengths");
  const host::RangeSplit ranges = rows_by_work(own, rows, [&](std::int64_t r) {
    return merged.ptr[std::lower_bound(merged.rows.begin(), merged.rows.end(), r) - merged.rows.begin()];
  });
  // The ghosts are the outside compact columns the owned rows use (marked, each range its own
  // marks: a few thousand columns on a 3D surface, where the rows hold hundreds of thousands of
  // such entries) and the outside columns only received.
  const std::int64_t compact_columns = static_cast<std::int64_t>(global_of.size());
  const std::int64_t outside_columns = first_owned + (compact_columns - end_owned);
  const auto outside_number = [&](std::int32_t c) { return c < first_owned ? c : first_owned + (c - end_owned); };
  std::vector<std::vector<std::uint8_t>> used(static_cast<std::size_t>(ranges.count()));
  std::vector<std::vector<std::int64_t>> received_only(static_cast<std::size_t>(ranges.count()));
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    std::vector<std::uint8_t>& mark = used[static_cast<std::size_t>(range)];
    mark.assign(static_cast<std::size_t>(outside_columns), 0);
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t owned = 0, outside_count = 0;
      if (merged.of_row[r] < 0) {
        const auto [s, lo, hi, e] = split(r);
        owned = hi - lo, outside_count = (lo - s) + (e - hi);
        for (auto [from, to] : {std::pair{s, lo}, {hi, e}})
          for (std::int64_t k = from; k < to; ++k) mark[outside_number(own.col_idx[k])] = 1;
      } else {
        for_each_merged(
            merged, merged.of_row[r],
            [&](std::int64_t g, std::int64_t first) {
              if (is_owned(g)) return void(++owned);
              ++outside_count;
              if (first < own.row_ptr[rows])
                mark[outside_number(own.col_idx[first])] = 1;
              else
                received_only[static_cast<std::size_t>(range)].push_back(g);
            },
            [](std::int64_t) {});
      }
      a.local.row_ptr[r + 1] = owned;
      a.nonlocal.row_ptr[r + 1] = outside_count;
    }
  });
  part.emplace("ghosts");
  std::vector<std::int64_t> ghosts, only_received;
  for (std::int64_t o = 0; o < outside_columns; ++o)
    if (std::any_of(used.begin(), used.end(), [&](const std::vector<std::uint8_t>& mark) { return mark[o] != 0; }))
      ghosts.push_back(global_of[o < first_owned ? o : end_owned + (o - first_owned)]);  // increasing
  for (const std::vector<std::int64_t>& found : received_only)
    only_received.insert(only_received.end(), found.begin(), found.end());
  host::sort_unique(only_received);
  const std::size_t from_own_rows = ghosts.size();
  ghosts.insert(ghosts.end(), only_received.begin(), only_received.end());
  std::inplace_merge(ghosts.begin(), ghosts.begin() + static_cast<std::ptrdiff_t>(from_own_rows), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  agree_on_column_limit(comm, ce - cb, static_cast<std::int64_t>(ghosts.size()));
  const auto ghost_index = [&](std::int64_t g) {
    return static_cast<std::int32_t>(std::lower_bound(ghosts.begin(), ghosts.end(), g) - ghosts.begin());
  };
  // Compact column -> its column in the sum, for the own rows' entries: the local column of an
  // owned one, the ghost index of an outside one. global_of increases, so the outside columns are
  // those before first_owned and from end_owned on.
  std::vector<std::int32_t> column_of(global_of.size());
  host::for_ranges(static_cast<std::int64_t>(global_of.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c)
      column_of[c] = c >= first_owned && c < end_owned ? static_cast<std::int32_t>(global_of[c] - cb)
                                                       : ghost_index(global_of[c]);
  });

  part.emplace("offsets");
  a.nonlocal.cols = static_cast<std::int64_t>(ghosts.size());
  // In place, on the rank's threads: row_ptr[r + 1] holds row r's count until the scan writes
  // the row's end there.
  for (Csr<double>* block : {&a.local, &a.nonlocal}) {
    std::int64_t* ptr = block->row_ptr.data();
    host::offsets_from_counts(rows, [ptr](std::int64_t r) { return ptr[r + 1]; }, ptr);
  }
  a.local.col_idx.resize(static_cast<std::size_t>(a.local.row_ptr[rows]));
  a.local.values.resize(a.local.col_idx.size());
  a.nonlocal.col_idx.resize(static_cast<std::size_t>(a.nonlocal.row_ptr[rows]));
  a.nonlocal.values.resize(a.nonlocal.col_idx.size());

  // The map: the merged rows, where their own entries' positions start, and the positions.
  SummationMap& map = out.map;
  map.own_entries = own.row_ptr[rows];
  map.merged_rows = merged.rows;
  for (std::int64_t r : merged.rows) map.own_first.push_back(map.own_first.back() + own.row_length(r));
  map.own_positions.resize(static_cast<std::size_t>(map.own_first.back()));
  map.received_positions.resize(received.cols.size());

  // Columns, and the merged rows' positions. A row that receives nothing is its own row, entry
  // for entry, in its three parts (outside left, owned, outside right: split); a merged row's
  // entries are its distinct columns, and each contribution's position is that of the column it
  // falls in.
  part.emplace("columns");
  const std::int64_t local_entries = a.local.nnz();
  ranges.run([&](int, std::int64_t begin, std::int64_t end) {
    const std::int32_t* own_col = own.col_idx.data();
    std::int32_t* local_col = a.local.col_idx.data();
    std::int32_t* ghost_col = a.nonlocal.col_idx.data();
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t l = a.local.row_ptr[r], g = a.nonlocal.row_ptr[r];
      const std::int32_t j = merged.of_row[r];
      if (j < 0) {
        const auto [s, lo, hi, e] = split(r);
        for (std::int64_t k = s; k < lo; ++k) ghost_col[g++] = column_of[own_col[k]];
        for (std::int64_t k = lo; k < hi; ++k) local_col[l++] = column_of[own_col[k]];
        for (std::int64_t k = hi; k < e; ++k) ghost_col[g++] = column_of[own_col[k]];
        continue;
      }
      const std::int64_t own_begin = own.row_ptr[r];
      std::int64_t* own_position = map.own_positions.data() + map.own_first[static_cast<std::size_t>(j)];
      std::int64_t position = -1;  // the current column's
      for_each_merged(
          merged, j,
          [&](std::int64_t col, std::int64_t first) {
            if (is_owned(col)) {
              position = l;
              local_col[l++] = static_cast<std::int32_t>(col - cb);
            } else {
              // A column the own row has is mapped already; only a received one is searched.
              position = local_entries + g;
              ghost_col[g++] = first < map.own_entries ? column_of[own_col[first]] : ghost_index(col);
            }
          },
          [&](std::int64_t index) {
            if (index < map.own_entries)
              own_position[index - own_begin] = position;
            else
              map.received_positions[index - map.own_entries] = position;
          });
    }
  });
  part.reset();
  a.ghost_cols = std::move(ghosts);
  a.halo = HaloPlan::build(comm, partition, a.ghost_cols);
  return out;
}

void add_contributions(const SummationMap& map, const Csr<double>& own, const double* received, DistMatrix& sum) {
  const std::int64_t rows = sum.owned_rows();
  TESSERA_ASSERT(own.rows >= rows && own.row_ptr[rows] == map.own_entries, "summed rows: ", own.row_ptr[rows],
                 " own entries in ", rows, " rows for a map of ", map.own_entries);
  const std::int32_t right_ghosts_from = first_right_ghost(sum);
  const ValuesByPosition value(sum);
  const auto merged_begin = map.merged_rows.begin();
  host::for_ranges(rows, [&](std::int64_t begin, std::int64_t end) {
    auto j = static_cast<std::size_t>(std::lower_bound(merged_begin, map.merged_rows.end(), begin) - merged_begin);
    for (std::int64_t r = begin; r < end; ++r) {
      const RowLayout row = row_layout(sum, right_ghosts_from, r);
      const std::int64_t s = own.row_ptr[r], e = own.row_ptr[r + 1];
      if (j < map.merged_rows.size() && map.merged_rows[j] == r) {
        std::fill(sum.local.values.begin() + row.lb, sum.local.values.begin() + row.le, 0.0);
        std::fill(sum.nonlocal.values.begin() + row.nb, sum.nonlocal.values.begin() + row.ne, 0.0);
        const std::int64_t* position = map.own_positions.data() + map.own_first[j++];
        for (std::int64_t k = s; k < e; ++k) value[position[k - s]] += own.values[k];
        continue;
      }
      // 0 + v: one contribution summed from 0, as a merged row's and the device's (-0.0 -> +0.0).
      const double* from = own.values.data() + s;
      const auto place = [&](double* to, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) to[i] = 0.0 + *from++;
      };
      place(sum.nonlocal.values.data() + row.nb, row.left);
      place(sum.local.values.data() + row.lb, row.le - row.lb);
      place(sum.nonlocal.values.data() + row.nb + row.left, row.ne - row.nb - row.left);
    }
  });
  for (std::size_t e = 0; e < map.received_positions.size(); ++e) value[map.received_positions[e]] += received[e];
}

std::vector<std::int64_t> contribution_positions(const SummationMap& map, const DistMatrix& sum) {
  const std::int64_t rows = sum.owned_rows(), local_entries = sum.local.nnz();
  const std::int32_t right_ghosts_from = first_right_ghost(sum);
  // Each row's first contribution: a merged row has its own row's entries, any other row its
  // sum's row's.
  std::vector<std::int64_t> first(static_cast<std::size_t>(rows + 1), 0);
  std::size_t j = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const bool merges = j < map.merged_rows.size() && map.merged_rows[j] == r;
    first[r + 1] = first[r] + (merges ? map.own_first[j + 1] - map.own_first[j]
                                  : sum.local.row_length(r) + sum.nonlocal.row_length(r));
    j += merges;
  }
  TESSERA_ASSERT(first[rows] == map.own_entries, "summed rows: ", first[rows],
                 " own contributions laid out, the map has ", map.own_entries);
  std::vector<std::int64_t> positions(static_cast<std::size_t>(map.own_entries) + map.received_positions.size());
  host::for_ranges(rows, [&](std::int64_t begin, std::int64_t end) {
    auto m = static_cast<std::size_t>(std::lower_bound(map.merged_rows.begin(), map.merged_rows.end(), begin) -
                                      map.merged_rows.begin());
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t* to = positions.data() + first[r];
      if (m < map.merged_rows.size() && map.merged_rows[m] == r) {
        std::copy(map.own_positions.begin() + map.own_first[m], map.own_positions.begin() + map.own_first[m + 1], to);
        ++m;
        continue;
      }
      const RowLayout row = row_layout(sum, right_ghosts_from, r);
      for (std::int64_t i = 0; i < row.left; ++i) *to++ = local_entries + row.nb + i;
      for (std::int64_t k = row.lb; k < row.le; ++k) *to++ = k;
      for (std::int64_t k = row.nb + row.left; k < row.ne; ++k) *to++ = local_entries + k;
    }
  });
  std::copy(map.received_positions.begin(), map.received_positions.end(), positions.begin() + map.own_entries);
  return positions;
}

}  // namespace tessera::dist
