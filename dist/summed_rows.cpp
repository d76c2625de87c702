#include "dist/summed_rows.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <utility>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/host_sort_unique.hpp"

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

/// The rows that receive partial rows, each with all its contributions (own entries, then
/// received) sorted by (column, contribution): row j's are items[ptr[j], ptr[j+1]).
struct MergedRows {
  std::vector<std::int32_t> of_row;  // owned row -> its merged row, or -1
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
    for (std::int64_t j = begin; j < end; ++j) std::sort(m.items.begin() + m.ptr[j], m.items.begin() + m.ptr[j + 1]);
  }, kRowsARange);
  return m;
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

/// Calls f(column) for each distinct column of a sorted merged row, and g(contribution, entry)
/// for each contribution with its entry's position in the row.
template <class F, class G>
void for_each_merged(const MergedRows& m, std::int32_t j, F&& f, G&& g) {
  std::int64_t entry = -1;
  for (std::int64_t q = m.ptr[j]; q < m.ptr[j + 1]; ++q) {
    if (q == m.ptr[j] || m.items[q].col != m.items[q - 1].col) f(m.items[q].col), ++entry;
    g(m.items[q].index, entry);
  }
}

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

DistMatrix own_rows_as_sum(const Communicator& comm, Csr<double>&& own, const RowPartition& partition) {
  const int me = comm.rank();
  const std::int64_t rows = partition.end(me) - partition.begin(me);
  DistMatrix a;
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
  return a;
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

  // Ghosts: the outside columns of the own rows and the received ones (the merged rows hold them
  // all), collected by ranges, then sorted and made unique in parallel: on a 3D surface they are
  // hundreds of thousands of entries, most of them repeats.
  const auto is_owned = [&](std::int64_t g) { return g >= cb && g < ce; };
  const host::RangeSplit ranges(rows);
  std::vector<std::vector<std::int64_t>> outside_in(static_cast<std::size_t>(ranges.count()));
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const auto [s, lo, hi, e] = split(r);
      for (auto [from, to] : {std::pair{s, lo}, {hi, e}})
        for (std::int64_t k = from; k < to; ++k) outside_in[range].push_back(global_of[own.col_idx[k]]);
    }
  });
  const host::RangeSplit item_ranges(static_cast<std::int64_t>(merged.items.size()));
  std::vector<std::vector<std::int64_t>> received_outside(static_cast<std::size_t>(item_ranges.count()));
  item_ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t q = begin; q < end; ++q)
      if (!is_owned(merged.items[q].col)) received_outside[range].push_back(merged.items[q].col);
  });
  std::vector<std::int64_t> ghosts;
  for (const auto* parts : {&outside_in, &received_outside})
    for (const std::vector<std::int64_t>& part : *parts) ghosts.insert(ghosts.end(), part.begin(), part.end());
  host::sort_unique(ghosts);
  agree_on_column_limit(comm, ce - cb, static_cast<std::int64_t>(ghosts.size()));
  const auto ghost_index = [&](std::int64_t g) {
    return static_cast<std::int32_t>(std::lower_bound(ghosts.begin(), ghosts.end(), g) - ghosts.begin());
  };
  // Outside compact column -> ghost, for the own rows' entries. global_of increases, so the outside
  // columns are those before first_owned and from end_owned on.
  std::vector<std::int32_t> ghost_of(global_of.size(), 0);
  host::for_ranges(static_cast<std::int64_t>(global_of.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c)
      if (c < first_owned || c >= end_owned) ghost_of[c] = ghost_index(global_of[c]);
  });

  SummedPattern out;
  DistMatrix& a = out.sum;
  a.row_partition = a.col_partition = partition;
  a.rank = me;
  a.local = Csr<double>::empty(rows, ce - cb);
  a.nonlocal = Csr<double>::empty(rows, static_cast<std::int64_t>(ghosts.size()));
  // Row lengths, then offsets.
  ranges.run([&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t owned = 0, outside = 0;
      if (merged.of_row[r] < 0) {
        const auto [s, lo, hi, e] = split(r);
        owned = hi - lo, outside = (lo - s) + (e - hi);
      } else {
        for_each_merged(merged, merged.of_row[r], [&](std::int64_t g) { ++(is_owned(g) ? owned : outside); },
                        [](std::int64_t, std::int64_t) {});
      }
      a.local.row_ptr[r + 1] = owned;
      a.nonlocal.row_ptr[r + 1] = outside;
    }
  });
  for (std::int64_t r = 0; r < rows; ++r) {
    a.local.row_ptr[r + 1] += a.local.row_ptr[r];
    a.nonlocal.row_ptr[r + 1] += a.nonlocal.row_ptr[r];
  }
  a.local.col_idx.resize(static_cast<std::size_t>(a.local.row_ptr[rows]));
  a.local.values.resize(a.local.col_idx.size());
  a.nonlocal.col_idx.resize(static_cast<std::size_t>(a.nonlocal.row_ptr[rows]));
  a.nonlocal.values.resize(a.nonlocal.col_idx.size());
  out.target.resize(static_cast<std::size_t>(own.row_ptr[rows] + static_cast<std::int64_t>(received.cols.size())));

  // Columns and targets. A row's entries in row order are its own row's, one to one, or its
  // merged row's distinct columns; the row's first entry is at row_order_offset(a, r).
  ranges.run([&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t l = a.local.row_ptr[r], g = a.nonlocal.row_ptr[r];
      const std::int64_t first = l + g;
      if (merged.of_row[r] < 0) {
        const std::int64_t s = own.row_ptr[r], e = own.row_ptr[r + 1];
        for (std::int64_t k = s; k < e; ++k) {
          const std::int32_t c = own.col_idx[k];
          if (c >= first_owned && c < end_owned)
            a.local.col_idx[l++] = static_cast<std::int32_t>(global_of[c] - cb);
          else
            a.nonlocal.col_idx[g++] = ghost_of[c];
          out.target[k] = first + (k - s);
        }
      } else {
        for_each_merged(
            merged, merged.of_row[r],
            [&](std::int64_t col) {
              if (is_owned(col))
                a.local.col_idx[l++] = static_cast<std::int32_t>(col - cb);
              else
                a.nonlocal.col_idx[g++] = ghost_index(col);
            },
            [&](std::int64_t index, std::int64_t entry) { out.target[index] = first + entry; });
      }
    }
  });
  a.ghost_cols = std::move(ghosts);
  a.halo = HaloPlan::build(comm, partition, a.ghost_cols);
  return out;
}

}  // namespace tessera::dist
