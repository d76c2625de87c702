#include "amg/dist/dist_filtered_operator.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "amg/dist/dist_exchange.hpp"
#include "local/core/error.hpp"
#include "local/core/host_array.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::amg {
namespace {

/// Per ghost column of `a`: the index of its node among the graph's ghost nodes, or -1 where
/// the graph has no edge to that node from any owned node (then no entry in its column is kept).
std::vector<std::int64_t> ghost_graph_index(const dist::Communicator& comm, const dist::DistMatrix& a,
                                            const DistNodes& nodes, const dist::DistMatrix& graph) {
  std::vector<std::int64_t> owned_node(static_cast<std::size_t>(a.owned_rows()));
  for (std::int64_t i = 0; i < a.owned_rows(); ++i) owned_node[i] = nodes.first + nodes.node_of(i);
  const std::vector<std::int64_t> ghost_node = halo_values(comm, a, owned_node);
  std::vector<std::int64_t> index(ghost_node.size(), -1);
  for (std::size_t g = 0; g < ghost_node.size(); ++g) {
    const auto at = std::lower_bound(graph.ghost_cols.begin(), graph.ghost_cols.end(), ghost_node[g]);
    if (at != graph.ghost_cols.end() && *at == ghost_node[g]) index[g] = at - graph.ghost_cols.begin();
  }
  return index;
}

/// Flags (set to `value`) the strong neighbours of owned node n: owned ones in `owned`, other
/// ranks' in `ghost` (by the graph's ghost index).
void flag_neighbours(const dist::DistMatrix& graph, std::int64_t n, char value, std::vector<char>& owned,
                     std::vector<char>& ghost) {
  for (std::int64_t q = graph.local.row_ptr[n]; q < graph.local.row_ptr[n + 1]; ++q)
    owned[graph.local.col_idx[q]] = value;
  for (std::int64_t q = graph.nonlocal.row_ptr[n]; q < graph.nonlocal.row_ptr[n + 1]; ++q)
    ghost[graph.nonlocal.col_idx[q]] = value;
}

/// Which entries of A (numbered [local | non-local]) A_F keeps, and each row's kept count in
/// both blocks (A_F's row lengths). Ranges of nodes in parallel, each with its own flags.
struct KeptEntries {
  HostArray<char> entry;  // every one written by kept_entries
  Csr<double> local, nonlocal;  // row_ptr only, so far
};

KeptEntries kept_entries(const dist::DistMatrix& a, const DistNodes& nodes, const dist::DistMatrix& graph,
                         const std::vector<std::int64_t>& ghost_in_graph) {
  const std::int64_t rows = a.owned_rows(), local_entries = a.local.nnz();
  KeptEntries k{HostArray<char>(static_cast<std::size_t>(a.nnz())), Csr<double>::empty(rows, a.local.cols),
                Csr<double>::empty(rows, a.nonlocal.cols)};
  host::for_ranges(nodes.count(), [&](std::int64_t first, std::int64_t last) {
    std::vector<char> owned_strong(static_cast<std::size_t>(nodes.count()), 0);
    std::vector<char> ghost_strong(graph.ghost_cols.size(), 0);
    for (std::int64_t n = first; n < last; ++n) {
      flag_neighbours(graph, n, 1, owned_strong, ghost_strong);
      for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i) {
        std::int64_t local_kept = 0, nonlocal_kept = 0;
        for (std::int64_t p = a.local.row_ptr[i]; p < a.local.row_ptr[i + 1]; ++p) {
          const std::int64_t m = nodes.node_of(a.local.col_idx[p]);
          local_kept += k.entry[p] = m == n || owned_strong[m];
        }
        for (std::int64_t p = a.nonlocal.row_ptr[i]; p < a.nonlocal.row_ptr[i + 1]; ++p) {
          const std::int64_t g = ghost_in_graph[a.nonlocal.col_idx[p]];  // never n's: a node stays on its rank
          nonlocal_kept += k.entry[local_entries + p] = g >= 0 && ghost_strong[g];
        }
        k.local.row_ptr[i + 1] = local_kept, k.nonlocal.row_ptr[i + 1] = nonlocal_kept;
      }
      flag_neighbours(graph, n, 0, owned_strong, ghost_strong);
    }
  });
  for (std::int64_t i = 0; i < rows; ++i) {
    k.local.row_ptr[i + 1] += k.local.row_ptr[i];
    k.nonlocal.row_ptr[i + 1] += k.nonlocal.row_ptr[i];
  }
  return k;
}

/// A_F's columns and the map (target) from the kept flags, ranges of rows in parallel: a kept
/// entry goes to its place in A_F, a dropped one to its row's diagonal. The first owned row
/// without a diagonal (-1 if none).
std::int64_t fill_pattern(const dist::DistMatrix& a, KeptEntries& k, HostArray<std::int64_t>& target) {
  const std::int64_t rows = a.owned_rows(), local_entries = a.local.nnz(), f_local = k.local.row_ptr[rows];
  k.local.col_idx.resize(static_cast<std::size_t>(f_local));
  k.nonlocal.col_idx.resize(static_cast<std::size_t>(k.nonlocal.row_ptr[rows]));
  target.resize(static_cast<std::size_t>(a.nnz()));
  const host::RangeSplit ranges(rows);
  std::vector<std::int64_t> missing(static_cast<std::size_t>(ranges.count()), -1);
  ranges.run([&](int range, std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) {
      std::int64_t at = k.local.row_ptr[i], diagonal = -1;
      for (std::int64_t p = a.local.row_ptr[i]; p < a.local.row_ptr[i + 1]; ++p) {
        if (!k.entry[p]) continue;
        if (a.local.col_idx[p] == i) diagonal = at;
        k.local.col_idx[at] = a.local.col_idx[p];
        target[p] = at++;
      }
      if (diagonal < 0) {
        if (missing[range] < 0) missing[range] = i;
        continue;
      }
      for (std::int64_t p = a.local.row_ptr[i]; p < a.local.row_ptr[i + 1]; ++p)
        if (!k.entry[p]) target[p] = diagonal;
      at = k.nonlocal.row_ptr[i];
      for (std::int64_t p = a.nonlocal.row_ptr[i]; p < a.nonlocal.row_ptr[i + 1]; ++p) {
        const std::int64_t e = local_entries + p;
        if (!k.entry[e]) {
          target[e] = diagonal;
          continue;
        }
        k.nonlocal.col_idx[at] = a.nonlocal.col_idx[p];
        target[e] = f_local + at++;
      }
    }
  });
  for (std::int64_t row : missing)
    if (row >= 0) return row;
  return -1;
}

}  // namespace

std::optional<DistFilteredOperator> dist_filtered_operator(const dist::Communicator& comm, const dist::DistMatrix& a,
                                                           const DistNodes& nodes, const dist::DistMatrix& graph) {
  TESSERA_ASSERT(graph.local.rows == nodes.count() && nodes.ptr.back() == a.owned_rows(),
                 "filtered operator: A's rows, its nodes and the strength graph disagree");
  std::optional<trace::Step> step(std::in_place, "ghost_nodes");
  const std::vector<std::int64_t> ghost_in_graph = ghost_graph_index(comm, a, nodes, graph);
  step.emplace("kept_entries");
  KeptEntries k = kept_entries(a, nodes, graph, ghost_in_graph);
  const std::int64_t rows = a.owned_rows();
  const std::int64_t dropped =
      comm.allreduce(a.nnz() - k.local.row_ptr[rows] - k.nonlocal.row_ptr[rows], dist::ReduceOp::sum);
  if (dropped == 0) return std::nullopt;
  step.emplace("fill_pattern");
  HostArray<std::int64_t> target;  // every entry written by fill_pattern (or the rank throws)
  const std::int64_t missing = fill_pattern(a, k, target);
  dist::throw_if_any_rank_failed(comm, missing < 0 ? ""
                                                   : tessera::detail::concat("filtered operator: rank ", comm.rank(),
                                                                             ": owned row ", missing,
                                                                             " of A holds no diagonal entry"));
  k.local.values = filled_on_threads(k.local.col_idx.size(), 0.0);  // A_F's size, at level 0 A's
  k.nonlocal.values = filled_on_threads(k.nonlocal.col_idx.size(), 0.0);
  step.reset();
  // Drops the ghosts no kept entry uses (renumbering the non-local columns keeps every entry's
  // place, so `target` holds) and builds A_F's halo plan.
  return DistFilteredOperator{dist::assemble_blocks(comm, std::move(k.local), std::move(k.nonlocal), a.ghost_cols,
                                                    a.row_partition, a.col_partition),
                              std::move(target)};
}

void refresh_dist_filtered_values(const dist::DistMatrix& a, DistFilteredOperator& f) {
  TESSERA_ASSERT(static_cast<std::int64_t>(f.target.size()) == a.nnz() && f.a.owned_rows() == a.owned_rows(),
                 "filtered operator: A's pattern changed");
  const std::int64_t a_local = a.local.nnz(), f_local = f.a.local.nnz();
  // A's ghosts left of the owned columns come first in a row's global column order.
  const std::int64_t left_ghosts =
      std::lower_bound(a.ghost_cols.begin(), a.ghost_cols.end(), a.col_begin()) - a.ghost_cols.begin();
  const auto add = [&](std::int64_t t, double v) {
    if (t < f_local)
      f.a.local.values[t] += v;
    else
      f.a.nonlocal.values[t - f_local] += v;
  };
  // Every target of row i lies in A_F's row i: ranges of rows are independent.
  host::for_ranges(a.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    std::fill(f.a.local.values.begin() + f.a.local.row_ptr[begin],
              f.a.local.values.begin() + f.a.local.row_ptr[end], 0.0);
    std::fill(f.a.nonlocal.values.begin() + f.a.nonlocal.row_ptr[begin],
              f.a.nonlocal.values.begin() + f.a.nonlocal.row_ptr[end], 0.0);
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t s = a.nonlocal.row_ptr[i], e = a.nonlocal.row_ptr[i + 1];
      const std::int64_t split =
          std::lower_bound(a.nonlocal.col_idx.begin() + s, a.nonlocal.col_idx.begin() + e, left_ghosts) -
          a.nonlocal.col_idx.begin();
      for (std::int64_t p = s; p < split; ++p) add(f.target[a_local + p], a.nonlocal.values[p]);
      for (std::int64_t p = a.local.row_ptr[i]; p < a.local.row_ptr[i + 1]; ++p) add(f.target[p], a.local.values[p]);
      for (std::int64_t p = split; p < e; ++p) add(f.target[a_local + p], a.nonlocal.values[p]);
    }
  });
}

}  // namespace tessera::amg
