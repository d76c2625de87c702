// Host code only: makes or refreshes a level's DeviceDistMatrix.
#include "amg/cuda/device_operator_slot.hpp"

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {

dist::gpu::DeviceDistMatrix& device_operator(DeviceOperatorSlot& slot, const dist::DistMatrix& a, cudaStream_t stream) {
  if (!slot.matrix) {
    slot.matrix = std::make_shared<dist::gpu::DeviceDistMatrix>(a, stream);  // synchronises
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
