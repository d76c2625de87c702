#include "drivers/product_check.hpp"

#include <algorithm>
#include <cmath>

#include "local/core/half.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::driver {

namespace {

template <class T>
Csr<double> absolute(const Csr<T>& m) {
  Csr<double> out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.row_ptr = m.row_ptr;
  out.col_idx = m.col_idx;
  out.values.resize(m.values.size());
  std::transform(m.values.begin(), m.values.end(), out.values.begin(), [](T v) { return std::fabs(to_double(v)); });
  return out;
}

template <class T>
std::int64_t longest_row(const Csr<T>& m) {
  std::int64_t k = 0;
  for (std::int64_t i = 0; i < m.rows; ++i) k = std::max(k, m.row_length(i));
  return k;
}

double gamma(std::int64_t k, double u) { return k * u / (1.0 - k * u); }

// Patterns must match exactly; values within bound * magnitude, where magnitude's pattern
// contains c's (c_ref may have dropped exact zeros that magnitude keeps).
ProductComparison compare_entrywise(const Csr<double>& c_ref, const Csr<double>& c, const Csr<double>& magnitude,
                                    double bound) {
  ProductComparison r;
  r.bound = bound;
  if (c.rows != c_ref.rows || c.cols != c_ref.cols || c.row_ptr != c_ref.row_ptr || c.col_idx != c_ref.col_idx) {
    r.pattern_message = "shape or pattern differs (nnz " + std::to_string(c.nnz()) + " vs " + std::to_string(c_ref.nnz()) + ")";
    for (std::int64_t i = 0; i < std::min(c.rows, c_ref.rows); ++i)
      if (c.row_ptr[i + 1] != c_ref.row_ptr[i + 1]) {
        r.pattern_message += "; first differing row " + std::to_string(i);
        break;
      }
    r.max_relative_error = INFINITY;
    return r;
  }
  r.pattern_equal = true;
  for (std::int64_t i = 0; i < c.rows; ++i) {
    std::int64_t m = magnitude.row_ptr[i];
    for (std::int64_t p = c.row_ptr[i]; p < c.row_ptr[i + 1]; ++p) {
      while (magnitude.col_idx[m] < c.col_idx[p]) ++m;
      const double diff = std::fabs(c.values[p] - c_ref.values[p]);
      const double scale = magnitude.values[m];
      const double rel = scale > 0 ? diff / scale : (diff == 0 ? 0.0 : INFINITY);
      if (!(rel <= r.max_relative_error)) r.max_relative_error = std::isnan(rel) ? INFINITY : rel;
    }
  }
  return r;
}

}  // namespace

template <class T>
ProductComparison compare_products(const Csr<T>& a, const Csr<T>& b, const Csr<double>& c_ref, const Csr<double>& c,
                                   double unit_roundoff) {
  ref::SpgemmOptions keep;
  keep.keep_zeros = true;
  const Csr<double> magnitude = ref::spgemm(absolute(a), absolute(b), keep);
  return compare_entrywise(c_ref, c, magnitude, 2.0 * gamma(longest_row(a), unit_roundoff));
}

ProductComparison compare_galerkin(const Csr<double>& a, const Csr<double>& p, const Csr<double>& c_ref,
                                   const Csr<double>& c, double unit_roundoff) {
  ref::SpgemmOptions keep;
  keep.keep_zeros = true;
  const Csr<double> magnitude = ref::ptap(absolute(a), absolute(p), keep);
  const std::int64_t k_p = longest_row(ref::transpose(p));
  return compare_entrywise(c_ref, c, magnitude, 2.0 * (gamma(longest_row(a), unit_roundoff) + gamma(k_p, unit_roundoff)));
}

template ProductComparison compare_products(const Csr<double>&, const Csr<double>&, const Csr<double>&,
                                            const Csr<double>&, double);
template ProductComparison compare_products(const Csr<float>&, const Csr<float>&, const Csr<double>&,
                                            const Csr<double>&, double);
template ProductComparison compare_products(const Csr<Half>&, const Csr<Half>&, const Csr<double>&,
                                            const Csr<double>&, double);

std::string product_formula(const std::string& op) {
  if (op == "AA") return "C = A*A";
  if (op == "AAT") return "C = A*A^T";
  if (op == "PtAP") return "C = P^T A P";
  return "C = A*B";
}

}  // namespace tessera::driver
