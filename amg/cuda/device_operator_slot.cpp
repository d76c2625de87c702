// Host code only: makes or refreshes a level's DeviceDistMatrix.
#include "amg/cuda/device_operator_slot.hpp"

#include <utility>

#include "dist/cuda/device_held_operand.hpp"
#include "dist/cuda/device_summed_blocks.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

/// The copy of `a` from the outer product T left in the slot (its maker synchronised it). Where
/// C is T, T is the local block (its rows the host block's first, any later ones empty; its
/// columns the first owned ones), given the host block's shape, and only the non-local block is
/// uploaded; elsewhere both blocks are made from T's rows and the host's rows that receive.
std::shared_ptr<dist::gpu::DeviceDistMatrix> copy_from_product(DeviceOperatorSlot& slot, const dist::DistMatrix& a,
                                                               cudaStream_t stream) {
  const std::shared_ptr<dist::KeptOuterProduct> kept = std::exchange(slot.outer_product, nullptr);
  auto* t = dynamic_cast<dist::gpu::DeviceHeldProduct*>(kept->t.get());
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_ASSERT(t && t->device == device, "a level's outer product on the device was not made on its GPU");
  if (!kept->t_is_c) {
    auto [local, nonlocal] = dist::gpu::summed_blocks(t->product, *kept, a, stream);
    return std::make_shared<dist::gpu::DeviceDistMatrix>(a, std::move(local), std::move(nonlocal), stream);
  }
  tessera::cuda::DeviceCsr<double> local = std::move(t->product);
  TESSERA_ASSERT(local.rows >= a.local.rows && local.cols <= a.local.cols && local.nnz == a.local.nnz(),
                 "a product's ", local.rows, "x", local.cols, " block with ", local.nnz,
                 " entries for a local block of ", a.local.rows, "x", a.local.cols, " with ", a.local.nnz());
  // Made on the default stream and complete (the product synchronised for its download); the
  // copy's work runs on `stream`, so its frees must follow that work there.
  tessera::cuda::release_on(local, stream);
  local.rows = a.local.rows;
  local.cols = a.local.cols;
  if (local.row_ptr.size() > static_cast<std::size_t>(local.rows + 1)) {  // later rows: cut their offsets
    tessera::cuda::DeviceBuffer<std::int64_t> offsets(static_cast<std::size_t>(local.rows + 1), stream);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(offsets.data(), local.row_ptr.data(), offsets.bytes(), cudaMemcpyDeviceToDevice,
                                       stream));
    local.row_ptr = std::move(offsets);
  }
  return std::make_shared<dist::gpu::DeviceDistMatrix>(a, std::move(local), tessera::cuda::upload(a.nonlocal, stream),
                                                       stream);
}

}  // namespace

dist::gpu::DeviceDistMatrix& device_operator(DeviceOperatorSlot& slot, const dist::DistMatrix& a, cudaStream_t stream) {
  if (!slot.matrix) {
    // Either way the copy is complete at return (the constructor synchronises).
    slot.matrix = slot.outer_product ? copy_from_product(slot, a, stream)
                                     : std::make_shared<dist::gpu::DeviceDistMatrix>(a, stream);
    slot.stale = false;
    return *slot.matrix;
  }
  // A slot belongs to one level: another matrix here would be a hierarchy that moved its levels.
  TESSERA_ASSERT(slot.matrix->host == &a, "a level's device copy of A was made from another matrix");
  if (slot.stale) {
    slot.matrix->refresh_values(stream);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));  // as the constructor: usable from any stream
    slot.stale = false;
  }
  return *slot.matrix;
}

std::shared_ptr<dist::gpu::DeviceDistMatrix> current_copy(const DeviceOperatorSlot& slot, const dist::DistMatrix& a) {
  if (!slot.matrix || slot.stale || slot.matrix->host != &a) return nullptr;
  return slot.matrix;
}

std::shared_ptr<const tessera::cuda::DeviceBuffer<double>> current_inverse_diagonal(const DeviceOperatorSlot& slot,
                                                                                      const dist::DistMatrix& a) {
  if (!current_copy(slot, a) || !slot.inverse_diagonal) return nullptr;
  TESSERA_ASSERT(slot.inverse_diagonal->size() == static_cast<std::size_t>(a.owned_rows()),
                 "a level's device 1 / a_ii has ", slot.inverse_diagonal->size(), " entries for ", a.owned_rows(),
                 " rows");
  return slot.inverse_diagonal;
}

void fill_inverse_diagonal(const DeviceOperatorSlot& slot, const dist::DistMatrix& a, const std::vector<double>& host,
                           tessera::cuda::DeviceBuffer<double>& to, cudaStream_t stream) {
  const auto kept = current_inverse_diagonal(slot, a);
  if (kept && kept->size() == to.size())
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(to.data(), kept->data(), to.bytes(), cudaMemcpyDeviceToDevice, stream));
  else
    to.upload(host, stream);
}

}  // namespace tessera::amg::gpu
