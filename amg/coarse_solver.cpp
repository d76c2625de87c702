#include "amg/coarse_solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::amg {

void DenseCoarseSolver::factor(const Csr<double>& a) {
  n_ = a.rows;
  std::vector<double> dense(static_cast<std::size_t>(n_ * n_), 0.0);
  for (std::int64_t i = 0; i < n_; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) dense[i * n_ + a.col_idx[p]] = a.values[p];
  dropped_pivots_ = 0;
  if (try_cholesky(dense)) {
    method_ = "cholesky";
    return;
  }
  lu(std::move(dense));
  method_ = dropped_pivots_ ? "lu (singular: pivots dropped)" : "lu";
}

bool DenseCoarseSolver::try_cholesky(std::vector<double> a) {
  // Right-looking on the lower triangle (the Galerkin product is symmetric to rounding; the
  // upper triangle is ignored).
  for (std::int64_t k = 0; k < n_; ++k) {
    double* row_k = a.data() + k * n_;
    double d = row_k[k];
    for (std::int64_t j = 0; j < k; ++j) d -= row_k[j] * row_k[j];
    if (!(d > 0)) return false;
    row_k[k] = std::sqrt(d);
    for (std::int64_t i = k + 1; i < n_; ++i) {
      double* row_i = a.data() + i * n_;
      double s = row_i[k];
      for (std::int64_t j = 0; j < k; ++j) s -= row_i[j] * row_k[j];
      row_i[k] = s / row_k[k];
    }
  }
  factor_ = std::move(a);
  pivot_.clear();
  return true;
}

void DenseCoarseSolver::lu(std::vector<double> a) {
  pivot_.resize(static_cast<std::size_t>(n_));
  dropped_.assign(static_cast<std::size_t>(n_), 0);
  double scale = 0.0;
  for (const double v : a) scale = std::max(scale, std::abs(v));
  const double tiny = static_cast<double>(n_) * std::numeric_limits<double>::epsilon() * scale;
  for (std::int64_t k = 0; k < n_; ++k) {
    std::int64_t best = k;
    for (std::int64_t i = k + 1; i < n_; ++i)
      if (std::abs(a[i * n_ + k]) > std::abs(a[best * n_ + k])) best = i;
    pivot_[k] = best;
    if (best != k) std::swap_ranges(a.begin() + k * n_, a.begin() + (k + 1) * n_, a.begin() + best * n_);
    if (std::abs(a[k * n_ + k]) <= tiny) {
      dropped_[k] = 1, ++dropped_pivots_;
      continue;  // column k eliminates nothing
    }
    for (std::int64_t i = k + 1; i < n_; ++i) {
      const double l = a[i * n_ + k] / a[k * n_ + k];
      a[i * n_ + k] = l;
      for (std::int64_t j = k + 1; j < n_; ++j) a[i * n_ + j] -= l * a[k * n_ + j];
    }
  }
  factor_ = std::move(a);
}

void DenseCoarseSolver::solve(const std::vector<double>& b, std::vector<double>& x) const {
  x = b;
  if (pivot_.empty()) {  // Cholesky: L y = b, L^T x = y
    for (std::int64_t i = 0; i < n_; ++i) {
      for (std::int64_t j = 0; j < i; ++j) x[i] -= factor_[i * n_ + j] * x[j];
      x[i] /= factor_[i * n_ + i];
    }
    for (std::int64_t i = n_ - 1; i >= 0; --i) {
      x[i] /= factor_[i * n_ + i];
      for (std::int64_t j = 0; j < i; ++j) x[j] -= factor_[i * n_ + j] * x[i];
    }
    return;
  }
  // Rows were swapped whole during the factorisation (as LAPACK's getrf), so the
  // permutation is applied in full before the forward substitution.
  for (std::int64_t k = 0; k < n_; ++k) std::swap(x[k], x[pivot_[k]]);
  for (std::int64_t k = 0; k < n_; ++k) {
    if (dropped_[k]) continue;
    for (std::int64_t i = k + 1; i < n_; ++i) x[i] -= factor_[i * n_ + k] * x[k];
  }
  for (std::int64_t i = n_ - 1; i >= 0; --i) {
    if (dropped_[i]) {
      x[i] = 0.0;
      continue;
    }
    for (std::int64_t j = i + 1; j < n_; ++j) x[i] -= factor_[i * n_ + j] * x[j];
    x[i] /= factor_[i * n_ + i];
  }
}

}  // namespace tessera::amg
