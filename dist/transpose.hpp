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

}  // namespace tessera::dist
