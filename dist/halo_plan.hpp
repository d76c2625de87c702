#pragma once
// HaloPlan: who sends which owned entries to whom so that every rank receives the entries of
// its ghost columns, in ghost order. Built once per matrix (one MPI_Alltoall of counts and one
// MPI_Alltoallv of indices) and reused by every SpMV/SpMM; SpGEMM reuses it to request the
// rows of B behind A's ghost columns, and PtAP runs it reversed to return partial rows.
#include <cstdint>
#include <vector>

#include "dist/partition.hpp"
#include "dist/transport.hpp"

namespace tessera::dist {

class Communicator;

struct HaloPlan {
  /// Send side: owned entries for each neighbour; receive side: ghost slots, grouped by owner.
  ExchangePattern pattern;
  /// Owned (rank-local) index of each item of the send buffer, in send order.
  std::vector<std::int64_t> send_local;

  std::int64_t num_ghosts() const { return pattern.recv_count(); }
  std::int64_t num_sent() const { return pattern.send_count(); }

  /// Collective. `ghosts` are sorted, unique global indices owned by other ranks under `owners`.
  static HaloPlan build(const Communicator& comm, const RowPartition& owners, const std::vector<std::int64_t>& ghosts);

  /// Packs the send buffer: items of `item_len` doubles each, from rank-local rows of `owned`.
  void pack(const double* owned, std::int64_t item_len, double* send) const;
};

}  // namespace tessera::dist
