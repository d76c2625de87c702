#include "amg/dist/dist_smoothing.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <iterator>
#include <string>

#include "amg/prolongator_smoothing.hpp"
#include "dist/communicator.hpp"
#include "dist/compact_spgemm.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"
#include "local/formats/stack_rows.hpp"

namespace tessera::amg {
namespace {

/// `block`'s columns (indices into the sorted `ghosts`) renumbered into the sorted superset
/// `all`: monotone, so every row stays sorted.
std::vector<std::int32_t> columns_in(const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& ghosts,
                                     const Csr<double>& block) {
  std::vector<std::int32_t> index(ghosts.size());
  for (std::size_t g = 0; g < ghosts.size(); ++g)
    index[g] = static_cast<std::int32_t>(std::lower_bound(all.begin(), all.end(), ghosts[g]) - all.begin());
  std::vector<std::int32_t> cols(block.col_idx.size());
  for (std::size_t k = 0; k < cols.size(); ++k) cols[k] = index[block.col_idx[k]];
  return cols;
}

}  // namespace

SmoothedColumns owned_compact_range(const dist::DistMatrix& p_tent, const std::vector<std::int64_t>& global_of) {
  const std::int64_t cb = p_tent.col_begin(), ce = cb + p_tent.local.cols;
  SmoothedColumns columns;
  columns.first_owned =
      static_cast<std::int32_t>(std::lower_bound(global_of.begin(), global_of.end(), cb) - global_of.begin());
  columns.end_owned =
      static_cast<std::int32_t>(std::lower_bound(global_of.begin(), global_of.end(), ce) - global_of.begin());
  return columns;
}

void number_smoothed_columns(const dist::Communicator& comm, const dist::DistMatrix& p_tent,
                             const std::vector<std::int64_t>& global_of, const std::vector<char>& used,
                             SmoothedColumns& columns) {
  TESSERA_ASSERT(used.size() == global_of.size(), "smoothed columns: ", used.size(), " flags for ", global_of.size(),
                 " compact columns");
  const auto owned = [&](std::size_t c) {
    return c >= static_cast<std::size_t>(columns.first_owned) && c < static_cast<std::size_t>(columns.end_owned);
  };
  std::vector<std::int64_t> used_outside;
  for (std::size_t c = 0; c < used.size(); ++c)
    if (used[c] && !owned(c)) used_outside.push_back(global_of[c]);
  columns.ghost_cols.clear();
  std::set_union(p_tent.ghost_cols.begin(), p_tent.ghost_cols.end(), used_outside.begin(), used_outside.end(),
                 std::back_inserter(columns.ghost_cols));
  dist::throw_if_any_rank_failed(
      comm, p_tent.local.cols + static_cast<std::int64_t>(columns.ghost_cols.size()) <= INT32_MAX
                ? ""
                : tessera::detail::concat("AMG: rank ", comm.rank(), ": P's ", p_tent.local.cols, " owned and ",
                                          columns.ghost_cols.size(), " ghost columns exceed the int32 local column index"));
  // Owned compact columns into the local block, used outside ones into the union of ghosts.
  const std::int64_t cb = p_tent.col_begin();
  columns.to_p.assign(global_of.size(), 0);
  std::size_t g = 0;  // both lists increase: one walk over the ghosts
  for (std::size_t c = 0; c < global_of.size(); ++c) {
    if (owned(c)) {
      columns.to_p[c] = static_cast<std::int32_t>(global_of[c] - cb);
    } else if (used[c]) {
      while (columns.ghost_cols[g] < global_of[c]) ++g;
      columns.to_p[c] = static_cast<std::int32_t>(g);
    }
  }
}

dist::DistMatrix smoothed_shell(const dist::DistMatrix& p_tent, SmoothedColumns& columns) {
  dist::DistMatrix p;
  p.row_partition = p_tent.row_partition;
  p.col_partition = p_tent.col_partition;
  p.rank = p_tent.rank;
  p.ghost_cols = std::move(columns.ghost_cols);
  return p;
}

dist::DistMatrix smoothed_blocks(const dist::Communicator& comm, const dist::DistMatrix& p_tent, const Csr<double>& ap,
                                 const std::vector<std::int64_t>& global_of, const Vector& inv_diag, double omega,
                                 SmoothedValueMap* record) {
  TESSERA_TRACE_STEP("merge");
  // The merge reads the rows as sorted and in range (what assemble_compact would check): a
  // broken local product is an InputError on every rank, never garbage.
  const std::string error = dist::compact_block_error(ap, global_of, p_tent.owned_rows(), p_tent.global_cols());
  dist::throw_if_any_rank_failed(
      comm, error.empty() ? "" : tessera::detail::concat("AMG: rank ", comm.rank(), ": A*P_tent: ", error));
  SmoothedColumns columns = owned_compact_range(p_tent, global_of);
  const std::int32_t first_owned = columns.first_owned, end_owned = columns.end_owned;
  // Row i's entries [s, e) of `ap` split into [s, lo) | owned [lo, hi) | [hi, e).
  const auto split = [&](std::int64_t i) {
    const auto row = ap.col_idx.begin();
    const std::int64_t s = ap.row_ptr[i], e = ap.row_ptr[i + 1];
    const std::int64_t lo = std::lower_bound(row + s, row + e, first_owned) - row;
    return std::array<std::int64_t, 4>{s, lo, std::lower_bound(row + lo, row + e, end_owned) - row, e};
  };
  // The outside columns some entry uses (few: the ghosts' neighbours), found range by range.
  const host::RangeSplit rows(ap.rows);
  std::vector<std::vector<std::int32_t>> outside_in(static_cast<std::size_t>(rows.count()));
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const auto [s, lo, hi, e] = split(i);
      for (auto [from, to] : {std::pair{s, lo}, {hi, e}})
        outside_in[range].insert(outside_in[range].end(), ap.col_idx.begin() + from, ap.col_idx.begin() + to);
    }
  });
  std::vector<char> used(global_of.size(), 0);
  for (const std::vector<std::int32_t>& cols : outside_in)
    for (std::int32_t c : cols) used[c] = 1;
  number_smoothed_columns(comm, p_tent, global_of, used, columns);

  dist::DistMatrix p = smoothed_shell(p_tent, columns);
  const std::vector<std::int32_t>& to_p = columns.to_p;
  const std::vector<std::int32_t> tent_ghost = columns_in(p.ghost_cols, p_tent.ghost_cols, p_tent.nonlocal);
  const Csr<double>&tl = p_tent.local, &tn = p_tent.nonlocal;
  // A P_tent's owned columns read through to_p in place; its few outside entries are copied.
  struct Renumbered {
    const std::int32_t* compact;
    const std::int32_t* to_p;
    std::int32_t operator[](std::int64_t t) const { return to_p[compact[t]]; }
  };
  // Each range merges its rows into its own pieces of both blocks, as the serial loop would;
  // stack_rows joins them in order.
  std::vector<Csr<double>> local_pieces(static_cast<std::size_t>(rows.count()));
  std::vector<Csr<double>> nonlocal_pieces(local_pieces.size());
  if (record) {
    *record = SmoothedValueMap{};
    record->pieces.resize(local_pieces.size());
  }
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    Csr<double>& local = local_pieces[range] = Csr<double>::empty(end - begin, tl.cols);
    Csr<double>& nonlocal = nonlocal_pieces[range] = Csr<double>::empty(end - begin, static_cast<std::int64_t>(p.ghost_cols.size()));
    // Sized for the union's upper bound, trimmed to the entries written at the end.
    const auto outside = static_cast<std::int64_t>(outside_in[range].size());
    for (auto [block, bound] : {std::pair{&local, tl.row_ptr[end] - tl.row_ptr[begin] + ap.row_ptr[end] - ap.row_ptr[begin] - outside},
                                {&nonlocal, tn.row_ptr[end] - tn.row_ptr[begin] + outside}}) {
      block->col_idx.resize(static_cast<std::size_t>(bound));
      block->values.resize(static_cast<std::size_t>(bound));
    }
    std::vector<std::int32_t> outside_cols;  // one row's outside entries in P's ghost numbering
    std::vector<double> outside_values;
    SmoothedValueMap::Piece* piece = record ? &record->pieces[range] : nullptr;
    if (piece) {
      piece->rows_begin = begin, piece->rows_end = end;
      for (auto* v : {&piece->local_tent, &piece->local_ap}) v->reserve(local.col_idx.size());
      for (auto* v : {&piece->nonlocal_tent, &piece->nonlocal_ap}) v->reserve(nonlocal.col_idx.size());
    }
    std::int64_t in_local = 0, in_nonlocal = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double scale = -omega * inv_diag[i];
      const auto [s, lo, hi, e] = split(i);
      outside_cols.clear();
      outside_values.clear();
      for (auto [from, to] : {std::pair{s, lo}, {hi, e}})
        for (std::int64_t k = from; k < to; ++k) {
          outside_cols.push_back(to_p[ap.col_idx[k]]);
          outside_values.push_back(ap.values[k]);
        }
      in_local += write_smoothed_row(tl.col_idx.data() + tl.row_ptr[i], tl.values.data() + tl.row_ptr[i],
                                     tl.row_length(i), Renumbered{ap.col_idx.data() + lo, to_p.data()},
                                     ap.values.data() + lo, hi - lo, scale, local.col_idx.data() + in_local,
                                     local.values.data() + in_local);
      local.row_ptr[i - begin + 1] = in_local;
      in_nonlocal += write_smoothed_row(tent_ghost.data() + tn.row_ptr[i], tn.values.data() + tn.row_ptr[i],
                                        tn.row_length(i), outside_cols.data(), outside_values.data(), e - hi + lo - s,
                                        scale, nonlocal.col_idx.data() + in_nonlocal,
                                        nonlocal.values.data() + in_nonlocal);
      nonlocal.row_ptr[i - begin + 1] = in_nonlocal;
      if (!piece) continue;
      // The same merges again, for where each value came from: P_tent's values numbered
      // [local | non-local], A P_tent's by entry (an outside entry t sits at s + t left of the
      // owned range, else at hi + t - (lo - s)).
      const std::int64_t tl_first = tl.row_ptr[i], tn_first = tl.nnz() + tn.row_ptr[i];
      const std::int64_t left = lo - s, row_s = s, row_lo = lo, row_hi = hi;  // (lambdas cannot capture bindings)
      merge_smoothed_row(tl.col_idx.data() + tl.row_ptr[i], tl.row_length(i),
                         Renumbered{ap.col_idx.data() + lo, to_p.data()}, hi - lo,
                         [&](std::int32_t, std::int64_t from_tent, std::int64_t from_ap) {
                           piece->local_tent.push_back(from_tent < 0 ? -1 : tl_first + from_tent);
                           piece->local_ap.push_back(from_ap < 0 ? -1 : row_lo + from_ap);
                         });
      merge_smoothed_row(tent_ghost.data() + tn.row_ptr[i], tn.row_length(i), outside_cols.data(), e - hi + left,
                         [&](std::int32_t, std::int64_t from_tent, std::int64_t t) {
                           const std::int64_t from_ap = t < 0 ? -1 : t < left ? row_s + t : row_hi + t - left;
                           piece->nonlocal_tent.push_back(from_tent < 0 ? -1 : tn_first + from_tent);
                           piece->nonlocal_ap.push_back(from_ap);
                         });
    }
    for (auto [block, n] : {std::pair{&local, in_local}, {&nonlocal, in_nonlocal}}) {
      block->col_idx.resize(static_cast<std::size_t>(n));
      block->values.resize(static_cast<std::size_t>(n));
    }
  });
  p.local = stack_rows(local_pieces, tl.cols);
  p.nonlocal = stack_rows(nonlocal_pieces, static_cast<std::int64_t>(p.ghost_cols.size()));
  if (record) {
    record->tent_entries = p_tent.nnz();
    record->ap_entries = ap.nnz();
    record->p_entries = p.nnz();
  }
  return p;
}

SmoothedProlongator dist_smoothed_prolongator(const dist::Communicator& comm, dist::CompactSpgemm& a_times_p_tent,
                                              const dist::DistMatrix& p_tent, const Vector& inv_diag, double omega) {
  const Csr<double> ap = a_times_p_tent.multiply(comm);
  return {smoothed_blocks(comm, p_tent, ap, a_times_p_tent.compact_to_global(), inv_diag, omega), std::nullopt};
}

void replay_smoothing(const SmoothedValueMap& map, const dist::DistMatrix& p_tent, const Csr<double>& ap,
                      const Vector& inv_diag, double omega, dist::DistMatrix& p) {
  TESSERA_TRACE_STEP("replay");
  TESSERA_ASSERT(map.tent_entries == p_tent.nnz() && map.ap_entries == ap.nnz() && map.p_entries == p.nnz() &&
                     static_cast<std::int64_t>(inv_diag.size()) == p.owned_rows(),
                 "replay_smoothing: the operands' patterns are not the recorded ones");
  // The record numbers P_tent's values [local | non-local].
  const std::int64_t tent_local = p_tent.local.nnz();
  const auto value = [&](std::int64_t from_tent, std::int64_t from_ap, double scale) {
    return from_tent < tent_local
               ? smoothed_value(p_tent.local.values.data(), from_tent, ap.values.data(), from_ap, scale)
               : smoothed_value(p_tent.nonlocal.values.data(), from_tent - tent_local, ap.values.data(), from_ap, scale);
  };
  // Each piece on a thread of its own, as the merge wrote it.
  host::for_ranges(static_cast<std::int64_t>(map.pieces.size()), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) {
      const SmoothedValueMap::Piece& piece = map.pieces[static_cast<std::size_t>(r)];
      const std::int64_t local_0 = p.local.row_ptr[piece.rows_begin], nonlocal_0 = p.nonlocal.row_ptr[piece.rows_begin];
      for (std::int64_t i = piece.rows_begin; i < piece.rows_end; ++i) {
        const double scale = -omega * inv_diag[i];  // smoothed_blocks' scale, bit for bit
        for (std::int64_t j = p.local.row_ptr[i]; j < p.local.row_ptr[i + 1]; ++j)
          p.local.values[j] = value(piece.local_tent[j - local_0], piece.local_ap[j - local_0], scale);
        for (std::int64_t j = p.nonlocal.row_ptr[i]; j < p.nonlocal.row_ptr[i + 1]; ++j)
          p.nonlocal.values[j] = value(piece.nonlocal_tent[j - nonlocal_0], piece.nonlocal_ap[j - nonlocal_0], scale);
      }
    }
  }, 1);
}

}  // namespace tessera::amg
