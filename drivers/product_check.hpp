#pragma once
// Verifies a computed product against an independent one, entry by entry: the patterns must
// be identical and |c - c_ref|_ij <= bound * M_ij, where M is the product of the operands'
// absolute values. For C = A*B this is the componentwise bound of a k-term dot product
// (Higham, Thm 3.5): two summation orders of the same k products differ by at most
// 2*gamma_k*(|A||B|)_ij, gamma_k = k*u/(1-k*u), k = longest row of A, u = unit roundoff.
// For P^T A P computed as P^T (A P), the two nested sums give 2*(gamma_kA + gamma_kP) against
// (|P|^T |A| |P|)_ij, kA = longest row of A, kP = longest row of P^T.
#include <string>

#include "local/formats/csr.hpp"

namespace tessera::driver {

struct ProductComparison {
  bool pattern_equal = false;
  std::string pattern_message;      // first difference, when patterns differ
  double max_relative_error = 0.0;  // max_ij |c - c_ref|_ij / M_ij
  double bound = 0.0;
  bool pass() const { return pattern_equal && max_relative_error <= bound; }
};

/// C = A*B. `unit_roundoff` defaults to double's (both products computed in double).
template <class T>
ProductComparison compare_products(const Csr<T>& a, const Csr<T>& b, const Csr<double>& c_ref, const Csr<double>& c,
                                   double unit_roundoff = 0x1p-53);

/// C = P^T A P.
ProductComparison compare_galerkin(const Csr<double>& a, const Csr<double>& p, const Csr<double>& c_ref,
                                   const Csr<double>& c, double unit_roundoff = 0x1p-53);

/// The product tessera-spgemm's --op names, for messages: "AAT" -> "C = A*A^T".
std::string product_formula(const std::string& op);

}  // namespace tessera::driver
