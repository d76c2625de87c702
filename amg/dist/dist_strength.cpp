#include "amg/dist/dist_strength.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "amg/dist/dist_exchange.hpp"
#include "amg/strength_rule.hpp"
#include "dist/transpose.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/host_sort_unique.hpp"
#include "local/core/step_trace.hpp"
#include "local/formats/nonempty_rows.hpp"
#include "local/formats/stack_rows.hpp"

namespace tessera::amg {
namespace {

// A surface node's edges take a fraction of a microsecond (its blocks gathered, summed and
// scaled): a range of the surface gets at least this many nodes, so that starting a thread pays.
constexpr std::int64_t kSurfaceNodesARange = 512;

struct NodeNorm {
  std::int64_t node;    // global node of a dof
  double diagonal_norm; // ||A_II|| of that node
};

/// Node id and diagonal block norm of every column of A: owned columns from this rank's
/// table, ghost columns from the halo exchange.
class ColumnNodes {
 public:
  ColumnNodes(const dist::DistMatrix& a, std::vector<NodeNorm> owned, std::vector<NodeNorm> ghost)
      : a_(a), owned_(std::move(owned)), ghost_(std::move(ghost)) {}
  const NodeNorm& of(std::int64_t global_col) const {
    const std::int64_t local = global_col - a_.col_begin();
    if (local >= 0 && local < a_.local.cols) return owned_[local];
    return ghost_[std::lower_bound(a_.ghost_cols.begin(), a_.ghost_cols.end(), global_col) - a_.ghost_cols.begin()];
  }

 private:
  const dist::DistMatrix& a_;
  std::vector<NodeNorm> owned_, ghost_;
};

struct BlockNorm {
  std::int64_t node;
  double sum_sq, diagonal_norm;  // ||A_IJ||^2 and ||A_JJ||
};

/// Squares summed per column node, nodes increasing, in place: `entries` become the sums.
/// `entries` are in the serial order (the node row's dofs, each row in global column order); the
/// stable sort keeps that order within a node, so the sums round as strength_graph()'s do. With
/// one dof a node they come sorted (a row's global columns, and so its nodes, increase), and the
/// sort is skipped.
void sum_per_node(std::vector<BlockNorm>& entries) {
  const auto by_node = [](const BlockNorm& x, const BlockNorm& y) { return x.node < y.node; };
  if (!std::is_sorted(entries.begin(), entries.end(), by_node))
    std::stable_sort(entries.begin(), entries.end(), by_node);
  std::size_t sums = 0;
  for (const BlockNorm& e : entries) {
    if (sums > 0 && entries[sums - 1].node == e.node)
      entries[sums - 1].sum_sq += e.sum_sq;
    else
      entries[sums++] = e;
  }
  entries.resize(sums);
}

/// The blocks of node row n, sorted by column node, into `entries` (reused along a range).
void block_row(const RowBlock& rows, const DistNodes& nodes, const ColumnNodes& columns, std::int64_t n, double scale,
               std::vector<BlockNorm>& entries) {
  entries.clear();
  for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i)
    for (std::int64_t p = rows.row_ptr[i]; p < rows.row_ptr[i + 1]; ++p) {
      const NodeNorm& c = columns.of(rows.col[p]);
      entries.push_back({c.node, scaled_square(rows.values[p], scale), c.diagonal_norm});
    }
  sum_per_node(entries);
}

/// ||s A_II|| of owned node n. The node's own block lies in the local block (a node never spans
/// ranks), whose rows are in global column order: the serial summation order (dofs, then row
/// order).
double own_block_norm(const Csr<double>& local, const DistNodes& nodes, std::int64_t n, double scale) {
  double sum_sq = 0.0;
  for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i)
    for (std::int64_t p = local.row_ptr[i]; p < local.row_ptr[i + 1]; ++p)
      if (local.col_idx[p] >= nodes.ptr[n] && local.col_idx[p] < nodes.ptr[n + 1])
        sum_sq += scaled_square(local.values[p], scale);
  return std::sqrt(sum_sq);
}

/// The node and its ||A_II|| attached to each dof of owned node n.
void set_node_norm(const dist::DistMatrix& a, const DistNodes& nodes, std::int64_t n, double scale,
                   std::vector<NodeNorm>& owned) {
  const double norm = own_block_norm(a.local, nodes, n, scale);
  for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i) owned[i] = {nodes.first + n, norm};
}

/// ||A_II|| of every owned node, attached to each of its dofs.
std::vector<NodeNorm> owned_node_norms(const dist::DistMatrix& a, const DistNodes& nodes, double scale) {
  std::vector<NodeNorm> owned(static_cast<std::size_t>(a.owned_rows()));
  host::for_ranges(nodes.count(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n) set_node_norm(a, nodes, n, scale, owned);
  });
  return owned;
}

/// The owned nodes with an entry in a ghost column (where cross-rank edges start), increasing:
/// the rank's surface, the nodes of the non-local block's rows that hold entries (none on one
/// rank).
std::vector<std::int64_t> surface_nodes(const dist::DistMatrix& a, const DistNodes& nodes) {
  std::vector<std::int64_t> surface;
  for_each_nonempty_row(a.nonlocal.row_ptr.data(), a.owned_rows(), [&](std::int64_t dof) {
    const std::int64_t n = nodes.node_of(dof);  // dofs increase, so nodes do too
    if (surface.empty() || surface.back() != n) surface.push_back(n);
  });
  return surface;
}

/// The {node, ||A_II||} pair of each dof A's halo sends (the owned dof's node, whose norm
/// set_node_norm would attach), in send order: what halo_values would send from a table over
/// every dof, computed for the sent dofs only (a surface of a 3D grid).
std::vector<NodeNorm> sent_node_norms(const dist::DistMatrix& a, const DistNodes& nodes, double scale) {
  const std::vector<std::int64_t>& sent = a.halo.send_local;
  std::vector<NodeNorm> out(sent.size());
  host::for_ranges(static_cast<std::int64_t>(sent.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t n = nodes.node_of(sent[i]);
      out[i] = {nodes.first + n, own_block_norm(a.local, nodes, n, scale)};
    }
  });
  return out;
}

/// A strong edge between an owned node (`row`, this rank's index) and a global node. A list
/// holds an edge once, so (row, col) identifies it.
struct NodeEdge {
  std::int64_t row, col;
  double strength;
  bool operator<(const NodeEdge& o) const { return std::tie(row, col) < std::tie(o.row, o.col); }
  bool operator==(const NodeEdge& o) const { return row == o.row && col == o.col; }
};

/// Two lists of edges sorted by (row, col) as one, the larger strength where both hold an
/// edge (the serial union_max of the two directions).
std::vector<NodeEdge> union_max(const std::vector<NodeEdge>& s, const std::vector<NodeEdge>& t) {
  std::vector<NodeEdge> u;
  u.reserve(s.size() + t.size());
  std::size_t p = 0, q = 0;
  while (p < s.size() || q < t.size()) {
    if (q == t.size() || (p < s.size() && s[p] < t[q])) {
      u.push_back(s[p++]);
    } else if (p == s.size() || t[q] < s[p]) {
      u.push_back(t[q++]);
    } else {
      u.push_back({s[p].row, s[p].col, std::max(0.0, std::max(s[p].strength, t[q].strength))});
      ++p, ++q;
    }
  }
  return u;
}

/// An empty row block over this rank's nodes [begin, end) (its rows to be filled in order).
RowBlock node_rows(const DistNodes& nodes, std::int64_t begin, std::int64_t end) {
  RowBlock rows;
  rows.global_rows = rows.global_cols = nodes.partition.global_rows();
  rows.row_begin = nodes.first + begin;
  rows.row_end = nodes.first + end;
  rows.row_ptr.assign(static_cast<std::size_t>(end - begin) + 1, 0);
  return rows;
}

/// The rows of this rank's nodes, filled by ranges of nodes on the rank's threads. Each range
/// gets its own row writer from new_writer() (which may keep scratch along the range), and
/// append(n, rows) appends node n's row to the range's piece, as the serial loop would append
/// it to the whole; stack_rows joins the pieces in node order, the serial result bit for bit.
template <class NewWriter>
RowBlock node_rows_by_ranges(const DistNodes& nodes, NewWriter&& new_writer) {
  const host::RangeSplit ranges(nodes.count());
  std::vector<RowBlock> pieces(static_cast<std::size_t>(ranges.count()));
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    RowBlock& piece = pieces[range] = node_rows(nodes, begin, end);
    auto append = new_writer();
    for (std::int64_t n = begin; n < end; ++n) {
      append(n, piece);
      piece.row_ptr[n - begin + 1] = piece.nnz();
    }
  });
  return stack_rows(pieces);
}

/// Row-wise union of two row blocks over this rank's nodes with the larger value (the serial
/// union_max).
RowBlock union_max(const DistNodes& nodes, const RowBlock& s, const RowBlock& t) {
  return node_rows_by_ranges(nodes, [&] {
    return [&](std::int64_t i, RowBlock& u) {
      std::int64_t p = s.row_ptr[i], q = t.row_ptr[i];
      while (p < s.row_ptr[i + 1] || q < t.row_ptr[i + 1]) {
        const std::int64_t cp = p < s.row_ptr[i + 1] ? s.col[p] : INT64_MAX;
        const std::int64_t cq = q < t.row_ptr[i + 1] ? t.col[q] : INT64_MAX;
        const std::int64_t c = std::min(cp, cq);
        double v = 0.0;
        if (cp == c) v = std::max(v, s.values[p++]);
        if (cq == c) v = std::max(v, t.values[q++]);
        u.col.push_back(c);
        u.values.push_back(v);
      }
    };
  });
}

/// max |v| over `values`, ranges of them on the rank's threads.
template <class Values>
double max_abs_on_threads(const Values& values) {
  const host::RangeSplit ranges(static_cast<std::int64_t>(values.size()));
  std::vector<double> range_max(static_cast<std::size_t>(ranges.count()), 0.0);
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    double m = 0.0;
    for (std::int64_t p = begin; p < end; ++p) m = std::max(m, std::fabs(values[p]));
    range_max[range] = m;
  });
  return *std::max_element(range_max.begin(), range_max.end());
}

}  // namespace

DistNodes uniform_dist_nodes(const dist::Communicator& comm, const dist::DistMatrix& a, int block_size) {
  const bool whole = block_size >= 1 && a.row_begin() % block_size == 0 && a.owned_rows() % block_size == 0;
  dist::throw_if_any_rank_failed(
      comm, whole ? "" : tessera::detail::concat("AMG: rank ", comm.rank(), " owns rows [", a.row_begin(), ", ",
                                        a.row_begin() + a.owned_rows(), "), which splits a node of ", block_size,
                                        " dofs; partition the rows in whole nodes"));
  DistNodes nodes;
  nodes.first = a.row_begin() / block_size;
  // uniform_nodes on the rank's threads: at 7M nodes a serial fill took 0.013 s of a 0.29 s
  // setup on the H100 host (docs/performance.md, fifty-fifth session).
  nodes.ptr.resize(static_cast<std::size_t>(a.owned_rows() / block_size + 1));
  host::for_ranges(static_cast<std::int64_t>(nodes.ptr.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n) nodes.ptr[static_cast<std::size_t>(n)] = n * block_size;
  });
  nodes.dofs_per_node = block_size;
  nodes.partition = dist::RowPartition::from_counts(comm, nodes.count());
  return nodes;
}

DistNodes dist_nodes_from_sizes(const dist::Communicator& comm, const std::vector<std::int64_t>& sizes) {
  DistNodes nodes;
  nodes.ptr.reserve(sizes.size() + 1);  // 262K aggregates at poisson3d:192's level 0
  for (std::int64_t s : sizes) nodes.ptr.push_back(nodes.ptr.back() + s);
  const bool uniform = std::all_of(sizes.begin(), sizes.end(), [&](std::int64_t s) { return s == sizes.front(); });
  nodes.dofs_per_node = !sizes.empty() && uniform ? sizes.front() : 0;
  nodes.partition = dist::RowPartition::from_counts(comm, nodes.count());
  nodes.first = nodes.partition.begin(comm.rank());
  return nodes;
}

double dist_strength_scale(const dist::Communicator& comm, const dist::DistMatrix& a) {
  const double mine = std::max(max_abs_on_threads(a.local.values), max_abs_on_threads(a.nonlocal.values));
  return strength_scale(comm.allreduce(mine, dist::ReduceOp::max));
}

dist::DistMatrix dist_strength_graph(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                     double theta) {
  const double scale = dist_strength_scale(comm, a);
  const RowBlock rows = dist::owned_row_block(a);
  std::vector<NodeNorm> owned = owned_node_norms(a, nodes, scale);
  std::vector<NodeNorm> ghost = halo_values(comm, a, owned);  // the one halo exchange
  const ColumnNodes columns(a, std::move(owned), std::move(ghost));

  const RowBlock s = node_rows_by_ranges(nodes, [&] {
    return [&, blocks = std::vector<BlockNorm>()](std::int64_t n, RowBlock& out) mutable {  // blocks: one node's
      block_row(rows, nodes, columns, n, scale, blocks);
      double own_norm = 0.0;
      for (const BlockNorm& b : blocks)
        if (b.node == nodes.first + n) own_norm = b.diagonal_norm;
      for (const BlockNorm& b : blocks) {
        if (b.node == nodes.first + n) continue;
        const double strength = strong_value(b.sum_sq, own_norm, b.diagonal_norm, theta);
        if (strength > 0) {
          out.col.push_back(b.node);
          out.values.push_back(strength);
        }
      }
    };
  });
  const dist::DistMatrix one_way = dist::assemble(comm, s, nodes.partition);
  const dist::DistMatrix other_way = dist::transpose(comm, one_way);
  return dist::assemble(comm, union_max(nodes, s, dist::owned_row_block(other_way)), nodes.partition);
}

CrossRankEdges cross_rank_strength(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                   double theta, std::optional<double> scale) {
  dist::throw_if_any_rank_failed(
      comm, nodes.ptr.back() == a.owned_rows()
                ? ""
                : tessera::detail::concat("AMG strength: rank ", comm.rank(), "'s nodes cover ", nodes.ptr.back(),
                                          " dofs, it owns ", a.owned_rows(), " rows"));
  std::optional<trace::Step> step(std::in_place, "node_norms");
  const double factor = scale ? *scale : dist_strength_scale(comm, a);
  const std::vector<NodeNorm> ghost = halo_exchange(comm, a, sent_node_norms(a, nodes, factor));  // the one exchange
  // This rank's direction: node n's blocks with ghost nodes, all in the non-local block, whose
  // rows are in ghost (= global) column order. Only the surface nodes have any. They lie in a few
  // runs of consecutive nodes, so ranges of the surface list (not of all nodes) share them out:
  // each lists its edges, joined in node order.
  const Csr<double>& nl = a.nonlocal;
  step.emplace("surface");
  const std::vector<std::int64_t> surface = surface_nodes(a, nodes);
  step.emplace("edges");
  const host::RangeSplit surface_ranges(static_cast<std::int64_t>(surface.size()), kSurfaceNodesARange);
  std::vector<std::vector<NodeEdge>> mine_in(static_cast<std::size_t>(surface_ranges.count()));
  surface_ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    std::vector<BlockNorm> entries;  // one node's, reused along the range
    for (std::int64_t s = begin; s < end; ++s) {
      const std::int64_t n = surface[static_cast<std::size_t>(s)];
      entries.clear();
      for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i)
        for (std::int64_t p = nl.row_ptr[i]; p < nl.row_ptr[i + 1]; ++p) {
          const NodeNorm& c = ghost[static_cast<std::size_t>(nl.col_idx[p])];
          entries.push_back({c.node, scaled_square(nl.values[p], factor), c.diagonal_norm});
        }
      sum_per_node(entries);
      const double own_norm = own_block_norm(a.local, nodes, n, factor);
      for (const BlockNorm& b : entries) {
        const double strength = strong_value(b.sum_sq, own_norm, b.diagonal_norm, theta);
        if (strength != 0) mine_in[range].push_back({n, b.node, strength});
      }
    }
  });
  std::vector<NodeEdge> mine;
  for (const std::vector<NodeEdge>& edges : mine_in) mine.insert(mine.end(), edges.begin(), edges.end());
  // Each edge also goes, transposed, to the owner of its far node (one all-to-all); what the
  // other ranks kept towards this rank's nodes comes back the same way.
  step.emplace("transposed_edges");
  std::vector<std::vector<NodeEdge>> transposed(static_cast<std::size_t>(comm.size()));
  for (const NodeEdge& e : mine)
    transposed[static_cast<std::size_t>(nodes.partition.owner(e.col))].push_back({e.col, nodes.first + e.row, e.strength});
  std::vector<NodeEdge> theirs = route(comm, transposed);
  for (NodeEdge& e : theirs) e.row -= nodes.first;
  const std::size_t received = theirs.size();
  host::sort_unique(theirs);  // in parallel; an edge comes once (from its far node's owner)
  TESSERA_ASSERT(theirs.size() == received, "AMG strength: ", received - theirs.size(), " cross-rank edges came twice");
  const std::vector<NodeEdge> both = union_max(mine, theirs);

  // The rows with edges, in node order (`both` is sorted by node, then by the node at the other end).
  step.emplace("rows");
  CrossRankEdges out;
  out.node.reserve(both.size());
  out.strength.reserve(both.size());
  for (const NodeEdge& e : both) {
    if (out.rows.empty() || out.rows.back() != e.row) {
      out.rows.push_back(e.row);
      out.ptr.push_back(out.ptr.back());
    }
    ++out.ptr.back();
    out.node.push_back(e.col);
    out.strength.push_back(e.strength);
  }
  return out;
}

}  // namespace tessera::amg
