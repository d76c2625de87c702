#pragma once
// The small dense part of (F)GMRES (Saad 1993), shared by the host solver (amg/fgmres.cpp) and
// the device one (amg/cuda/device_fgmres.cpp), which differ only in where the vectors live: the
// Hessenberg matrix of one restart cycle, reduced to upper-triangular form by Givens rotations
// as its columns arrive, the rotated right-hand side g (|g[k]| is the residual norm after k
// columns), and the back substitution for the update's coefficients y.
#include <algorithm>
#include <cmath>
#include <vector>

namespace tessera::amg {

class GmresLeastSquares {
 public:
  explicit GmresLeastSquares(int restart)
      : h_(restart + 1, std::vector<double>(restart, 0.0)), rot_(restart), g_(restart + 1), y_(restart) {}

  /// A new cycle from a residual of norm beta.
  void start(double beta) {
    std::fill(g_.begin(), g_.end(), 0.0);
    g_[0] = beta;
  }
  /// Entry (i, k) of the Hessenberg matrix: Arnoldi writes rows 0..k+1 of column k.
  double& h(int i, int k) { return h_[i][k]; }
  /// Applies the earlier rotations to column k and the new one that zeroes h(k+1, k); returns
  /// h(k+1, k) from before (the norm that normalises the next basis vector).
  double rotate_column(int k) {
    for (int i = 0; i < k; ++i) rot_[i].apply(h_[i][k], h_[i + 1][k]);
    rot_[k] = Givens::zeroing(h_[k][k], h_[k + 1][k]);
    const double subdiagonal = h_[k + 1][k];
    rot_[k].apply(h_[k][k], h_[k + 1][k]);
    rot_[k].apply(g_[k], g_[k + 1]);
    return subdiagonal;
  }
  /// After k columns: the residual estimate g[k], and whether the triangle's last diagonal
  /// entry is 0 or g non-finite (a breakdown: the column must be dropped).
  double residual(int k) const { return g_[k]; }
  bool broke_down(int k) const { return !std::isfinite(g_[k]) || h_[k - 1][k - 1] == 0; }
  /// y solving the first k columns' triangle against g.
  const std::vector<double>& solve(int k) {
    for (int i = k - 1; i >= 0; --i) {
      y_[i] = g_[i];
      for (int j = i + 1; j < k; ++j) y_[i] -= h_[i][j] * y_[j];
      y_[i] /= h_[i][i];
    }
    return y_;
  }

 private:
  struct Givens {
    double c = 1, s = 0;
    void apply(double& x, double& y) const {
      const double t = c * x + s * y;
      y = -s * x + c * y;
      x = t;
    }
    static Givens zeroing(double x, double y) {
      const double h = std::hypot(x, y);
      return h == 0 ? Givens{} : Givens{x / h, y / h};
    }
  };
  std::vector<std::vector<double>> h_;
  std::vector<Givens> rot_;
  std::vector<double> g_, y_;
};

}  // namespace tessera::amg
