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

/// L in the lower triangle of the row-major n x n `a`, or false if a pivot is not positive.
/// Row-oriented (dot-product) Cholesky on the lower triangle (the Galerkin product is symmetric
/// to rounding; the upper triangle is ignored), four columns of L at a time.
bool cholesky(std::vector<double>& a, std::int64_t n) {
  for (std::int64_t k = 0; k < n; k += cholesky_panel)
    if (!cholesky_panel_columns(a.data(), n, k, std::min(cholesky_panel, n - k))) return false;
  return true;
}

/// L\U of the row-major n x n `a` in place, rows swapped as `pivot` says; pivots below
/// n * eps * max|a| are dropped (marked in `dropped`, their column's multipliers zero).
/// Returns how many were dropped.
int lu(std::vector<double>& a, std::int64_t n, std::vector<std::int64_t>& pivot, std::vector<char>& dropped) {
  pivot.resize(static_cast<std::size_t>(n));
  dropped.assign(static_cast<std::size_t>(n), 0);
  int dropped_pivots = 0;
  double scale = 0.0;
  for (const double v : a) scale = std::max(scale, std::abs(v));
  const double tiny = static_cast<double>(n) * std::numeric_limits<double>::epsilon() * scale;
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t best = k;
    for (std::int64_t i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > std::abs(a[best * n + k])) best = i;
    pivot[k] = best;
    if (best != k) std::swap_ranges(a.begin() + k * n, a.begin() + (k + 1) * n, a.begin() + best * n);
    if (std::abs(a[k * n + k]) <= tiny) {
      dropped[k] = 1, ++dropped_pivots;
      // Column k eliminates nothing: zero multipliers, so that the row-wise forward
      // substitution in solve() needs no test.
      for (std::int64_t i = k + 1; i < n; ++i) a[i * n + k] = 0.0;
      continue;
    }
    for (std::int64_t i = k + 1; i < n; ++i) {
      const double l = a[i * n + k] / a[k * n + k];
      a[i * n + k] = l;
      for (std::int64_t j = k + 1; j < n; ++j) a[i * n + j] -= l * a[k * n + j];
    }
  }
  return dropped_pivots;
}

/// |a_ij - a_ji| <= kCoarseSymmetryTolerance max|a| for every pair (dense: row-major n x n).
bool is_symmetric(const std::vector<double>& dense, std::int64_t n) {
  double scale = 0, worst = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      scale = std::max(scale, std::abs(dense[i * n + j]));
      if (j > i) worst = std::max(worst, std::abs(dense[i * n + j] - dense[j * n + i]));
    }
  return worst <= kCoarseSymmetryTolerance * scale;
}

/// Whether every stored entry off the diagonal is zero (a lumped mass matrix, a level whose
/// unknowns do not couple).
bool is_diagonal(const Csr<double>& a) {
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      if (a.col_idx[p] != i && a.values[p] != 0.0) return false;
  return true;
}

}  // namespace

DenseCoarseSolver::Factorization DenseCoarseSolver::factorize(const Csr<double>& a) {
  if (is_diagonal(a)) return factorize_diagonal(a);
  Factorization f;
  f.n = a.rows;
  const std::int64_t n = f.n;
  std::vector<double> dense(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) dense[i * n + a.col_idx[p]] = a.values[p];
  f.factor = dense;  // Cholesky works on a copy: LU needs the original if a pivot fails
  if (is_symmetric(dense, n) && cholesky(f.factor, n)) {
    f.method = "cholesky";
    return f;
  }
  f.dropped_pivots = lu(dense, n, f.pivot, f.dropped);
  f.factor = std::move(dense);
  f.method = f.dropped_pivots ? "lu (singular: pivots dropped)" : "lu";
  return f;
}

// The diagonal itself, O(n): the dense Cholesky of a diagonal level of a few thousand rows took
// seconds (bcsstm21, 3600 rows: 1.2-1.5 s on two cores, 0.40 s on sixteen) for what one division
// a row solves. Entries at most n * eps * max|a_ii| are dropped as LU drops its pivots (their
// unknowns set to 0).
DenseCoarseSolver::Factorization DenseCoarseSolver::factorize_diagonal(const Csr<double>& a) {
  Factorization f;
  f.n = a.rows;
  f.method = "diagonal";
  f.diagonal = true;
  f.factor.assign(static_cast<std::size_t>(f.n), 0.0);
  for (std::int64_t i = 0; i < f.n; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      if (a.col_idx[p] == i) f.factor[i] += a.values[p];
  double scale = 0.0;
  for (const double d : f.factor) scale = std::max(scale, std::abs(d));
  const double tiny = static_cast<double>(f.n) * std::numeric_limits<double>::epsilon() * scale;
  f.dropped.assign(static_cast<std::size_t>(f.n), 0);
  for (std::int64_t i = 0; i < f.n; ++i)
    if (std::abs(f.factor[i]) <= tiny) f.dropped[i] = 1, ++f.dropped_pivots;
  if (f.dropped_pivots) f.method = "diagonal (singular: zero entries dropped)";
  return f;
}

void DenseCoarseSolver::factor(const Csr<double>& a) {
  f_ = factorize(a);
  deferred_ = Csr<double>{};
  pending_ = false;
}

void DenseCoarseSolver::factor_on_first_use(Csr<double> a) {
  f_ = Factorization{};
  deferred_ = std::move(a);
  pending_ = true;
}

const DenseCoarseSolver::Factorization& DenseCoarseSolver::ready() const {
  if (pending_) {
    f_ = factorize(deferred_);
    deferred_ = Csr<double>{};
    pending_ = false;
  }
  return f_;
}

void DenseCoarseSolver::solve(const std::vector<double>& b, std::vector<double>& x) const {
  const Factorization& f = ready();
  const std::int64_t n = f.n;
  const double* factor = f.factor.data();
  x = b;
  if (f.diagonal) {
    for (std::int64_t i = 0; i < n; ++i) x[i] = f.dropped[i] ? 0.0 : x[i] / factor[i];
    return;
  }
  if (f.pivot.empty()) {  // Cholesky: L y = b, L^T x = y
    for (std::int64_t i = 0; i < n; ++i) x[i] = (x[i] - dot(factor + i * n, x.data(), i)) / factor[i * n + i];
    for (std::int64_t i = n - 1; i >= 0; --i) {  // row i of L is column i of L^T: an axpy
      const double xi = x[i] /= factor[i * n + i];
      const double* row_i = factor + i * n;
      for (std::int64_t j = 0; j < i; ++j) x[j] -= row_i[j] * xi;
    }
    return;
  }
  // Rows were swapped whole during the factorisation (as LAPACK's getrf), so the
  // permutation is applied in full before the forward substitution.
  for (std::int64_t k = 0; k < n; ++k) std::swap(x[k], x[f.pivot[k]]);
  // Row-wise (contiguous) substitutions; a dropped column's multipliers are zero.
  for (std::int64_t i = 0; i < n; ++i) x[i] -= dot(factor + i * n, x.data(), i);
  for (std::int64_t i = n - 1; i >= 0; --i) {
    const double* row_i = factor + i * n;
    x[i] = f.dropped[i] ? 0.0 : (x[i] - dot(row_i + i + 1, x.data() + i + 1, n - i - 1)) / row_i[i];
  }
}

}  // namespace tessera::amg
