#pragma once
// y = A x and Y = A X over a row-partitioned A: post the halo exchange (nonblocking), multiply
// the local block while it is in flight, wait, then add the non-local block's product. The
// device backend keeps this order with an exchange stream and a compute stream.
#include <vector>

#include "dist/dist_matrix.hpp"
#include "dist/dist_vector.hpp"
#include "dist/stats.hpp"

namespace tessera::dist {

class Communicator;

/// x.owned holds this rank's entries of the column partition; x.ghosts is (re)filled.
/// y receives this rank's rows of A x. `stats` (optional) accumulates traffic and times.
void spmv(const Communicator& comm, const DistMatrix& a, DistVector& x, std::vector<double>& y,
          DistStats* stats = nullptr);
/// The same with the owned entries read where they are (no copy into a DistVector) and
/// `x_ghosts` the ghost buffer, (re)filled: the AMG cycle's vectors are plain owned vectors.
void spmv(const Communicator& comm, const DistMatrix& a, const std::vector<double>& x_owned,
          std::vector<double>& x_ghosts, std::vector<double>& y, DistStats* stats = nullptr);

/// Y = A X for k = x.cols right-hand sides (row-major).
void spmm(const Communicator& comm, const DistMatrix& a, DistMultiVector& x, DistMultiVector& y,
          DistStats* stats = nullptr);

/// Global reductions over the owned entries: each rank's part is host::dot's (blocks of entries
/// in a fixed order, on the rank's threads), then the ranks' parts are summed by the allreduce.
double dot(const Communicator& comm, const std::vector<double>& x, const std::vector<double>& y);
double norm2(const Communicator& comm, const std::vector<double>& x);

}  // namespace tessera::dist
