#pragma once
// P^T for a row-partitioned P: the rows of P^T are the columns of P, so every entry belongs to
// the owner of its column. P's local block stays on its rank and is transposed there;
// its non-local entries travel (one all-to-all of counts, one of entries). P^T is
// row-partitioned by P's column partition and column-partitioned by P's row partition.
#include "dist/dist_matrix.hpp"
#include "dist/stats.hpp"

namespace tessera::dist {

class Communicator;

/// Collective.
DistMatrix transpose(const Communicator& comm, const DistMatrix& p, DistStats* stats = nullptr);

/// Collective: the same, with P's local block transposed already (`local_transposed` =
/// ref::transpose(p.local), as DistPtap::p_local_transposed() returns it): only the non-local
/// entries are moved. Its shape and entry count are checked (InputError on every rank).
DistMatrix transpose(const Communicator& comm, const DistMatrix& p, Csr<double> local_transposed,
                     DistStats* stats = nullptr);

/// Collective: whether A equals A^T, each entry within `rtol` (|a_ij - a_ji| <= rtol (|a_ij| +
/// |a_ji|)), patterns exactly; false for a non-square partition. The same answer on every rank
/// (the serial driver's test, on the distributed operator: one transpose).
bool is_symmetric(const Communicator& comm, const DistMatrix& a, double rtol = 1e-12);

}  // namespace tessera::dist
