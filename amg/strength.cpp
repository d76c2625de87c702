#include "amg/strength.hpp"

#include <algorithm>
#include <cmath>

#include "amg/strength_rule.hpp"
#include "local/core/error.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::amg {
namespace {

/// Squared Frobenius norms of the node blocks of one node row, gathered by node column.
struct BlockRowAccumulator {
  std::vector<double> sum_sq;
  std::vector<std::int32_t> mark, columns;
  explicit BlockRowAccumulator(std::int64_t nodes)
      : sum_sq(static_cast<std::size_t>(nodes), 0.0), mark(static_cast<std::size_t>(nodes), -1) {}

  void gather(const Csr<double>& a, const NodeLayout& nodes, const std::vector<std::int32_t>& node,
              std::int32_t row_node, double scale) {
    columns.clear();
    for (std::int64_t i = nodes[row_node]; i < nodes[row_node + 1]; ++i)
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        const std::int32_t col_node = node[a.col_idx[p]];
        if (mark[col_node] != row_node) {
          mark[col_node] = row_node;
          sum_sq[col_node] = 0.0;
          columns.push_back(col_node);
        }
        sum_sq[col_node] += scaled_square(a.values[p], scale);
      }
    std::sort(columns.begin(), columns.end());
  }
};

/// Entry-wise maximum of two matrices' union pattern (symmetrises the graph). Two passes (size,
/// then fill) so the result is allocated once.
Csr<double> union_max(const Csr<double>& s, const Csr<double>& t) {
  Csr<double> u = Csr<double>::empty(s.rows, s.cols);
  for (std::int64_t i = 0; i < s.rows; ++i) {
    std::int64_t p = s.row_ptr[i], q = t.row_ptr[i], count = 0;
    while (p < s.row_ptr[i + 1] && q < t.row_ptr[i + 1]) {
      const std::int32_t cp = s.col_idx[p], cq = t.col_idx[q];
      p += cp <= cq, q += cq <= cp, ++count;
    }
    u.row_ptr[i + 1] = u.row_ptr[i] + count + (s.row_ptr[i + 1] - p) + (t.row_ptr[i + 1] - q);
  }
  u.col_idx.resize(static_cast<std::size_t>(u.row_ptr[s.rows]));
  u.values.resize(u.col_idx.size());
  for (std::int64_t i = 0; i < s.rows; ++i) {
    std::int64_t p = s.row_ptr[i], q = t.row_ptr[i], out = u.row_ptr[i];
    while (p < s.row_ptr[i + 1] || q < t.row_ptr[i + 1]) {
      const std::int32_t cp = p < s.row_ptr[i + 1] ? s.col_idx[p] : INT32_MAX;
      const std::int32_t cq = q < t.row_ptr[i + 1] ? t.col_idx[q] : INT32_MAX;
      const std::int32_t c = std::min(cp, cq);
      double v = 0.0;
      if (cp == c) v = std::max(v, s.values[p++]);
      if (cq == c) v = std::max(v, t.values[q++]);
      u.col_idx[out] = c;
      u.values[out++] = v;
    }
  }
  return u;
}

/// Frobenius norm of every diagonal block s*A_II, its squares summed in the order gather() sums
/// them (rows of the node, then columns), so the value is the same to the last bit.
std::vector<double> diagonal_block_norms(const Csr<double>& a, const NodeLayout& nodes,
                                         const std::vector<std::int32_t>& node, double scale) {
  const std::int64_t num_nodes = static_cast<std::int64_t>(nodes.size()) - 1;
  std::vector<double> norm(static_cast<std::size_t>(num_nodes), 0.0);
  for (std::int32_t n = 0; n < num_nodes; ++n) {
    double sum_sq = 0.0;
    for (std::int64_t i = nodes[n]; i < nodes[n + 1]; ++i)
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        if (node[a.col_idx[p]] == n) sum_sq += scaled_square(a.values[p], scale);
    norm[n] = std::sqrt(sum_sq);
  }
  return norm;
}

/// Row n of the strength graph when every node is one dof. The entries of a CSR row are sorted
/// and unique, so the gathered blocks are the entries themselves and each block's sum of
/// squares is the single square (0.0 + w*w is w*w exactly): the same values as the general path
/// without its scatter, marker and sort.
void append_scalar_row(const Csr<double>& a, std::int32_t n, const std::vector<double>& diag_norm, double theta,
                       double scale, Csr<double>& s) {
  for (std::int64_t p = a.row_ptr[n]; p < a.row_ptr[n + 1]; ++p) {
    const std::int32_t m = a.col_idx[p];
    if (m == n) continue;
    const double strength = strong_value(scaled_square(a.values[p], scale), diag_norm[n], diag_norm[m], theta);
    if (strength > 0) {
      s.col_idx.push_back(m);
      s.values.push_back(strength);
    }
  }
  s.row_ptr[n + 1] = s.nnz();
}

}  // namespace

NodeLayout uniform_nodes(std::int64_t rows, int block_size) {
  TESSERA_REQUIRE_INPUT(block_size >= 1 && rows % block_size == 0, "AMG: block size ", block_size,
                        " does not divide the ", rows, " rows");
  NodeLayout nodes(static_cast<std::size_t>(rows / block_size) + 1);
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n] = static_cast<std::int64_t>(n) * block_size;
  return nodes;
}

std::vector<std::int32_t> node_of_dof(const NodeLayout& nodes) {
  std::vector<std::int32_t> node(static_cast<std::size_t>(nodes.back()));
  for (std::size_t n = 0; n + 1 < nodes.size(); ++n)
    std::fill(node.begin() + nodes[n], node.begin() + nodes[n + 1], static_cast<std::int32_t>(n));
  return node;
}

Csr<double> strength_graph(const Csr<double>& a, const NodeLayout& nodes, double theta) {
  TESSERA_ASSERT(nodes.back() == a.rows, "node layout covers ", nodes.back(), " dofs, matrix has ", a.rows);
  const std::int64_t num_nodes = static_cast<std::int64_t>(nodes.size()) - 1;
  const std::vector<std::int32_t> node = node_of_dof(nodes);
  BlockRowAccumulator acc(num_nodes);

  double max_abs = 0.0;
  for (const double v : a.values) max_abs = std::max(max_abs, std::fabs(v));
  const double scale = strength_scale(max_abs);
  const std::vector<double> diag_norm = diagonal_block_norms(a, nodes, node, scale);
  Csr<double> s = Csr<double>::empty(num_nodes, num_nodes);
  s.col_idx.reserve(static_cast<std::size_t>(a.nnz()));  // at most one edge per entry of A
  s.values.reserve(static_cast<std::size_t>(a.nnz()));
  const bool scalar = num_nodes == a.rows;  // one dof per node: a block is one entry
  for (std::int32_t n = 0; n < num_nodes; ++n) {
    if (scalar) {
      append_scalar_row(a, n, diag_norm, theta, scale, s);
      continue;
    }
    acc.gather(a, nodes, node, n, scale);
    for (const std::int32_t m : acc.columns) {
      if (m == n) continue;
      const double strength = strong_value(acc.sum_sq[m], diag_norm[n], diag_norm[m], theta);
      if (strength > 0) {
        s.col_idx.push_back(m);
        s.values.push_back(strength);
      }
    }
    s.row_ptr[n + 1] = s.nnz();
  }
  return union_max(s, ref::transpose(s));
}

}  // namespace tessera::amg
