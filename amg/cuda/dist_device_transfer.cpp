// Host code only: plans and runs a distributed re-setup's level transfer on the GPU.
#include "amg/cuda/dist_device_transfer.hpp"

#include <chrono>
#include <optional>

#include "amg/cuda/device_operator_slot.hpp"
#include "amg/cuda/device_smoothing_replay.hpp"
#include "dist/collective_call.hpp"
#include "dist/cuda/device_compact_spgemm.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/cuda/device_dist_ptap.hpp"
#include "dist/cuda/device_transpose_values.hpp"
#include "dist/transpose_values.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/tile_convert.hpp"

namespace tessera::amg::gpu {

namespace {

/// Adds the scope's wall time to `seconds` (the level's SetupTimes, as the host phases do).
struct AddSeconds {
  double& seconds;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  ~AddSeconds() { seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

/// n values from the device into host memory, waiting for `stream` (nothing to copy: no call).
void download(double* host, const double* device, std::int64_t n, cudaStream_t stream) {
  if (n > 0) tessera::cuda::copy_to_host(host, device, static_cast<std::size_t>(n) * sizeof(double), stream);
}

/// Both blocks' values of a device matrix into the host matrix of its pattern.
void download_values(const tessera::cuda::DeviceCsr<double>& local, const tessera::cuda::DeviceCsr<double>& nonlocal,
                     dist::DistMatrix& host, cudaStream_t stream) {
  TESSERA_ASSERT(local.nnz == host.local.nnz() && nonlocal.nnz == host.nonlocal.nnz(),
                 "transfer on the device: a device matrix is not of its host matrix's pattern");
  download(host.local.values.data(), local.values.data(), local.nnz, stream);
  download(host.nonlocal.values.data(), nonlocal.values.data(), nonlocal.nnz, stream);
}

}  // namespace

DistDeviceTransfer::DistDeviceTransfer(dist::gpu::DeviceContext& ctx, const dist::TransposeValueMap& r_map,
                                       DistLevel& fine, DistLevel& coarse)
    : ctx_(ctx), smoothed_(fine.a_times_p_tent != nullptr) {
  TESSERA_ASSERT(!smoothed_ || fine.p_sources, "transfer on the device: P is smoothed but has no record yet");
  const cudaStream_t s = ctx.compute();
  std::optional<trace::Step> step(std::in_place, "device_copies");
  device_operator(fine.device_a, fine.a, s);
  a_ = fine.device_a.matrix;
  device_operator(coarse.device_a, coarse.a, s);
  c_ = coarse.device_a.matrix;
  p_ = std::make_unique<dist::gpu::DeviceDistMatrix>(fine.p, s);
  dist::gpu::HeldOperand held_a{a_.get(), {}};  // one A_ext on the device for both products
  if (smoothed_) {
    HostArray<double> tent(fine.p_tent.local.values.begin(), fine.p_tent.local.values.end());
    tent.insert(tent.end(), fine.p_tent.nonlocal.values.begin(), fine.p_tent.nonlocal.values.end());
    tent_.upload(tent, s);
    // The smoothing's operand: A_F, with an A_ext of its own, where the level has one; else A,
    // whose A_ext the Galerkin product shares.
    std::optional<dist::gpu::HeldOperand> held_filtered;
    if (fine.filtered) {
      device_operator(fine.device_filtered, fine.filtered->a, s);
      a_filtered_ = fine.device_filtered.matrix;
      held_filtered.emplace(dist::gpu::HeldOperand{a_filtered_.get(), {}});
    }
    step.emplace("a_times_p_tent_plan");
    a_times_p_tent_ = std::make_unique<dist::gpu::DeviceCompactSpgemm>(
        ctx, *fine.a_times_p_tent, fine.filtered ? fine.filtered->a : fine.a, fine.p_tent,
        held_filtered ? &*held_filtered : &held_a);
    step.emplace("replay_plan");
    const tessera::cuda::DeviceBuffer<std::int64_t> ap_tiles = tessera::cuda::csr_positions(a_times_p_tent_->product(), s);
    replay_ = std::make_unique<DeviceSmoothingReplay>(*fine.p_sources, fine.p, ap_tiles, s);
    inv_diag_.allocate(fine.inv_diag.size(), s);
  }
  step.emplace("galerkin_plan");
  galerkin_ =
      std::make_unique<dist::gpu::DeviceDistPtap>(ctx, *fine.galerkin, fine.a, fine.p, &held_a, p_.get(), &coarse.a);
  step.emplace("transpose_plan");
  transpose_ = std::make_unique<dist::gpu::DeviceTransposeValues>(ctx, r_map);
  r_local_.allocate(static_cast<std::size_t>(fine.r.local.nnz()), s);
  r_nonlocal_.allocate(static_cast<std::size_t>(fine.r.nonlocal.nnz()), s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
}

DistDeviceTransfer::~DistDeviceTransfer() = default;

void DistDeviceTransfer::run(const dist::Communicator& comm, DistLevel& fine, DistLevel& coarse) {
  TESSERA_ASSERT(&comm == &ctx_.comm(), "DistDeviceTransfer: a communicator other than its context's");
  TESSERA_ASSERT(current_copy(fine.device_a, fine.a) == a_ && coarse.device_a.matrix == c_,
                 "transfer on the device: a level's device copy of A is not current or not the planned one");
  const cudaStream_t s = ctx_.compute();
  {
    TESSERA_TRACE_STEP("smoothing");
    AddSeconds add{fine.times.smoothing};
    if (smoothed_) {
      // A_F's values as the hierarchy refreshed them (its device eigenvalue estimate has sent
      // them; another estimator may not have).
      const dist::gpu::DeviceDistMatrix& smoothing_operand =
          a_filtered_ ? device_operator(fine.device_filtered, fine.filtered->a, s) : *a_;
      TESSERA_ASSERT(!a_filtered_ || &smoothing_operand == a_filtered_.get(),
                     "transfer on the device: the level's device copy of A_F is not the planned one");
      fill_inverse_diagonal(fine.device_a, fine.a, fine.inv_diag, inv_diag_, s);  // where the GPU divided it
      a_times_p_tent_->recompute(dist::gpu::matrix_values(smoothing_operand),
                                 dist::gpu::ValueSources().add(tent_.data(), tent_.size()));
      replay_->run(tent_.data(), a_times_p_tent_->product().values.data(), inv_diag_.data(), fine.omega, p_->local,
                   p_->nonlocal, s);
      download_values(p_->local, p_->nonlocal, fine.p, s);
    }
  }
  TESSERA_TRACE_STEP("galerkin");
  AddSeconds add{fine.times.galerkin};
  galerkin_->recompute(*a_, *p_, *c_);
  transpose_->refresh(dist::gpu::matrix_values(*p_),
                      dist::gpu::ValueTargets{r_local_.data(), fine.r.local.nnz(), r_nonlocal_.data()});
  download(fine.r.local.values.data(), r_local_.data(), fine.r.local.nnz(), s);
  download(fine.r.nonlocal.values.data(), r_nonlocal_.data(), fine.r.nonlocal.nnz(), s);
  download_values(c_->local, c_->nonlocal, coarse.a, s);
  coarse.device_a.stale = false;  // computed there, and the host now holds the same values
  coarse.device_a.inverse_diagonal.reset();  // divided from the old ones
}

DistTransferOnDevice dist_device_transfer(dist::gpu::DeviceContext& ctx) {
  return [&ctx](const dist::Communicator& comm, DistLevel& fine,
                DistLevel& coarse) -> std::shared_ptr<DistLevelTransfer> {
    TESSERA_ASSERT(&comm == &ctx.comm(), "dist_device_transfer: a communicator other than its context's");
    const dist::TransposeValueMap r_map = dist::transpose_value_map(comm, fine.p, fine.r);  // collective, host
    return dist::call_collectively(comm, "planning the re-setup's transfer on the GPUs", [&] {
      return std::make_shared<DistDeviceTransfer>(ctx, r_map, fine, coarse);
    });
  };
}

}  // namespace tessera::amg::gpu
