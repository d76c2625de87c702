#pragma once
// NcclTransport: the device transport (built only with CUDA). Buffers are device pointers;
// every call is enqueued on the transport's stream, and device data never touches MPI (the
// MPIs we target are not CUDA-aware). MPI is used once, to broadcast the NCCL unique id.
// One GPU per rank: the device is the rank's index on its node (MPI_COMM_TYPE_SHARED).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "dist/transport.hpp"

struct ncclComm;  // from nccl.h, kept out of this header

namespace tessera::dist {

class Communicator;

class NcclTransport final : public Transport {
 public:
  /// Collective over `comm`: selects and sets this rank's device, then creates the NCCL
  /// communicator. `stream` (on that device) orders every operation of this transport.
  NcclTransport(const Communicator& comm, cudaStream_t stream);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  /// Posts one grouped ncclSend/ncclRecv per neighbour on the stream (returns at once).
  void start_exchange(const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
                      void* recv) override;
  /// Records the exchange's completion: later work on the transport's stream sees the data;
  /// another stream must wait on exchange_done() first (the SpMV overlap pattern).
  void finish_exchange() override;
  /// In place on device data, blocking (the host reads the result next in every caller).
  void allreduce(double* data, std::int64_t count, ReduceOp op) override;
  void allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) override;
  /// The sum over ranks of one device double, returned to the host: the allreduce and the copy
  /// to pinned memory enqueued together, one synchronisation (a dot product of the solvers,
  /// three an iteration of PCG: a second blocking cudaMemcpy would add its latency to each).
  double allreduce_sum_to_host(double* value);
  /// The sums over ranks of `count` device doubles, in place and left on the device: enqueued
  /// with finish_exchange(), no synchronisation (a recurrence whose scalars never leave the
  /// device; Gram-Schmidt's projection coefficients, which the next kernel reads).
  void allreduce_sum_on_device(double* values, std::int64_t count = 1);

  /// recv[offsets[r] .. offsets[r+1]) = rank r's `send` (offsets[me+1] - offsets[me] doubles),
  /// on every rank: one grouped ncclBroadcast per rank with a nonempty block (NCCL runs the group
  /// as one launch). `offsets` (size()+1 nondecreasing entries from 0) must be the same on every
  /// rank; ranks with an empty block still call (they receive). Enqueued on the stream, no
  /// synchronisation: order it like an exchange (wait for the producer, finish_exchange() after).
  /// `send` may be recv + offsets[me] (in place).
  void allgatherv(const double* send, double* recv, const std::vector<std::int64_t>& offsets);

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cudaEvent_t exchange_done() const { return done_; }

 private:
  ncclComm* nccl_ = nullptr;
  int rank_ = 0, ranks_ = 1;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  double* pinned_sum_ = nullptr;  // page-locked: the target of allreduce_sum_to_host's copy
  int device_ = 0;
};

/// The device this rank uses: its rank among the ranks of its node, modulo the visible device
/// count. Collective: two ranks of one node on the same physical GPU is an InputError on every
/// rank (NCCL needs one GPU per rank).
int node_local_device(const Communicator& comm);

}  // namespace tessera::dist
