#include "amg/coarse_solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "local/core/host_ranges.hpp"

namespace tessera::amg {
namespace {

/// sum_j a[j] * b[j] with four independent partial sums. With one accumulator every add waits
/// for the previous one, and the compiler may not reassociate a floating-point sum to
/// vectorise it; four chains keep the FP units busy (the result differs only by rounding).
double dot(const double* a, const double* b, std::int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    s0 += a[j] * b[j];
    s1 += a[j + 1] * b[j + 1];
    s2 += a[j + 2] * b[j + 2];
    s3 += a[j + 3] * b[j + 3];
  }
  for (; j < n; ++j) s0 += a[j] * b[j];
  return (s0 + s1) + (s2 + s3);
}

constexpr std::int64_t cholesky_panel = 4;

/// A range of rows below a panel gets at least this many multiply-adds: a panel at column k
/// costs a row 4k of them, and starting a thread costs microseconds.
constexpr std::int64_t panel_range_work = 1 << 15;

/// Columns [k, k+b) of L, b <= cholesky_panel; columns before k are done. False if a pivot
/// is not positive. Each row i below the panel is read once for the b dot products against
/// rows k..k+b-1 (instead of once per column): the factorisation streams the lower triangle
/// n/4 times instead of n times, and the b sums are independent chains. The rows below the
/// panel are independent (each reads the panel's rows and writes only itself), so ranges of
/// them run on the rank's threads, each row's arithmetic that of the serial loop: the factor is
/// the same bit for bit whatever the thread count. The coarsest operator is gathered on every
/// rank and grows with the number of ranks (to AmgOptions::coarse_size rows), so its O(n^3)
/// factor must not run on one thread.
bool cholesky_panel_columns(double* a, std::int64_t n, std::int64_t k, std::int64_t b) {
  for (std::int64_t c = k; c < k + b; ++c) {  // the panel's own rows, one column at a time
    double* row_c = a + c * n;
    const double d = row_c[c] - dot(row_c, row_c, c);
    if (!(d > 0)) return false;
    row_c[c] = std::sqrt(d);
    for (std::int64_t i = c + 1; i < k + b; ++i) a[i * n + c] = (a[i * n + c] - dot(a + i * n, row_c, c)) / row_c[c];
  }
  if (k + b == n) return true;  // b < cholesky_panel only in the last panel
  const double* r0 = a + k * n;
  const double *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
  const std::int64_t below = n - (k + b);
  host::for_ranges(below, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = k + b + begin; i < k + b + end; ++i) {
      double* row_i = a + i * n;
      double s[cholesky_panel] = {0, 0, 0, 0};
      for (std::int64_t j = 0; j < k; ++j) {
        const double v = row_i[j];
        s[0] += v * r0[j], s[1] += v * r1[j], s[2] += v * r2[j], s[3] += v * r3[j];
      }
      for (std::int64_t m = 0; m < cholesky_panel; ++m) {  // the terms j in [k, k+m), in order
        const double* row_m = a + (k + m) * n;
        double v = row_i[k + m] - s[m];
        for (std::int64_t t = 0; t < m; ++t) v -= row_i[k + t] * row_m[k + t];
        row_i[k + m] = v / row_m[k + m];
      }
    }
  }, std::max<std::int64_t>(1, panel_range_work / (cholesky_panel * (k + 1))));
  return true;
}

}  // namespace

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
  // Row-oriented (dot-product) Cholesky on the lower triangle (the Galerkin product is
  // symmetric to rounding; the upper triangle is ignored), four columns of L at a time.
  for (std::int64_t k = 0; k < n_; k += cholesky_panel)
    if (!cholesky_panel_columns(a.data(), n_, k, std::min(cholesky_panel, n_ - k))) return false;
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
      // Column k eliminates nothing: zero multipliers, so that the row-wise forward
      // substitution in solve() needs no test.
      for (std::int64_t i = k + 1; i < n_; ++i) a[i * n_ + k] = 0.0;
      continue;
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
    for (std::int64_t i = 0; i < n_; ++i) x[i] = (x[i] - dot(&factor_[i * n_], x.data(), i)) / factor_[i * n_ + i];
    for (std::int64_t i = n_ - 1; i >= 0; --i) {  // row i of L is column i of L^T: an axpy
      const double xi = x[i] /= factor_[i * n_ + i];
      const double* row_i = &factor_[i * n_];
      for (std::int64_t j = 0; j < i; ++j) x[j] -= row_i[j] * xi;
    }
    return;
  }
  // Rows were swapped whole during the factorisation (as LAPACK's getrf), so the
  // permutation is applied in full before the forward substitution.
  for (std::int64_t k = 0; k < n_; ++k) std::swap(x[k], x[pivot_[k]]);
  // Row-wise (contiguous) substitutions; a dropped column's multipliers are zero.
  for (std::int64_t i = 0; i < n_; ++i) x[i] -= dot(&factor_[i * n_], x.data(), i);
  for (std::int64_t i = n_ - 1; i >= 0; --i) {
    const double* row_i = &factor_[i * n_];
    x[i] = dropped_[i] ? 0.0 : (x[i] - dot(row_i + i + 1, x.data() + i + 1, n_ - i - 1)) / row_i[i];
  }
}

}  // namespace tessera::amg
