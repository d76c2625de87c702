#include "dist/cuda/device_dist_ptap.hpp"

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/cuda/device_extended_block.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/tile_convert.hpp"

namespace tessera::dist::gpu {

namespace {

/// P^T's tile operand: the transpose of P's extended block, each value the index of its source in
/// P's [local | non-local], tagged on the device from `held` (P's device copy) or on the host.
TiledOperand p_transposed_operand(const DistMatrix& p, const DeviceDistMatrix* held, cudaStream_t stream) {
  const tessera::cuda::DeviceCsr<double> ext =
      held ? tagged_extended_block(*held, stream) : tessera::cuda::upload(extended_block(tagged(p)), stream);
  return TiledOperand(ext, TiledOperand::Orientation::transposed, stream);
}

/// The product's C: where it was handed over (`c`), else the symbolic phase's.
const DistMatrix& result_of(const DistPtap& symbolic, const DistMatrix* c) { return c ? *c : symbolic.result(); }

/// dst[0, n) = src[0, n), device to device, on `stream`.
void copy_indices(std::int64_t* dst, const std::int64_t* src, std::int64_t n, cudaStream_t stream) {
  if (n > 0)
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(n) * sizeof(std::int64_t),
                                       cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

DeviceDistPtap::DeviceDistPtap(DeviceContext& ctx, const DistPtap& symbolic, const DistMatrix& a, const DistMatrix& p,
                               HeldOperand* held_a, const DeviceDistMatrix* held_p, const DistMatrix* c)
    : ctx_(ctx),
      ap_(ctx, symbolic.ap_product(), a, p, held_a),
      a_nnz_(a.nnz()),
      p_nnz_(p.nnz()),
      c_local_nnz_(result_of(symbolic, c).local.nnz()),
      c_nonlocal_nnz_(result_of(symbolic, c).nonlocal.nnz()),
      p_transposed_(p_transposed_operand(p, held_p, ctx.compute())),
      outer_({}, ctx.compute()),
      back_(symbolic.return_pattern()) {
  const cudaStream_t s = ctx.compute();
  const std::int64_t owned_partial = symbolic.owned_partial_entries();
  const std::int64_t t_nnz = owned_partial + back_.send_count();
  multiplies_ = t_nnz > 0;
  tessera::cuda::DeviceBuffer<std::int64_t> tile_of;  // T's CSR order (the host's contributions) -> tile value
  std::optional<trace::Step> step(std::in_place, "ptap_plan.outer_product");
  if (multiplies_) {
    outer_.symbolic(p_transposed_.tiles, ap_.product(), t_);
    TESSERA_ASSERT(t_.nnz == t_nnz, "the tile outer product found ", t_.nnz, " entries, the host symbolic phase ", t_nnz);
    tile_of = tessera::cuda::csr_positions(t_, s);
  }
  // T's entries in rows owned elsewhere follow the owned ones; they are the ones sent.
  send_map_.allocate(static_cast<std::size_t>(back_.send_count()), s);
  copy_indices(send_map_.data(), tile_of.data() + owned_partial, back_.send_count(), s);
  send_.allocate(static_cast<std::size_t>(back_.send_count()), s);
  recv_.allocate(static_cast<std::size_t>(back_.recv_count()), s);

  step.emplace("ptap_plan.summation_order");
  const std::int64_t contributions = owned_partial + back_.recv_count();
  std::vector<std::int64_t> positions = symbolic.contribution_positions(result_of(symbolic, c));
  TESSERA_ASSERT(static_cast<std::int64_t>(positions.size()) == contributions,
                 "PtAP contributions disagree with the return pattern");
  // Contribution i reads [T's tile values | received values]: T's i-th entry when i is owned,
  // else the (i - owned_partial)-th received value.
  tessera::cuda::DeviceBuffer<std::int64_t> source(static_cast<std::size_t>(contributions), s), target;
  copy_indices(source.data(), tile_of.data(), owned_partial, s);
  std::vector<std::int64_t> received(static_cast<std::size_t>(back_.recv_count()));
  std::iota(received.begin(), received.end(), t_nnz);
  if (!received.empty())
    tessera::cuda::copy_to_device(source.data() + owned_partial, received.data(),
                                  received.size() * sizeof(std::int64_t), s);
  target.upload(positions, s);
  plan_sum_in_index_order(target, source, c_local_nnz_ + c_nonlocal_nnz_, seg_ptr_, order_, s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
}

void DeviceDistPtap::recompute(DeviceDistMatrix& a, DeviceDistMatrix& p, DeviceDistMatrix& c) {
  require_planned_counts(ctx_.comm(), "DeviceDistPtap::recompute", "A and P", a, p, c,
                         PlannedCounts{a_nnz_, p_nnz_, c_local_nnz_, c_nonlocal_nnz_});
  const cudaStream_t compute = ctx_.compute(), exchange = ctx_.exchange();
  ap_.recompute(matrix_values(a), matrix_values(p));
  p_transposed_.refresh(matrix_values(p), compute);
  if (multiplies_) outer_.numeric(p_transposed_.tiles, ap_.product(), t_);
  const bool exchanges = back_.send_count() > 0 || back_.recv_count() > 0;
  if (exchanges) {
    ctx_.exchange_after_compute();  // T is written on compute
    gather_values(ValueSources().add(t_.values.data(), t_.nnz), send_map_,
                  ValueTargets{send_.data(), back_.send_count(), nullptr}, exchange);
    ctx_.transport().start_exchange(back_, sizeof(double), send_.data(), recv_.data());
    ctx_.transport().finish_exchange();
    ctx_.compute_after_exchange();
  }
  segmented_sum(ValueSources().add(t_.values.data(), t_.nnz).add(recv_.data(), back_.recv_count()), seg_ptr_, order_,
                ValueTargets{c.local.values.data(), c.local.nnz, c.nonlocal.values.data()}, compute);
}

}  // namespace tessera::dist::gpu
