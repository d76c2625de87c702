#pragma once
// The three communication shapes of the distributed AMG setup, on plain-old-data items:
//   halo_values  one value per owned row travels to the ranks that hold it as a ghost column
//                (the operator's own HaloPlan; used for node ids, diagonal norms, MIS states);
//                halo_exchange takes the values already packed for the rows sent only;
//   route        items addressed to arbitrary ranks (aggregate members to the aggregate's
//                owner and Q rows back): one all-to-all of counts, one of items;
//   allgatherv   every rank's block on every rank (the small coarsest operator and its rhs).
#include <mpi.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "local/core/error.hpp"

namespace tessera::amg {

/// The halo exchange of values already packed in send order (send[i]: the value of owned row
/// a.halo.send_local[i]): ghosts[g] for ghost column a.ghost_cols[g]. Collective.
template <class T>
std::vector<T> halo_exchange(const dist::Communicator& comm, const dist::DistMatrix& a, const std::vector<T>& send) {
  static_assert(std::is_trivially_copyable_v<T>);
  TESSERA_ASSERT(send.size() == a.halo.send_local.size(), "halo exchange: ", send.size(), " values for ",
                 a.halo.send_local.size(), " sent rows");
  std::vector<T> ghosts(static_cast<std::size_t>(a.halo.num_ghosts()));
  dist::exchange(comm, a.halo.pattern, sizeof(T), send.data(), ghosts.data());
  return ghosts;
}

/// ghosts[g] = owned value of ghost column a.ghost_cols[g] on its owner. Collective.
template <class T>
std::vector<T> halo_values(const dist::Communicator& comm, const dist::DistMatrix& a, const std::vector<T>& owned) {
  std::vector<T> send(a.halo.send_local.size());
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = owned[static_cast<std::size_t>(a.halo.send_local[i])];
  return halo_exchange(comm, a, send);
}

/// Sends by_rank[q] to rank q; returns what every rank sent here, in rank order. Collective.
template <class T>
std::vector<T> route(const dist::Communicator& comm, const std::vector<std::vector<T>>& by_rank) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<std::int64_t> counts(by_rank.size());
  std::size_t total = 0;
  for (std::size_t q = 0; q < by_rank.size(); ++q) total += by_rank[q].size();
  std::vector<T> send;
  send.reserve(total);  // the setup routes millions of items: one allocation, no regrowth
  for (std::size_t q = 0; q < by_rank.size(); ++q) {
    counts[q] = static_cast<std::int64_t>(by_rank[q].size());
    send.insert(send.end(), by_rank[q].begin(), by_rank[q].end());
  }
  return comm.alltoallv(send, counts, comm.alltoall(counts));
}

/// Concatenation of every rank's `mine` in rank order, on every rank. Collective; for small
/// data (byte counts must fit int).
template <class T, class Allocator>
std::vector<T> allgatherv(const dist::Communicator& comm, const std::vector<T, Allocator>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::vector<std::int64_t> counts = comm.allgather(static_cast<std::int64_t>(mine.size()));
  std::vector<int> bytes(counts.size()), displs(counts.size());
  std::int64_t total = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    TESSERA_REQUIRE_INPUT((total + counts[q]) * std::int64_t{sizeof(T)} < (std::int64_t{1} << 31),
                          "allgatherv: ", total + counts[q], " items exceed the int byte counts of MPI_Allgatherv");
    bytes[q] = static_cast<int>(counts[q] * std::int64_t{sizeof(T)});
    displs[q] = static_cast<int>(total * std::int64_t{sizeof(T)});
    total += counts[q];
  }
  std::vector<T> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size() * sizeof(T)), MPI_BYTE, all.data(), bytes.data(),
                 displs.data(), MPI_BYTE, comm.mpi());
  return all;
}

}  // namespace tessera::amg
