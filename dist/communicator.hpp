#pragma once
// Communicator: one duplicated MPI communicator (so library traffic never matches user
// messages) plus the host collectives the distributed layer needs. Device buffers never go
// through it: the MPIs we target are not CUDA-aware (see nccl_transport.hpp).
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dist/transport.hpp"

namespace tessera::dist {

class Communicator {
 public:
  /// Duplicates `base` (collective over `base`).
  explicit Communicator(MPI_Comm base = MPI_COMM_WORLD);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;

  MPI_Comm mpi() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  double allreduce(double value, ReduceOp op) const;
  std::int64_t allreduce(std::int64_t value, ReduceOp op) const;
  void allreduce_in_place(std::vector<double>& values, ReduceOp op) const;
  void allreduce_in_place(std::vector<std::int64_t>& values, ReduceOp op) const;

  /// One value from each rank, in rank order.
  std::vector<std::int64_t> allgather(std::int64_t value) const;
  /// counts[q] sent to rank q -> counts received from each rank.
  std::vector<std::int64_t> alltoall(const std::vector<std::int64_t>& send_counts) const;
  /// Personalised all-to-all of variable-size blocks of T (counts in items, per rank).
  template <class T>
  std::vector<T> alltoallv(const std::vector<T>& send, const std::vector<std::int64_t>& send_counts,
                           const std::vector<std::int64_t>& recv_counts) const {
    std::int64_t total = 0;
    for (std::int64_t c : recv_counts) total += c;
    std::vector<T> recv(static_cast<std::size_t>(total));
    alltoallv_bytes(send.data(), send_counts, recv.data(), recv_counts, sizeof(T));
    return recv;
  }
  /// Concatenation of every rank's block at `root` (empty elsewhere).
  template <class T, class Allocator>
  std::vector<T> gatherv(const std::vector<T, Allocator>& mine, int root) const {
    std::vector<std::int64_t> counts = allgather(static_cast<std::int64_t>(mine.size()));
    std::int64_t total = 0;
    for (std::int64_t c : counts) total += c;
    std::vector<T> all(rank_ == root ? static_cast<std::size_t>(total) : 0);
    gatherv_bytes(mine.data(), static_cast<std::int64_t>(mine.size()), all.data(), counts, sizeof(T), root);
    return all;
  }
  /// `text` of rank `root` on every rank.
  std::string broadcast(const std::string& text, int root) const;
  void barrier() const;

 private:
  void alltoallv_bytes(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                       const std::vector<std::int64_t>& recv_counts, std::size_t item_bytes) const;
  void gatherv_bytes(const void* send, std::int64_t count, void* recv, const std::vector<std::int64_t>& counts,
                     std::size_t item_bytes, int root) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

/// Transport over MPI point-to-point messages for host buffers: Irecv/Isend per neighbour.
/// Messages carry one fixed tag, so at most one exchange may be in flight per Communicator
/// (MPI's non-overtaking order then matches them); ops use one transport at a time.
class HostTransport final : public Transport {
 public:
  explicit HostTransport(const Communicator& comm) : comm_(comm) {}
  ~HostTransport() override;
  void start_exchange(const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
                      void* recv) override;
  void finish_exchange() override;
  void allreduce(double* data, std::int64_t count, ReduceOp op) override;
  void allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) override;

 private:
  const Communicator& comm_;
  std::vector<MPI_Request> requests_;
  MPI_Datatype item_type_ = MPI_DATATYPE_NULL;
};

/// Collective error agreement: every rank passes its own error text ("" = fine). If any rank
/// failed, every rank throws the same InputError (the lowest failing rank's text), so no rank
/// is left waiting in a later collective.
void throw_if_any_rank_failed(const Communicator& comm, const std::string& local_error);

/// Blocking exchange of one pattern on host buffers (item_bytes per item).
void exchange(const Communicator& comm, const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
              void* recv);

}  // namespace tessera::dist
