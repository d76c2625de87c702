#include "amg/prolongator_smoothing.hpp"

#include <algorithm>
#include <climits>

#include "local/core/error.hpp"

namespace tessera::amg {

double prolongator_damping(double lambda_max) {
  TESSERA_ASSERT(lambda_max > 0, "lambda_max estimate must be positive, got ", lambda_max);
  return 4.0 / (3.0 * lambda_max);
}

Csr<double> smooth_prolongator(const Csr<double>& a, const Vector& inv_diag, const Csr<double>& p_tent, double omega,
                               const LevelOps& ops) {
  const Csr<double> ap = ops.multiply(a, p_tent);
  Csr<double> p = Csr<double>::empty(p_tent.rows, p_tent.cols);
  p.col_idx.reserve(ap.col_idx.size());
  p.values.reserve(ap.values.size());
  for (std::int64_t i = 0; i < p.rows; ++i) {  // row i: p_tent(i,:) - omega / a_ii * ap(i,:)
    const std::int64_t s = p_tent.row_ptr[i], t = ap.row_ptr[i];
    append_smoothed_row(p_tent.col_idx.data() + s, p_tent.values.data() + s, p_tent.row_ptr[i + 1] - s,
                        ap.col_idx.data() + t, ap.values.data() + t, ap.row_ptr[i + 1] - t, -omega * inv_diag[i],
                        p.col_idx, p.values);
    p.row_ptr[i + 1] = p.nnz();
  }
  return p;
}

}  // namespace tessera::amg
