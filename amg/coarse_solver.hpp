#pragma once
// Direct solve of the coarsest level, gathered into a dense matrix (it is small: at most
// AmgOptions::coarse_size rows when coarsening ran its course).
//   0. A diagonal matrix (no nonzero off the diagonal) is solved as what it is: x_i = b_i / a_ii.
//   1. Dense Cholesky, the normal case (the Galerkin operator of an SPD A is SPD), when the
//      matrix is symmetric: |a_ij - a_ji| <= kCoarseSymmetryTolerance max|a| for every pair
//      (rounding in the Galerkin product leaves ~1e-13; a non-symmetric A, convection, leaves
//      O(1)). Cholesky reads one triangle only: on a non-symmetric matrix it would factor
//      another matrix and the coarse solve would silently stop being exact.
//   2. If the matrix is not symmetric or a pivot is not positive (a singular or indefinite
//      coarse operator, e.g. the coarse Neumann Laplacian), LU with partial pivoting whose
//      pivots below n * eps * max|pivot| are treated as zero: those unknowns are set to 0 and their equations dropped. For a
//      consistent singular system whose null space the dropped pivots capture (the usual
//      rank-one case: the constant of a Neumann problem) this returns one particular
//      solution, enough for a preconditioner; it is not a pseudo-inverse. `method` says which
//      factorisation was used and `dropped_pivots` how many were dropped.
#include <string>
#include <vector>

#include "local/formats/csr.hpp"

namespace tessera::amg {

/// Relative to max|a_ij|: coarse matrices less symmetric than this are factored by LU.
constexpr double kCoarseSymmetryTolerance = 1e-10;

class DenseCoarseSolver {
 public:
  /// Factors `a` now.
  void factor(const Csr<double>& a);
  /// Keeps `a` and factors it when a call first needs the factor (solve, method,
  /// dropped_pivots): for an owner whose solves usually run elsewhere. The distributed GPU
  /// solve factors its own copy of the coarsest operator with cuSOLVER and reads this one only
  /// where the device refuses it, so its setup should not pay the O(n^3) host factor.
  void factor_on_first_use(Csr<double> a);
  bool factored() const { return !pending_; }

  /// x = A^-1 b (x sized by the caller).
  void solve(const std::vector<double>& b, std::vector<double>& x) const;

  const std::string& method() const { return ready().method; }
  /// The method as a level table prints it: "dense cholesky", "dense lu", "diagonal", ...
  std::string describe() const { return (ready().diagonal ? "" : "dense ") + method(); }
  int dropped_pivots() const { return ready().dropped_pivots; }
  std::int64_t rows() const { return pending_ ? deferred_.rows : f_.n; }

 private:
  struct Factorization {
    std::int64_t n = 0;
    std::string method = "none";
    int dropped_pivots = 0;
    bool diagonal = false;              // A is diagonal: `factor` holds its n diagonal entries
    std::vector<double> factor;         // row-major n x n: L (Cholesky) or L\U (LU)
    std::vector<std::int64_t> pivot;    // LU row permutation; empty for Cholesky
    std::vector<char> dropped;          // LU and diagonal: pivot treated as zero
  };
  static Factorization factorize(const Csr<double>& a);
  static Factorization factorize_diagonal(const Csr<double>& a);
  /// The factorization, made first if it was deferred.
  const Factorization& ready() const;

  // A deferred operator's factorization is a cache the first const call that needs it fills.
  // Not thread-safe until then: each rank calls its solver from one thread.
  mutable Csr<double> deferred_;
  mutable bool pending_ = false;
  mutable Factorization f_;
};

}  // namespace tessera::amg
