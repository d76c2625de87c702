#pragma once
// DeviceContext: one rank's device resources for the distributed ops (built only with CUDA).
//   - its GPU: the node-local rank among the visible devices (node_local_device), so Slurm's
//     per-task CUDA_VISIBLE_DEVICES binding and a plain mpirun both work;
//   - an exchange stream, owned by the NcclTransport, that carries packing and NCCL traffic;
//   - a compute stream for the local multiplies and vector updates.
// Every operation of dist/cuda is ordered on compute(); an exchange joins it through events, so
// callers see one stream and never synchronise by hand.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "dist/nccl_transport.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::dist {
class Communicator;
}

namespace tessera::dist::gpu {

class DeviceContext {
 public:
  /// Collective over `comm` (which must outlive the context): selects the rank's device,
  /// creates both streams and the NCCL communicator.
  explicit DeviceContext(const Communicator& comm);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  const Communicator& comm() const { return comm_; }
  NcclTransport& transport() { return *transport_; }
  int device() const { return transport_->device(); }
  cudaStream_t compute() const { return compute_; }
  cudaStream_t exchange() const { return transport_->stream(); }

  /// Collective: x^T y over the owned entries of every rank (device vectors of n entries):
  /// deterministic device partial sums, then an NCCL allreduce; returns the value on the host.
  double dot(std::int64_t n, const double* x, const double* y);
  double norm2(std::int64_t n, const double* x);

 private:
  const Communicator& comm_;
  cudaStream_t compute_ = nullptr;
  cudaStream_t exchange_ = nullptr;  // created here on the rank's device, driven by transport_
  std::unique_ptr<NcclTransport> transport_;
  tessera::cuda::DeviceDot local_dot_;
};

}  // namespace tessera::dist::gpu
