// Host code only: the products of a level, fed A_ext from the level's device copy.
#include "amg/cuda/device_held_extended_a.hpp"

#include <chrono>

#include "amg/cuda/device_operator_slot.hpp"
#include "dist/cuda/device_extended_block.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

class DeviceHeldExtendedA final : public dist::HeldExtendedA {
 public:
  DeviceHeldExtendedA(const dist::DistMatrix& a, DeviceOperatorSlot& slot, int device, cudaStream_t stream,
                      cuda::OffloadSpgemm which, std::shared_ptr<cuda::OffloadStats> stats)
      : a_(a), slot_(slot), device_(device), stream_(stream), which_(which), stats_(std::move(stats)) {}

  const dist::DistMatrix& source() const override { return a_; }

  Csr<double> times(const Csr<double>& b) override {
    return cuda::offload_spgemm(extended(), b, which_, *stats_);
  }

  dist::ChainedProduct chain(const Csr<double>& l, const Csr<double>& b) override {
    dist::ChainedProduct c;
    c.product = cuda::offload_chain(l, extended(), b, which_, *stats_, &c.inner_entries);
    return c;
  }

  // A_ext from the slot's current copy, ready on the default stream the offloaded products use:
  // device_operator leaves the copy synchronised, and the assembly runs on the default stream.
  cuda::DeviceCsr<double> extended() {
    TESSERA_TRACE_STEP("spgemm.device_extended_a");
    TESSERA_CUDA_CHECK(cudaSetDevice(device_));
    const dist::gpu::DeviceDistMatrix& copy = device_operator(slot_, a_, stream_);
    const auto start = std::chrono::steady_clock::now();
    cuda::DeviceCsr<double> ext = dist::gpu::extended_block(copy, nullptr);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    stats_->convert += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return ext;
  }

 private:
  const dist::DistMatrix& a_;
  DeviceOperatorSlot& slot_;
  int device_;
  cudaStream_t stream_;
  cuda::OffloadSpgemm which_;
  std::shared_ptr<cuda::OffloadStats> stats_;
};

}  // namespace

DistHeldExtendedA device_held_extended_a(cudaStream_t stream, cuda::OffloadSpgemm which,
                                          std::shared_ptr<cuda::OffloadStats> stats) {
  if (!stats) stats = std::make_shared<cuda::OffloadStats>();
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  return [=](const dist::DistMatrix& a, DeviceOperatorSlot& slot) -> std::shared_ptr<dist::HeldExtendedA> {
    return std::make_shared<DeviceHeldExtendedA>(a, slot, device, stream, which, stats);
  };
}

cuda::DeviceCsr<double> device_extended_a(dist::HeldExtendedA& held) {
  auto* device = dynamic_cast<DeviceHeldExtendedA*>(&held);
  TESSERA_ASSERT(device, "device_extended_a: A_ext is not held on a device by device_held_extended_a");
  return device->extended();
}

}  // namespace tessera::amg::gpu
