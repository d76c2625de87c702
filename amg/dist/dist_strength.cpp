#include "amg/dist/dist_strength.hpp"

#include <algorithm>
#include <cmath>

#include "amg/dist/dist_exchange.hpp"
#include "dist/transpose.hpp"

namespace tessera::amg {
namespace {

struct NodeNorm {
  std::int64_t node;    // global node of a dof
  double diagonal_norm; // ||A_II|| of that node
};

dist::RowPartition node_partition(const dist::Communicator& comm, std::int64_t count) {
  const std::vector<std::int64_t> counts = comm.allgather(count);
  std::vector<std::int64_t> offsets{0};
  for (std::int64_t c : counts) offsets.push_back(offsets.back() + c);
  // Node counts per rank are whatever aggregation produced: no tile alignment (dist/partition.hpp).
  return dist::RowPartition::from_offsets(comm, offsets.back(), offsets, dist::Alignment::any);
}

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

/// The blocks of node row n, sorted by column node. Squares are summed per column node in
/// global column order, as strength_graph() does (same summation order, same rounding).
std::vector<BlockNorm> block_row(const RowBlock& rows, const DistNodes& nodes, const ColumnNodes& columns,
                                 std::int64_t n) {
  std::vector<BlockNorm> entries;
  for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i)
    for (std::int64_t p = rows.row_ptr[i]; p < rows.row_ptr[i + 1]; ++p) {
      const NodeNorm& c = columns.of(rows.col[p]);
      entries.push_back({c.node, rows.values[p] * rows.values[p], c.diagonal_norm});
    }
  std::stable_sort(entries.begin(), entries.end(), [](auto& x, auto& y) { return x.node < y.node; });
  std::vector<BlockNorm> sums;
  for (const BlockNorm& e : entries) {  // stable sort: per node, the serial order
    if (sums.empty() || sums.back().node != e.node) sums.push_back({e.node, 0.0, e.diagonal_norm});
    sums.back().sum_sq += e.sum_sq;
  }
  return sums;
}

/// ||A_II|| of every owned node, attached to each of its dofs.
std::vector<NodeNorm> owned_node_norms(const RowBlock& rows, const DistNodes& nodes, const dist::DistMatrix& a) {
  std::vector<NodeNorm> owned(static_cast<std::size_t>(a.owned_rows()), NodeNorm{0, 0.0});
  for (std::int64_t n = 0; n < nodes.count(); ++n)
    for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i) owned[i].node = nodes.first + n;
  for (std::int64_t n = 0; n < nodes.count(); ++n) {
    double sum_sq = 0.0;  // node n's own block, summed in the serial order (dofs, then row order)
    for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i)
      for (std::int64_t p = rows.row_ptr[i]; p < rows.row_ptr[i + 1]; ++p) {
        const std::int64_t local = rows.col[p] - a.col_begin();
        if (local >= nodes.ptr[n] && local < nodes.ptr[n + 1]) sum_sq += rows.values[p] * rows.values[p];
      }
    for (std::int64_t i = nodes.ptr[n]; i < nodes.ptr[n + 1]; ++i) owned[i].diagonal_norm = std::sqrt(sum_sq);
  }
  return owned;
}

/// Row-wise union of two row blocks with the larger value (the serial union_max).
RowBlock union_max(const RowBlock& s, const RowBlock& t) {
  RowBlock u = s;
  u.col.clear();
  u.values.clear();
  for (std::int64_t i = 0; i < s.local_rows(); ++i) {
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
    u.row_ptr[i + 1] = u.nnz();
  }
  return u;
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
  nodes.ptr = uniform_nodes(a.owned_rows(), block_size);
  nodes.partition = node_partition(comm, nodes.count());
  return nodes;
}

DistNodes dist_nodes_from_sizes(const dist::Communicator& comm, const std::vector<std::int64_t>& sizes) {
  DistNodes nodes;
  for (std::int64_t s : sizes) nodes.ptr.push_back(nodes.ptr.back() + s);
  nodes.partition = node_partition(comm, nodes.count());
  nodes.first = nodes.partition.begin(comm.rank());
  return nodes;
}

dist::DistMatrix dist_strength_graph(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                     double theta) {
  const RowBlock rows = dist::owned_row_block(a);
  std::vector<NodeNorm> owned = owned_node_norms(rows, nodes, a);
  std::vector<NodeNorm> ghost = halo_values(comm, a, owned);  // the one halo exchange
  const ColumnNodes columns(a, std::move(owned), std::move(ghost));

  RowBlock s;
  s.global_rows = s.global_cols = nodes.partition.global_rows();
  s.row_begin = nodes.first;
  s.row_end = nodes.first + nodes.count();
  s.row_ptr.assign(static_cast<std::size_t>(nodes.count()) + 1, 0);
  for (std::int64_t n = 0; n < nodes.count(); ++n) {
    const std::vector<BlockNorm> blocks = block_row(rows, nodes, columns, n);
    double own_norm = 0.0;
    for (const BlockNorm& b : blocks)
      if (b.node == nodes.first + n) own_norm = b.diagonal_norm;
    for (const BlockNorm& b : blocks) {
      if (b.node == nodes.first + n) continue;
      const double scale = std::sqrt(own_norm * b.diagonal_norm);
      const double strength = scale > 0 ? std::sqrt(b.sum_sq) / scale : 0.0;
      if (strength > 0 && strength >= theta) {
        s.col.push_back(b.node);
        s.values.push_back(strength);
      }
    }
    s.row_ptr[n + 1] = s.nnz();
  }
  const dist::DistMatrix one_way = dist::assemble(comm, s, nodes.partition);
  const dist::DistMatrix other_way = dist::transpose(comm, one_way);
  return dist::assemble(comm, union_max(s, dist::owned_row_block(other_way)), nodes.partition);
}

}  // namespace tessera::amg
