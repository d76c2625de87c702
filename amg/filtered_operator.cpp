#include "amg/filtered_operator.hpp"

#include <algorithm>

#include "local/core/error.hpp"

namespace tessera::amg {

std::optional<FilteredOperator> filtered_operator(const Csr<double>& a, const NodeLayout& nodes,
                                                  const Csr<double>& graph) {
  const std::vector<std::int32_t> node = node_of_dof(nodes);
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(node.size()) == a.rows && graph.rows == graph.cols &&
                            graph.rows == static_cast<std::int64_t>(nodes.size()) - 1,
                        "filtered operator: A (", a.rows, " rows), its nodes and the strength graph (", graph.rows,
                        " nodes) disagree");
  FilteredOperator f;
  f.a = Csr<double>::empty(a.rows, a.cols);
  f.target.resize(static_cast<std::size_t>(a.nnz()));
  std::vector<char> strong(static_cast<std::size_t>(graph.rows), 0);  // of row i's node, while on row i
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::int32_t n = node[i];
    for (std::int64_t q = graph.row_ptr[n]; q < graph.row_ptr[n + 1]; ++q) strong[graph.col_idx[q]] = 1;
    std::int64_t diagonal = -1;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const std::int32_t m = node[a.col_idx[p]];
      if (m != n && !strong[m]) {
        f.target[p] = -1;  // dropped: pointed at the diagonal below, once its place is known
        continue;
      }
      if (a.col_idx[p] == i) diagonal = f.a.nnz();
      f.target[p] = f.a.nnz();
      f.a.col_idx.push_back(a.col_idx[p]);
    }
    TESSERA_REQUIRE_INPUT(diagonal >= 0, "filtered operator: row ", i, " of A holds no diagonal entry");
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      if (f.target[p] < 0) f.target[p] = diagonal;
    for (std::int64_t q = graph.row_ptr[n]; q < graph.row_ptr[n + 1]; ++q) strong[graph.col_idx[q]] = 0;
    f.a.row_ptr[i + 1] = f.a.nnz();
  }
  if (f.a.nnz() == a.nnz()) return std::nullopt;
  f.a.values.assign(static_cast<std::size_t>(f.a.nnz()), 0.0);
  return f;
}

void refresh_filtered_values(const Csr<double>& a, FilteredOperator& f) {
  TESSERA_ASSERT(static_cast<std::int64_t>(f.target.size()) == a.nnz(), "filtered operator: A's pattern changed");
  std::fill(f.a.values.begin(), f.a.values.end(), 0.0);
  for (std::int64_t p = 0; p < a.nnz(); ++p) f.a.values[f.target[p]] += a.values[p];
}

}  // namespace tessera::amg
