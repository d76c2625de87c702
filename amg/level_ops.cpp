#include "amg/level_ops.hpp"

#include "local/reference/kernels.hpp"

namespace tessera::amg {

LevelOps host_reference_ops() {
  LevelOps ops;
  ops.multiply = [](const Csr<double>& a, const Csr<double>& b) { return ref::spgemm(a, b); };
  ops.galerkin = [](const Csr<double>& a, const Csr<double>& p) { return ref::ptap(a, p); };
  ops.transpose = [](const Csr<double>& a) { return ref::transpose(a); };
  ops.apply = [](const Csr<double>& a, const Vector& x, Vector& y) {
    // Inline loop rather than ref::spmv: the reference validates the whole matrix per call,
    // an O(nnz) check the cycle would repeat on every smoothing step.
    for (std::int64_t i = 0; i < a.rows; ++i) {
      double sum = 0.0;
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) sum += a.values[p] * x[a.col_idx[p]];
      y[i] = sum;
    }
  };
  ops.residual = [](const Csr<double>& a, const Vector& x, const Vector& b, Vector& r) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
      double sum = b[i];
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) sum -= a.values[p] * x[a.col_idx[p]];
      r[i] = sum;
    }
  };
  ops.dot = [](const Vector& x, const Vector& y) {
    double sum = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) sum += x[i] * y[i];
    return sum;
  };
  return ops;
}

}  // namespace tessera::amg
