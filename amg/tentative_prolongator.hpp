#pragma once
// Tentative prolongator of smoothed aggregation: for each aggregate, the rows of the near-
// null space B on its dofs are factored B_agg = Q R by Householder QR (m dofs x k vectors).
// Q's columns become the aggregate's columns of P_tent (orthonormal per aggregate), R
// becomes the aggregate's rows of the coarse near-null space B_c, so P_tent B_c = B exactly
// on every aggregated dof. Householder QR gives an orthonormal Q even when B_agg is rank
// deficient (e.g. a rotation about the line through a 2-node aggregate); an aggregate with
// fewer dofs than vectors (m < k) gets m coarse dofs instead of k, so no coarse dof has a zero
// column. R is normalised to a non-negative diagonal, so the result is unique.
#include <cstdint>
#include <vector>

#include "amg/aggregation.hpp"
#include "amg/strength.hpp"
#include "local/formats/csr.hpp"
#include "local/formats/dense.hpp"

namespace tessera::amg {

struct TentativeProlongator {
  Csr<double> p;              // fine dofs x coarse dofs; rows of non-aggregated dofs are empty
  DenseMatrix coarse_vectors; // coarse dofs x k, row-major: the coarse near-null space
  NodeLayout coarse_nodes;    // coarse node = aggregate; its dofs are contiguous
};

/// `fine_nodes` is the node layout the aggregates refer to; `b` is rows x k, row-major.
TentativeProlongator tentative_prolongator(const Aggregates& aggregates, const NodeLayout& fine_nodes,
                                           const DenseMatrix& b);

/// Householder QR of the m x k column-major matrix `a` (overwritten). Returns Q (m x c,
/// column-major, c = min(m, k)) and R (c x k, row-major) with non-negative diagonal.
void thin_qr(std::int64_t m, int k, std::vector<double>& a, std::vector<double>& q, std::vector<double>& r);
/// The same, with the reflectors kept in `reflectors` (resized as needed): a loop over many
/// aggregates passes one vector and allocates nothing per aggregate.
void thin_qr(std::int64_t m, int k, std::vector<double>& a, std::vector<double>& q, std::vector<double>& r,
             std::vector<double>& reflectors);

}  // namespace tessera::amg
