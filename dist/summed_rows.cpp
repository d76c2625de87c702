#include "dist/summed_rows.hpp"

#include <algorithm>
#include <array>
#include <climits>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera::dist {

namespace {

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
  m.items.resize(static_cast<std::size_t>(m.ptr.back()));
  std::vector<std::int64_t> at(m.ptr.begin(), m.ptr.end() - 1);
  for (std::size_t j = 0; j < receiving.size(); ++j)
    for (std::int64_t k = own.row_ptr[receiving[j]]; k < own.row_ptr[receiving[j] + 1]; ++k)
      m.items[at[j]++] = Contribution{global_of[own.col_idx[k]], k};
  std::int64_t index = own.row_ptr[rows];  // the first received contribution
  for (std::size_t i = 0, e = 0; i < received.row.size(); ++i)
    for (std::int64_t n = 0; n < received.lengths[i]; ++n, ++e)
      m.items[at[m.of_row[received.row[i]]]++] = Contribution{received.cols[e], index++};
  host::for_ranges(static_cast<std::int64_t>(receiving.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) std::sort(m.items.begin() + m.ptr[j], m.items.begin() + m.ptr[j + 1]);
  }, 64);
  return m;
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

  // Ghosts: the outside columns of the own rows (few: found range by range), and the received
  // ones (the merged rows hold them all).
  const host::RangeSplit ranges(rows);
  std::vector<std::vector<std::int32_t>> outside_in(static_cast<std::size_t>(ranges.count()));
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const auto [s, lo, hi, e] = split(r);
      outside_in[range].insert(outside_in[range].end(), own.col_idx.begin() + s, own.col_idx.begin() + lo);
      outside_in[range].insert(outside_in[range].end(), own.col_idx.begin() + hi, own.col_idx.begin() + e);
    }
  });
  std::vector<char> used(global_of.size(), 0);
  for (const std::vector<std::int32_t>& cols : outside_in)
    for (std::int32_t c : cols) used[c] = 1;
  std::vector<std::int64_t> ghosts;
  for (const Contribution& item : merged.items)
    if (item.col < cb || item.col >= ce) ghosts.push_back(item.col);
  for (std::size_t c = 0; c < used.size(); ++c)
    if (used[c]) ghosts.push_back(global_of[c]);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  throw_if_any_rank_failed(
      comm, ce - cb + static_cast<std::int64_t>(ghosts.size()) <= INT32_MAX
                ? ""
                : detail::concat("summed rows: rank ", me, "'s ", ce - cb, " owned and ", ghosts.size(),
                                 " ghost columns exceed the int32 local column index; use more ranks"));
  const auto ghost_index = [&](std::int64_t g) {
    return static_cast<std::int32_t>(std::lower_bound(ghosts.begin(), ghosts.end(), g) - ghosts.begin());
  };
  std::vector<std::int32_t> ghost_of(global_of.size(), 0);  // used outside compact column -> ghost
  for (std::size_t c = 0; c < used.size(); ++c)
    if (used[c]) ghost_of[c] = ghost_index(global_of[c]);

  SummedPattern out;
  DistMatrix& a = out.sum;
  a.row_partition = a.col_partition = partition;
  a.rank = me;
  a.local = Csr<double>::empty(rows, ce - cb);
  a.nonlocal = Csr<double>::empty(rows, static_cast<std::int64_t>(ghosts.size()));
  const auto is_owned = [&](std::int64_t g) { return g >= cb && g < ce; };
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
