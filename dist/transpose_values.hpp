#pragma once
// R = P^T's values again for new values of P with the same pattern, without transposing again:
// a value map made once from P and the R that dist::transpose made of it. Every value of R is a
// copy of one value of P, so a refresh is a gather and one exchange:
//   R's local block   <- P's local block, on the rank (transposed in place by index);
//   R's non-local     <- the other ranks' non-local entries of P, each sent to the owner of its
//                        column, over a fixed pattern of counts (one exchange of values).
// The map is found from coordinates, not from dist::transpose's internal order: each rank sends
// the global (row, column) in R of every non-local entry once, and the owner looks it up in
// R's rows. So any R with P^T's pattern serves, and a refresh equals dist::transpose of the new
// P bit for bit (copies only). An R of another pattern is an InputError on every rank.
// It is what an AMG re-setup needs for R = P^T (amg/dist/dist_hierarchy.cpp), and what a device
// refresh would run on device buffers (the same gather, exchange, scatter).
#include <cstdint>

#include "dist/dist_matrix.hpp"
#include "dist/transport.hpp"
#include "local/core/host_array.hpp"

namespace tessera::dist {

class Communicator;

struct TransposeValueMap {
  HostArray<std::int64_t> local_source;     // R.local value k <- P.local value local_source[k]
  HostArray<std::int64_t> send_source;      // sent item i <- P.nonlocal value send_source[i]
  ExchangePattern pattern;                  // P's non-local entries to the owners of their columns
  HostArray<std::int64_t> received_target;  // received item i -> R.nonlocal value received_target[i]
  std::int64_t p_local_entries = 0, p_nonlocal_entries = 0;  // P's counts the map was made for
};

/// Collective: the map from P's values to R's, R = transpose(comm, p) (or any R of that pattern
/// and partitions). InputError on every rank when R is not P^T's pattern.
TransposeValueMap transpose_value_map(const Communicator& comm, const DistMatrix& p, const DistMatrix& r);

/// Collective: R's values from P's (P and R of the map's patterns; InputError on every rank
/// when P's entry counts differ from the map's).
void refresh_transpose_values(const Communicator& comm, const TransposeValueMap& map, const DistMatrix& p,
                              DistMatrix& r);

}  // namespace tessera::dist
