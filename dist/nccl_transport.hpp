#pragma once
// NcclTransport: the device transport of one GPU per rank (built only with CUDA; the choice and
// the interface: device_transport.hpp). Buffers are device pointers; every call is enqueued on
// the transport's stream, and device data never touches MPI (the MPIs we target are not
// CUDA-aware). MPI is used once, to broadcast the NCCL unique id.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "dist/device_transport.hpp"

struct ncclComm;  // from nccl.h, kept out of this header

namespace tessera::dist {

class Communicator;

class NcclTransport final : public DeviceTransport {
 public:
  /// Collective over `comm`: makes `device` current, then creates the NCCL communicator.
  /// `stream` (on that device) orders every operation of this transport. Ranks sharing a GPU
  /// make NCCL fail (choose_device_transport refuses that layout first).
  NcclTransport(const Communicator& comm, int device, cudaStream_t stream);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  /// Posts one grouped ncclSend/ncclRecv per neighbour on the stream (returns at once).
  void start_exchange(const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
                      void* recv) override;
  /// Records the exchange's completion: later work on the transport's stream sees the data;
  /// another stream must wait on exchange_done() first (the SpMV overlap pattern).
  void finish_exchange() override;
  void allreduce(double* data, std::int64_t count, ReduceOp op) override;
  void allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) override;
  /// The allreduce and the copy to pinned memory enqueued together, one synchronisation (three
  /// dots an iteration of PCG: a second blocking cudaMemcpy would add its latency to each).
  double allreduce_sum_to_host(double* value) override;
  /// Enqueued with finish_exchange(), no synchronisation.
  void allreduce_sum_on_device(double* values, std::int64_t count = 1) override;
  /// One grouped ncclBroadcast per rank with a nonempty block (NCCL runs the group as one
  /// launch), enqueued without synchronisation.
  void allgatherv_items(const void* send, void* recv, const std::vector<std::int64_t>& offsets,
                        std::size_t item_bytes) override;

  int device() const override { return device_; }
  cudaStream_t stream() const override { return stream_; }
  cudaEvent_t exchange_done() const override { return done_; }
  const char* name() const override { return "nccl"; }
  bool capturable() const override { return true; }

 private:
  ncclComm* nccl_ = nullptr;
  int rank_ = 0, ranks_ = 1;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  double* pinned_sum_ = nullptr;  // page-locked: the target of allreduce_sum_to_host's copy
  int device_ = 0;
};

}  // namespace tessera::dist
