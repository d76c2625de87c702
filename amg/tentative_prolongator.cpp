#include "amg/tentative_prolongator.hpp"

#include <algorithm>
#include <cmath>

#include "local/core/error.hpp"

namespace tessera::amg {
namespace {

/// Applies H = I - 2 v v^T (v of length m - j, unit or zero) to rows j.. of columns [c0, k).
void apply_reflector(std::int64_t m, std::int64_t j, const std::vector<double>& v, std::vector<double>& a, int c0, int k) {
  for (int c = c0; c < k; ++c) {
    double* col = a.data() + c * m;
    double s = 0.0;
    for (std::int64_t i = j; i < m; ++i) s += v[i - j] * col[i];
    for (std::int64_t i = j; i < m; ++i) col[i] -= 2.0 * s * v[i - j];
  }
}

/// Dofs of every aggregate, in increasing dof order (aggregates listed by id).
std::vector<std::vector<std::int64_t>> dofs_by_aggregate(const Aggregates& agg, const NodeLayout& nodes) {
  std::vector<std::vector<std::int64_t>> dofs(static_cast<std::size_t>(agg.count));
  for (std::size_t n = 0; n + 1 < nodes.size(); ++n) {
    const std::int32_t a = agg.of_node[n];
    if (a == kNotAggregated) continue;
    for (std::int64_t d = nodes[n]; d < nodes[n + 1]; ++d) dofs[a].push_back(d);
  }
  return dofs;
}

}  // namespace

void thin_qr(std::int64_t m, int k, std::vector<double>& a, std::vector<double>& q, std::vector<double>& r) {
  const int c = static_cast<int>(std::min<std::int64_t>(m, k));
  std::vector<std::vector<double>> reflectors(static_cast<std::size_t>(c));
  for (int j = 0; j < c; ++j) {
    std::vector<double>& v = reflectors[j];
    v.assign(a.begin() + j * m + j, a.begin() + (j + 1) * m);
    double norm = 0.0;
    for (const double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (norm == 0.0) {  // column already zero below the diagonal: H = I
      std::fill(v.begin(), v.end(), 0.0);
      continue;
    }
    v[0] += v[0] >= 0 ? norm : -norm;  // v = x + sign(x0)|x| e0 avoids cancellation
    double vnorm = 0.0;
    for (const double x : v) vnorm += x * x;
    vnorm = std::sqrt(vnorm);
    for (double& x : v) x /= vnorm;
    apply_reflector(m, j, v, a, j, k);
  }
  r.assign(static_cast<std::size_t>(c) * k, 0.0);
  for (int i = 0; i < c; ++i)
    for (int j = i; j < k; ++j) r[i * k + j] = a[j * m + i];
  q.assign(static_cast<std::size_t>(m) * c, 0.0);  // Q = H_0 ... H_{c-1} [I_c; 0]
  for (int j = 0; j < c; ++j) q[j * m + j] = 1.0;
  for (int j = c - 1; j >= 0; --j) apply_reflector(m, j, reflectors[j], q, 0, c);
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
  const auto dofs = dofs_by_aggregate(aggregates, fine_nodes);

  TentativeProlongator out;
  out.coarse_nodes.assign(1, 0);
  std::vector<std::int64_t> first_coarse(static_cast<std::size_t>(aggregates.count));
  for (std::int64_t a = 0; a < aggregates.count; ++a) {
    first_coarse[a] = out.coarse_nodes.back();
    out.coarse_nodes.push_back(out.coarse_nodes.back() + std::min<std::int64_t>(dofs[a].size(), k));
  }
  const std::int64_t coarse_rows = out.coarse_nodes.back();
  out.coarse_vectors = DenseMatrix(coarse_rows, k, Layout::row_major, 0.0);

  // Row d of P_tent: the row of Q of d's aggregate, in columns first_coarse[a] + [0, c).
  std::vector<std::int32_t> row_aggregate(static_cast<std::size_t>(rows), kNotAggregated);
  std::vector<std::int64_t> row_in_aggregate(static_cast<std::size_t>(rows), 0);
  std::vector<std::vector<double>> q_of(static_cast<std::size_t>(aggregates.count));
  std::vector<double> block, r;
  for (std::int64_t a = 0; a < aggregates.count; ++a) {
    const std::int64_t m = static_cast<std::int64_t>(dofs[a].size());
    block.assign(static_cast<std::size_t>(m) * k, 0.0);
    for (std::int64_t i = 0; i < m; ++i) {
      row_aggregate[dofs[a][i]] = static_cast<std::int32_t>(a);
      row_in_aggregate[dofs[a][i]] = i;
      for (int j = 0; j < k; ++j) block[j * m + i] = b.at(dofs[a][i], j);
    }
    thin_qr(m, k, block, q_of[a], r);
    const std::int64_t c = out.coarse_nodes[a + 1] - out.coarse_nodes[a];
    for (std::int64_t i = 0; i < c; ++i)
      for (int j = 0; j < k; ++j) out.coarse_vectors.at(first_coarse[a] + i, j) = r[i * k + j];
  }
  out.p = Csr<double>::empty(rows, coarse_rows);
  for (std::int64_t d = 0; d < rows; ++d) {
    const std::int32_t a = row_aggregate[d];
    if (a != kNotAggregated) {
      const std::int64_t m = static_cast<std::int64_t>(dofs[a].size());
      for (std::int64_t j = 0; j < out.coarse_nodes[a + 1] - out.coarse_nodes[a]; ++j) {
        out.p.col_idx.push_back(static_cast<std::int32_t>(first_coarse[a] + j));
        out.p.values.push_back(q_of[a][j * m + row_in_aggregate[d]]);
      }
    }
    out.p.row_ptr[d + 1] = out.p.nnz();
  }
  return out;
}

}  // namespace tessera::amg
