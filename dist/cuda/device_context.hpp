#pragma once
// DeviceContext: one rank's device resources for the distributed ops (built only with CUDA).
//   - its GPU: the node-local rank among the visible devices (rank_device.hpp), so Slurm's
//     per-task CUDA_VISIBLE_DEVICES binding and a plain mpirun both work;
//   - the device transport (device_transport.hpp): NCCL where every rank has a GPU of its own,
//     host-staged MPI where ranks share one, or as TESSERA_DEVICE_TRANSPORT says;
//   - an exchange stream, driven by the transport, that carries packing and exchange traffic;
//   - a compute stream for the local multiplies and vector updates;
//   - the route of the products' halo exchanges (halo_route.hpp): peer where every rank's GPU
//     can map the others', the transport otherwise (the route named "nccl"), or as
//     TESSERA_HALO_ROUTE / set_halo_route say.
// Every operation of dist/cuda is ordered on compute(); an exchange joins it through events
// (exchange_after_compute / compute_after_exchange), so callers see one stream and never
// synchronise by hand.
//
// Lifetime: device buffers made with a context (DeviceDistMatrix, DeviceDistSpgemm,
// DeviceDistPtap, the AMG preconditioners, the dot's scratch) are stream-ordered and freed on
// the context's streams. The DeviceContext must therefore outlive every object made with it:
// declare it first, destroy it last.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "dist/cuda/halo_route.hpp"
#include "dist/cuda/peer_halo_exchange.hpp"
#include "dist/device_transport.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::dist {
class Communicator;
}

namespace tessera::dist::gpu {

class DeviceContext {
 public:
  /// Collective over `comm` (which must outlive the context): selects the rank's device,
  /// creates both streams and the device transport (NCCL's allreduce connected by one empty
  /// dot), and chooses the halo route.
  explicit DeviceContext(const Communicator& comm);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  const Communicator& comm() const { return comm_; }
  DeviceTransport& transport() { return *transport_; }
  const DeviceTransport& transport() const { return *transport_; }
  int device() const { return transport_->device(); }
  cudaStream_t compute() const { return compute_; }
  cudaStream_t exchange() const { return transport_->stream(); }

  HaloRoute halo_route() const { return halo_route_; }
  bool peer_route_available() const { return peer_available_; }
  /// Collective: every rank must ask for the same route (checked: a disagreement, or peer where
  /// it is not available, is an InputError on every rank).
  void set_halo_route(HaloRoute route);
  /// Bumped by every change of route: CUDA graphs of products hold one route's kernels.
  std::uint64_t halo_route_changes() const { return halo_route_changes_; }
  /// Where the peer route's exchanges leave their regions for a collective free.
  RetiredPeerRegions& retired_peer_regions() { return retired_peer_regions_; }

  /// The exchange stream waits for the work queued so far on compute (a pack or an NCCL call
  /// must see values written on compute). One persistent event: nothing is created per call.
  void exchange_after_compute();
  /// The compute stream waits for the exchange last finished (transport().finish_exchange()).
  void compute_after_exchange();

  /// Collective: x^T y over the owned entries of every rank (device vectors of n entries):
  /// deterministic device partial sums, then the transport's allreduce; returns the value on the host.
  double dot(std::int64_t n, const double* x, const double* y);
  double norm2(std::int64_t n, const double* x);
  /// Collective: the same global x^T y left in device memory, ordered on compute(), without
  /// synchronising. The value lives until the next device_dot of this context.
  const double* device_dot(std::int64_t n, const double* x, const double* y);
  /// Collective: the same global x^T y written to `*result` (device memory the caller keeps),
  /// ordered on compute(), without synchronising.
  void dot_into(std::int64_t n, const double* x, const double* y, double* result);
  /// Collective: results[i] = the global v_i^T w for the `count` vectors v_i = vectors + i *
  /// stride (n owned entries each), in device memory, ordered on compute(), without
  /// synchronising: one pass of local sums (DeviceMultiDot) and one allreduce of `count` values.
  void dots_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                 double* results);
  /// Allocates the local partial sums of up to `count` batched dots now (else their first call
  /// does): a caller that allocates collectively reserves them there.
  void reserve_dots(int count) { local_dots_.reserve(count, compute_); }

 private:
  const Communicator& comm_;
  cudaStream_t compute_ = nullptr;
  cudaStream_t exchange_ = nullptr;  // created here on the rank's device, driven by transport_
  cudaEvent_t compute_mark_ = nullptr;  // recorded on compute_, waited on by exchange_
  std::unique_ptr<DeviceTransport> transport_;
  bool peer_available_ = false;
  HaloRoute halo_route_ = HaloRoute::nccl;
  std::uint64_t halo_route_changes_ = 0;
  RetiredPeerRegions retired_peer_regions_;
  tessera::cuda::DeviceDot local_dot_;
  tessera::cuda::DeviceMultiDot local_dots_;
  tessera::cuda::DeviceBuffer<double> device_dot_value_;  // device_dot's result
};

}  // namespace tessera::dist::gpu
