#pragma once
// What AMG requires of its operator, checked once at setup so that the cycle never divides
// by a zero diagonal or propagates NaN: square, finite values, a positive diagonal entry in
// every row. Each failure is an InputError naming the row (and column).
#include <vector>

#include "local/formats/csr.hpp"

namespace tessera::amg {

/// Throws InputError unless `a` is square, finite and has a positive diagonal in every row.
/// `what` names the matrix in the message (e.g. "A" or "level 2 operator").
void check_operator(const Csr<double>& a, const char* what);

/// The diagonal of a square matrix (0 where a row has no diagonal entry).
std::vector<double> diagonal(const Csr<double>& a);

}  // namespace tessera::amg
