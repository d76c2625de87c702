#include "dist/cuda/device_context.hpp"

#include <cmath>

#include "dist/communicator.hpp"
#include "dist/rank_device.hpp"
#include "dist/transport.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {

namespace {

void destroy_stream(cudaStream_t& s) {
  if (s) cudaStreamDestroy(s);  // errors here are not actionable in a destructor
  s = nullptr;
}

}  // namespace

DeviceContext::DeviceContext(const Communicator& comm) : comm_(comm) {
  // Streams belong to the device that is current when they are created, so the device is
  // chosen first; the transport is made on it and keeps it current.
  const RankDevice device = rank_device(comm);
  TESSERA_CUDA_CHECK(cudaSetDevice(device.index));
  try {
    // The exchange stream gets the highest priority: its pack kernel and NCCL's kernel are
    // queued while the local block's SpMV occupies every SM, and would otherwise wait for the
    // SpMV's pending blocks; with priority they take the next free slots and the halo arrives
    // while the local block is still running.
    int least = 0, greatest = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&compute_, cudaStreamNonBlocking, least));
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&exchange_, cudaStreamNonBlocking, greatest));
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&compute_mark_, cudaEventDisableTiming));
    transport_ = make_device_transport(comm, device, exchange_);
    peer_available_ = tessera::dist::gpu::peer_route_available(comm, transport_->device());
    halo_route_ = initial_halo_route(comm, peer_available_);
    // NCCL connects a collective's ring lazily, at its first call (0.3 s on 4 H200s): an empty
    // dot pays it here, with the communicator, not inside whichever setup or solve comes first.
    dot(0, nullptr, nullptr);
    device_dot_value_.allocate(1, compute_);  // here, not before a later call's allreduce on one rank
  } catch (...) {
    if (exchange_) cudaStreamSynchronize(exchange_);  // no allreduce may still use the dot's buffer
    local_dot_ = tessera::cuda::DeviceDot();  // its buffers are freed on compute_, destroyed next
    local_dots_ = tessera::cuda::DeviceMultiDot();
    device_dot_value_ = tessera::cuda::DeviceBuffer<double>();
    transport_.reset();
    if (compute_mark_) cudaEventDestroy(compute_mark_);
    destroy_stream(exchange_);
    destroy_stream(compute_);
    throw;
  }
}

DeviceContext::~DeviceContext() {
  // The dots' buffers are freed on compute_, so they go before the streams do.
  cudaStreamSynchronize(compute_);
  local_dot_ = tessera::cuda::DeviceDot();
  local_dots_ = tessera::cuda::DeviceMultiDot();
  device_dot_value_ = tessera::cuda::DeviceBuffer<double>();
  cudaStreamSynchronize(compute_);
  transport_.reset();
  cudaEventDestroy(compute_mark_);
  destroy_stream(exchange_);
  destroy_stream(compute_);
}

void DeviceContext::set_halo_route(HaloRoute route) {
  const std::int64_t asked = route == HaloRoute::peer ? 1 : 0;
  TESSERA_REQUIRE_INPUT(comm_.allreduce(asked, ReduceOp::min) == comm_.allreduce(asked, ReduceOp::max),
                        "set_halo_route: the ranks asked for different routes");
  TESSERA_REQUIRE_INPUT(route == HaloRoute::nccl || peer_available_,
                        "halo route peer: the ranks' GPUs cannot map each other's memory (several nodes, or no peer "
                        "access between them)");
  if (route != halo_route_) ++halo_route_changes_;
  halo_route_ = route;
}

void DeviceContext::exchange_after_compute() {
  // Re-recording is safe: a wait captures the event's state when it is queued.
  TESSERA_CUDA_CHECK(cudaEventRecord(compute_mark_, compute_));
  TESSERA_CUDA_CHECK(cudaStreamWaitEvent(exchange_, compute_mark_, 0));
}

void DeviceContext::compute_after_exchange() {
  TESSERA_CUDA_CHECK(cudaStreamWaitEvent(compute_, transport_->exchange_done(), 0));
}

double DeviceContext::dot(std::int64_t n, const double* x, const double* y) {
  TESSERA_REQUIRE_INPUT(n >= 0, "dot: negative length ", n);
  double* sum = local_dot_.device_sum(n, x, y, compute_);
  exchange_after_compute();  // the transport runs on the exchange stream: it must see the partial sum
  return transport_->allreduce_sum_to_host(sum);  // synchronises the exchange stream
}

const double* DeviceContext::device_dot(std::int64_t n, const double* x, const double* y) {
  dot_into(n, x, y, device_dot_value_.data());
  return device_dot_value_.data();
}

void DeviceContext::dot_into(std::int64_t n, const double* x, const double* y, double* result) {
  TESSERA_REQUIRE_INPUT(n >= 0, "dot: negative length ", n);
  local_dot_.sum_into(n, x, y, result, compute_);
  exchange_after_compute();
  transport_->allreduce_sum_on_device(result);
  compute_after_exchange();
}

void DeviceContext::dots_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                              double* results) {
  TESSERA_REQUIRE_INPUT(n >= 0 && count >= 0, "dots: negative length ", n, " or count ", count);
  if (count == 0) return;
  local_dots_.sums_into(n, vectors, stride, count, w, results, compute_);
  exchange_after_compute();
  transport_->allreduce_sum_on_device(results, count);
  compute_after_exchange();
}

double DeviceContext::norm2(std::int64_t n, const double* x) { return std::sqrt(dot(n, x, x)); }

}  // namespace tessera::dist::gpu
