#include "amg/input_check.hpp"

#include <cmath>

#include "local/core/error.hpp"

namespace tessera::amg {

void check_operator(const Csr<double>& a, const char* what) {
  validate(a, what);
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "AMG: ", what, " must be square, it is ", a.rows, "x", a.cols);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    bool has_diagonal = false;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const double v = a.values[p];
      TESSERA_REQUIRE_INPUT(std::isfinite(v), "AMG: ", what, " has a non-finite value ", v, " at row ", i,
                            ", column ", a.col_idx[p]);
      if (a.col_idx[p] != i) continue;
      has_diagonal = true;
      TESSERA_REQUIRE_INPUT(v > 0, "AMG: ", what, " has a ", v == 0 ? "zero" : "negative", " diagonal ", v,
                            " at row ", i, " (smoothed aggregation needs a positive diagonal)");
    }
    TESSERA_REQUIRE_INPUT(has_diagonal, "AMG: ", what, " has no diagonal entry in row ", i,
                          " (smoothed aggregation needs a positive diagonal)");
  }
}

std::vector<double> diagonal(const Csr<double>& a) {
  std::vector<double> d(static_cast<std::size_t>(a.rows), 0.0);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      if (a.col_idx[p] == i) d[i] = a.values[p];
  return d;
}

}  // namespace tessera::amg
