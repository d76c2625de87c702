#pragma once
// Verifies a computed product C ~ A*B against an independent one, entry by entry:
// the patterns must be identical and |c - c_ref|_ij <= bound * (|A||B|)_ij, which is the
// componentwise error bound of a k-term dot product (Higham, Thm 3.5): two summation orders
// of the same k products differ by at most 2*gamma_k*(|A||B|)_ij, gamma_k = k*u/(1-k*u),
// k = longest row of A (the most terms any entry sums), u = unit roundoff of the arithmetic.
#include <string>

#include "local/formats/csr.hpp"

namespace tessera::driver {

struct SpgemmComparison {
  bool pattern_equal = false;
  std::string pattern_message;      // first difference, when patterns differ
  double max_relative_error = 0.0;  // max_ij |c - c_ref|_ij / (|A||B|)_ij
  double bound = 0.0;               // 2*gamma_k for the arithmetic's unit roundoff
};

/// `unit_roundoff` defaults to double's (both products computed in double).
template <class T>
SpgemmComparison compare_products(const Csr<T>& a, const Csr<T>& b, const Csr<double>& c_ref, const Csr<double>& c,
                                  double unit_roundoff = 0x1p-53);

}  // namespace tessera::driver
