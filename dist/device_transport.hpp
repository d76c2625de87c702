#pragma once
// DeviceTransport: the Transport of device buffers (built only with CUDA), and the choice
// between its two implementations:
//   nccl    NcclTransport: grouped ncclSend/ncclRecv and NCCL collectives, enqueued on the
//           transport's stream without blocking the host. One GPU per rank; the route of
//           every performance figure.
//   staged  StagedTransport: each operation copies the device data to pinned host memory,
//           moves it with MPI, and copies the result back; the host waits for it. Works where
//           NCCL does not -- several ranks on one GPU (a workstation, a one-GPU test machine
//           running the 2-4 rank tests) -- at the price of two copies and a host round trip
//           an exchange, and it cannot be captured into a CUDA graph.
// The device products (dist/cuda, amg/cuda) use only this interface, so both run them
// unchanged: the staged route checks their multi-rank logic where a multi-GPU machine is not
// at hand, and NCCL is the one to time.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dist/transport.hpp"

namespace tessera::dist {

class Communicator;
struct RankDevice;

class DeviceTransport : public Transport {
 public:
  /// allreduce (Transport) is in place on device data and blocks (every caller reads the result
  /// on the host next). The sum over ranks of one device double, returned to the host (a dot
  /// product of the solvers); `value` holds the sum afterwards too, and nothing of the call is
  /// left on the stream (the caller may write `value` from another stream at once).
  virtual double allreduce_sum_to_host(double* value) = 0;
  /// The sums over ranks of `count` device doubles, in place and left on the device, with
  /// finish_exchange() (the nccl route does not synchronise: scalars of a recurrence that never
  /// leave the device).
  virtual void allreduce_sum_on_device(double* values, std::int64_t count = 1) = 0;
  /// recv[offsets[r] .. offsets[r+1]) = rank r's `send` (offsets[me+1] - offsets[me] items),
  /// on every rank. `offsets` (size()+1 nondecreasing entries from 0) must be the same on every
  /// rank (bad offsets: InputError on every rank, before any traffic); ranks with an empty
  /// block still call. Order it like an exchange (wait for the producer, finish_exchange()
  /// after). `send` may be recv + offsets[me] (in place). Items are copied as bytes: doubles in
  /// the solve, the int32 columns and int64 row ends of a matrix gathered whole in the setup.
  template <class T>
  void allgatherv(const T* send, T* recv, const std::vector<std::int64_t>& offsets) {
    allgatherv_items(send, recv, offsets, sizeof(T));
  }
  /// allgatherv of items of `item_bytes` bytes each (offsets count items).
  virtual void allgatherv_items(const void* send, void* recv, const std::vector<std::int64_t>& offsets,
                                std::size_t item_bytes) = 0;

  /// Every operation is ordered on this stream (of device()).
  virtual cudaStream_t stream() const = 0;
  /// Recorded by finish_exchange(): another stream waits on it to see the received data.
  virtual cudaEvent_t exchange_done() const = 0;
  virtual int device() const = 0;
  /// "nccl" or "staged".
  virtual const char* name() const = 0;
  /// Whether its operations may be captured into a CUDA graph (staged: no, the host takes part).
  virtual bool capturable() const = 0;
};

/// allgatherv's check of `offsets` for `ranks` ranks (global data: every rank throws alike).
void require_gather_offsets(const std::vector<std::int64_t>& offsets, int ranks);

enum class DeviceTransportKind { nccl, staged };

/// Collective, the same answer on every rank: TESSERA_DEVICE_TRANSPORT (nccl | staged) when set
/// (staged wins a disagreement: it runs everywhere), otherwise nccl when every rank has a GPU of
/// its own and staged when ranks share one. nccl asked for on shared GPUs, or an unknown name, is
/// an InputError on every rank.
DeviceTransportKind choose_device_transport(const Communicator& comm, const RankDevice& device);

/// Collective: the chosen transport on `device` (made current), ordered on `stream`.
std::unique_ptr<DeviceTransport> make_device_transport(const Communicator& comm, const RankDevice& device,
                                                       cudaStream_t stream);

}  // namespace tessera::dist
