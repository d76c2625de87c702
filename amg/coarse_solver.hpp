#pragma once
// Direct solve of the coarsest level, gathered into a dense matrix (it is small: at most
// AmgOptions::coarse_size rows when coarsening ran its course).
//   1. Dense Cholesky, the normal case (the Galerkin operator of an SPD A is SPD).
//   2. If a pivot is not positive (a singular or indefinite coarse operator, e.g. the coarse
//      Neumann Laplacian), LU with partial pivoting whose pivots below n * eps * max|pivot|
//      are treated as zero: those unknowns are set to 0 and their equations dropped. For a
//      consistent singular system whose null space the dropped pivots capture (the usual
//      rank-one case: the constant of a Neumann problem) this returns one particular
//      solution, enough for a preconditioner; it is not a pseudo-inverse. `method` says which
//      factorisation was used and `dropped_pivots` how many were dropped.
#include <string>
#include <vector>

#include "local/formats/csr.hpp"

namespace tessera::amg {

class DenseCoarseSolver {
 public:
  void factor(const Csr<double>& a);
  /// x = A^-1 b (x sized by the caller).
  void solve(const std::vector<double>& b, std::vector<double>& x) const;

  const std::string& method() const { return method_; }
  int dropped_pivots() const { return dropped_pivots_; }
  std::int64_t rows() const { return n_; }

 private:
  bool try_cholesky(std::vector<double> a);
  void lu(std::vector<double> a);

  std::int64_t n_ = 0;
  std::string method_ = "none";
  int dropped_pivots_ = 0;
  std::vector<double> factor_;         // row-major n x n: L (Cholesky) or L\U (LU)
  std::vector<std::int64_t> pivot_;    // LU row permutation
  std::vector<char> dropped_;          // LU: pivot treated as zero
};

}  // namespace tessera::amg
