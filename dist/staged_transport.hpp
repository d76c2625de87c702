#pragma once
// StagedTransport: device buffers moved through host memory and MPI (built only with CUDA; the
// choice between transports: device_transport.hpp). Each operation copies what it sends into
// page-locked host memory on the transport's stream, waits for it, moves it with the host
// transport (MPI point to point, or an MPI collective), and queues the copy of the result back
// to the device on the stream. So the host takes part in every operation, and its calls
// return once the MPI traffic is over (the copy back is still queued: order on the stream, or
// on exchange_done(), as with NCCL).
//
// Why it exists: NCCL refuses two ranks on one GPU. With this transport the multi-rank device
// code runs where there are fewer GPUs than ranks -- a one-GPU test machine running the 2-4
// rank `gpu` tests, a workstation -- with the same plans and kernels as on NCCL. It is slower
// (two copies and a host round trip an exchange), so it is never chosen where each rank has a
// GPU of its own unless TESSERA_DEVICE_TRANSPORT=staged asks for it.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/device_transport.hpp"
#include "local/cuda/pinned_host_buffer.hpp"

namespace tessera::dist {

class StagedTransport final : public DeviceTransport {
 public:
  /// Collective over `comm`: duplicates it (so its messages never match those of host code that
  /// exchanges on `comm`) and makes `device` current. `stream` (on that device) orders every
  /// device copy of this transport.
  StagedTransport(const Communicator& comm, int device, cudaStream_t stream);
  ~StagedTransport() override;

  /// The whole exchange: the sent items down, MPI, the received items queued back up.
  void start_exchange(const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
                      void* recv) override;
  void finish_exchange() override;
  void allreduce(double* data, std::int64_t count, ReduceOp op) override;
  void allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) override;
  double allreduce_sum_to_host(double* value) override;
  void allreduce_sum_on_device(double* values, std::int64_t count = 1) override;
  void allgatherv_items(const void* send, void* recv, const std::vector<std::int64_t>& offsets,
                        std::size_t item_bytes) override;

  int device() const override { return device_; }
  cudaStream_t stream() const override { return stream_; }
  cudaEvent_t exchange_done() const override { return done_; }
  const char* name() const override { return "staged"; }
  bool capturable() const override { return false; }

 private:
  /// Page-locked host space of at least `bytes` (send: the first of the two buffers), grown
  /// only once the stream has finished with the old one.
  char* host_space(cuda::PinnedHostBuffer<char>& buffer, std::size_t bytes);
  /// `bytes` of device data down into `host`, and the stream drained (the data is then there).
  void download(void* host, const void* device, std::size_t bytes);
  /// `bytes` of host data queued up to the device on the stream.
  void upload(void* device, const void* host, std::size_t bytes);
  template <class T>
  void reduce_in_place(T* data, std::int64_t count, ReduceOp op);

  Communicator comm_;  // a duplicate of the caller's
  HostTransport host_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  cuda::PinnedHostBuffer<char> send_host_, recv_host_;
};

}  // namespace tessera::dist
