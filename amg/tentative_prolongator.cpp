#include "amg/tentative_prolongator.hpp"

#include <algorithm>
#include <cmath>

#include "local/core/error.hpp"

namespace tessera::amg {
namespace {

/// Applies H = I - 2 v v^T (v of length m - j, unit or zero) to rows j.. of columns [c0, k).
void apply_reflector(std::int64_t m, std::int64_t j, const double* v, std::vector<double>& a, int c0, int k) {
  for (int c = c0; c < k; ++c) {
    double* col = a.data() + c * m;
    double s = 0.0;
    for (std::int64_t i = j; i < m; ++i) s += v[i - j] * col[i];
    for (std::int64_t i = j; i < m; ++i) col[i] -= 2.0 * s * v[i - j];
  }
}

/// Dofs of every aggregate as one CSR-like list (counting sort of the nodes by aggregate): the
/// dofs of aggregate a are dofs[ptr[a], ptr[a+1]), increasing.
struct AggregateDofs {
  std::vector<std::int64_t> ptr, dofs;
  std::int64_t size(std::int64_t a) const { return ptr[a + 1] - ptr[a]; }
};

AggregateDofs dofs_by_aggregate(const Aggregates& agg, const NodeLayout& nodes) {
  AggregateDofs out;
  out.ptr.assign(static_cast<std::size_t>(agg.count) + 1, 0);
  for (std::size_t n = 0; n + 1 < nodes.size(); ++n)
    if (agg.of_node[n] != kNotAggregated) out.ptr[agg.of_node[n] + 1] += nodes[n + 1] - nodes[n];
  for (std::int64_t a = 0; a < agg.count; ++a) out.ptr[a + 1] += out.ptr[a];
  out.dofs.resize(static_cast<std::size_t>(out.ptr[agg.count]));
  std::vector<std::int64_t> next(out.ptr.begin(), out.ptr.end() - 1);
  for (std::size_t n = 0; n + 1 < nodes.size(); ++n) {
    const std::int32_t a = agg.of_node[n];
    if (a == kNotAggregated) continue;
    for (std::int64_t d = nodes[n]; d < nodes[n + 1]; ++d) out.dofs[next[a]++] = d;
  }
  return out;
}

}  // namespace

void thin_qr(std::int64_t m, int k, std::vector<double>& a, std::vector<double>& q, std::vector<double>& r) {
  std::vector<double> reflectors;
  thin_qr(m, k, a, q, r, reflectors);
}

void thin_qr(std::int64_t m, int k, std::vector<double>& a, std::vector<double>& q, std::vector<double>& r,
             std::vector<double>& reflectors) {
  const int c = static_cast<int>(std::min<std::int64_t>(m, k));
  // Reflector j (length m - j) is stored in reflectors[j * m, j * m + m - j).
  reflectors.resize(static_cast<std::size_t>(c) * m);
  for (int j = 0; j < c; ++j) {
    double* v = reflectors.data() + j * m;
    const std::int64_t len = m - j;
    std::copy(a.begin() + j * m + j, a.begin() + (j + 1) * m, v);
    double norm = 0.0;
    for (std::int64_t i = 0; i < len; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    if (norm == 0.0) {  // column already zero below the diagonal: H = I
      std::fill(v, v + len, 0.0);
      continue;
    }
    v[0] += v[0] >= 0 ? norm : -norm;  // v = x + sign(x0)|x| e0 avoids cancellation
    double vnorm = 0.0;
    for (std::int64_t i = 0; i < len; ++i) vnorm += v[i] * v[i];
    vnorm = std::sqrt(vnorm);
    for (std::int64_t i = 0; i < len; ++i) v[i] /= vnorm;
    apply_reflector(m, j, v, a, j, k);
  }
  r.assign(static_cast<std::size_t>(c) * k, 0.0);
  for (int i = 0; i < c; ++i)
    for (int j = i; j < k; ++j) r[i * k + j] = a[j * m + i];
  q.assign(static_cast<std::size_t>(m) * c, 0.0);  // Q = H_0 ... H_{c-1} [I_c; 0]
  for (int j = 0; j < c; ++j) q[j * m + j] = 1.0;
  for (int j = c - 1; j >= 0; --j) apply_reflector(m, j, reflectors.data() + j * m, q, 0, c);
  for (int i = 0; i < c; ++i) {
    if (r[i * k + i] >= 0) continue;
    for (int j = 0; j < k; ++j) r[i * k + j] = -r[i * k + j];
    for (std::int64_t row = 0; row < m; ++row) q[i * m + row] = -q[i * m + row];
  }
}

TentativeProlongator tentative_prolongator(const Aggregates& aggregates, const NodeLayout& fine_nodes,
                                           const DenseMatrix& b) {
  const std::int64_t rows = fine_nodes.back();
  TESSERA_REQUIRE_INPUT(b.rows == rows && b.layout == Layout::row_major, "AMG: near-null space has ", b.rows,
                        " rows (row-major expected), the operator has ", rows);
  const int k = static_cast<int>(b.cols);
  TESSERA_REQUIRE_INPUT(k >= 1, "AMG: the near-null space needs at least one vector");
  const AggregateDofs dofs = dofs_by_aggregate(aggregates, fine_nodes);

  TentativeProlongator out;
  out.coarse_nodes.resize(static_cast<std::size_t>(aggregates.count) + 1);
  out.coarse_nodes[0] = 0;
  for (std::int64_t a = 0; a < aggregates.count; ++a)
    out.coarse_nodes[a + 1] = out.coarse_nodes[a] + std::min<std::int64_t>(dofs.size(a), k);
  const std::int64_t coarse_rows = out.coarse_nodes.back();
  out.coarse_vectors = DenseMatrix(coarse_rows, k, Layout::row_major, 0.0);

  // Row d of P_tent is the row of Q of d's aggregate, in columns coarse_nodes[a] + [0, c): the
  // row lengths are known before any QR, so each Q is scattered straight into place.
  out.p = Csr<double>::empty(rows, coarse_rows);
  for (std::int64_t a = 0; a < aggregates.count; ++a)
    for (std::int64_t i = dofs.ptr[a]; i < dofs.ptr[a + 1]; ++i)
      out.p.row_ptr[dofs.dofs[i] + 1] = out.coarse_nodes[a + 1] - out.coarse_nodes[a];
  for (std::int64_t d = 0; d < rows; ++d) out.p.row_ptr[d + 1] += out.p.row_ptr[d];
  out.p.col_idx.resize(static_cast<std::size_t>(out.p.row_ptr[rows]));
  out.p.values.resize(out.p.col_idx.size());

  std::vector<double> block, q, r, reflectors;
  for (std::int64_t a = 0; a < aggregates.count; ++a) {
    const std::int64_t m = dofs.size(a);
    const std::int64_t* agg_dofs = dofs.dofs.data() + dofs.ptr[a];
    block.resize(static_cast<std::size_t>(m) * k);
    for (std::int64_t i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) block[j * m + i] = b.at(agg_dofs[i], j);
    thin_qr(m, k, block, q, r, reflectors);
    const std::int64_t first = out.coarse_nodes[a], c = out.coarse_nodes[a + 1] - first;
    for (std::int64_t i = 0; i < c; ++i)
      for (int j = 0; j < k; ++j) out.coarse_vectors.at(first + i, j) = r[i * k + j];
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t row_start = out.p.row_ptr[agg_dofs[i]];
      for (std::int64_t j = 0; j < c; ++j) {
        out.p.col_idx[row_start + j] = static_cast<std::int32_t>(first + j);
        out.p.values[row_start + j] = q[j * m + i];
      }
    }
  }
  return out;
}

}  // namespace tessera::amg
