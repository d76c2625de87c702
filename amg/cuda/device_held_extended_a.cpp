// Host code only: the products of a level, fed A_ext from the level's device copy.
#include "amg/cuda/device_held_extended_a.hpp"

#include <chrono>
#include <optional>

#include "amg/cuda/device_operator_slot.hpp"
#include "dist/cuda/device_compact_extended_rows.hpp"
#include "dist/cuda/device_extended_block.hpp"
#include "dist/cuda/device_held_operand.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/spgemm_engine_choice.hpp"

namespace tessera::amg::gpu {
namespace {

class DeviceHeldExtendedA final : public dist::HeldExtendedA {
 public:
  DeviceHeldExtendedA(const dist::DistMatrix& a, DeviceOperatorSlot& slot, int device, cudaStream_t stream,
                      cuda::OffloadSpgemm which, std::shared_ptr<cuda::OffloadStats> stats)
      : a_(a), slot_(slot), device_(device), stream_(stream), which_(which), stats_(std::move(stats)) {}

  const dist::DistMatrix& source() const override { return a_; }

  Csr<double> times(const Csr<double>& b) override {
    cuda::DeviceCsr<double> a = extended();
    const cuda::OffloadSpgemm engine = level_engine(a, b);
    return cuda::offload_spgemm(std::move(a), b, engine, *stats_);
  }

  dist::ChainedProduct chain(const Csr<double>& l, const Csr<double>& b) override {
    cuda::DeviceCsr<double> a = extended();
    const cuda::OffloadSpgemm engine = level_engine(a, b);
    dist::ChainedProduct c;
    c.product = cuda::offload_chain(l, std::move(a), b, engine, *stats_, &c.inner_entries);
    return c;
  }

  // L and B's rows where the smoothing's merge left them: B_ext is assembled from B's blocks,
  // which are freed then (B_ext holds their entries), and nothing is uploaded. The product stays
  // on the device beside its download (the Galerkin product's first outer product, from which the
  // coarse level's device copy is made instead of uploading C).
  dist::ChainedProduct chain(dist::HeldOperand& held, const dist::ExtendedBSource& source) override {
    auto* on_device = dynamic_cast<dist::gpu::DeviceHeldOperand*>(&held);
    TESSERA_ASSERT(on_device && on_device->device == device_,
                   "device_held_extended_a: the held operand was not made on this A's GPU");
    TESSERA_CUDA_CHECK(cudaSetDevice(device_));
    cuda::DeviceCsr<double> a = extended();
    cuda::DeviceCsr<double> b = extended_b(*on_device, source);
    const cuda::OffloadSpgemm engine = level_engine(a, b);
    auto kept = std::make_shared<dist::gpu::DeviceHeldProduct>();
    kept->device = device_;
    dist::ChainedProduct c;
    c.product = cuda::offload_chain(std::move(on_device->transposed), std::move(a), std::move(b), engine, *stats_,
                                    &c.inner_entries, &kept->product);
    if (kept->product.row_ptr.size() > 0) c.on_device = std::move(kept);  // none where no product ran
    return c;
  }

  // The level's engine (automatic resolved as the one-GPU hierarchy resolves a level's): fixed by
  // the level's first product through A, A*P_tent in the smoothing or, if P is not smoothed, A*P
  // in the first Galerkin product, and given to its later products, its re-setups' included, so
  // that where P is merged does not change the engines. Resolving each product alone sends
  // P^T (A P) to cuSPARSE on coarse levels (R's rows are long there: past kHashMaxProductsPerRow,
  // the rule for power-law rows), and cuSPARSE's first use costs a process 35 ms to load its
  // kernels.
  cuda::OffloadSpgemm level_engine(const cuda::DeviceCsr<double>& a, const cuda::DeviceCsr<double>& b) {
    if (!level_engine_) {
      const auto start = std::chrono::steady_clock::now();
      level_engine_ = cuda::resolve_level_spgemm_engine(which_, a, b, nullptr);
      stats_->convert += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return *level_engine_;
  }

  // The same with B on the host, uploaded for the estimate if the engine is still open: only where
  // a backend smooths P on the host beside this held A (its first product is then A*P_tent here).
  cuda::OffloadSpgemm level_engine(const cuda::DeviceCsr<double>& a, const Csr<double>& b) {
    if (!level_engine_ && which_ == cuda::OffloadSpgemm::automatic) return level_engine(a, cuda::upload(b));
    return level_engine_.value_or(which_);
  }

  std::shared_ptr<const cuda::DeviceBuffer<double>> inverse_diagonal() const {
    return current_inverse_diagonal(slot_, a_);
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

  // B_ext from the held blocks, on the default stream as extended(); counted as a conversion.
  cuda::DeviceCsr<double> extended_b(dist::gpu::DeviceHeldOperand& held, const dist::ExtendedBSource& source) {
    TESSERA_TRACE_STEP("spgemm.device_extended_b");
    const auto start = std::chrono::steady_clock::now();
    cuda::DeviceCsr<double> ext = dist::gpu::compact_extended_rows(held.local, held.nonlocal, source, nullptr);
    held.local = {};
    held.nonlocal = {};
    stats_->convert += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return ext;
  }

 private:
  const dist::DistMatrix& a_;
  DeviceOperatorSlot& slot_;
  int device_;
  cudaStream_t stream_;
  cuda::OffloadSpgemm which_;
  std::optional<cuda::OffloadSpgemm> level_engine_;
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

cuda::OffloadSpgemm level_engine(dist::HeldExtendedA& held, const cuda::DeviceCsr<double>& a_ext,
                                 const cuda::DeviceCsr<double>& b) {
  auto* device = dynamic_cast<DeviceHeldExtendedA*>(&held);
  TESSERA_ASSERT(device, "level_engine: A_ext is not held on a device by device_held_extended_a");
  return device->level_engine(a_ext, b);
}

std::shared_ptr<const cuda::DeviceBuffer<double>> held_inverse_diagonal(const dist::HeldExtendedA& held) {
  const auto* device = dynamic_cast<const DeviceHeldExtendedA*>(&held);
  TESSERA_ASSERT(device, "held_inverse_diagonal: A_ext is not held on a device by device_held_extended_a");
  return device->inverse_diagonal();
}

}  // namespace tessera::amg::gpu
