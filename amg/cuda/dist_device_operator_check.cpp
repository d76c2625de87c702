// Host code only: the device check of a level's operator, worded on the host, and its inverse
// diagonal.
#include "amg/cuda/dist_device_operator_check.hpp"

#include <memory>

#include "amg/cuda/device_operator_slot.hpp"
#include "amg/cuda/device_row_kernels.hpp"
#include "dist/collective_call.hpp"
#include "local/core/error.hpp"

namespace tessera::amg::gpu {

void dist_device_check_operator(const dist::Communicator& comm, const dist::DistMatrix& a, const std::string& what,
                                DeviceOperatorSlot& device_a, cudaStream_t stream) {
  // Partitions are the same on every rank: a non-square operator is refused alike, before any
  // upload.
  if (a.row_partition != a.col_partition) return check_dist_operator(comm, a, what);
  const std::int64_t unfit = dist::call_collectively(comm, "distributed device check of " + what, [&] {
    const dist::gpu::DeviceDistMatrix& da = device_operator(device_a, a, stream);
    return device_first_unfit_row(da.local, da.nonlocal, stream);
  });
  if (comm.allreduce(unfit, dist::ReduceOp::max) < 0) return;
  // Some rank holds an unfit row: the host check words it (the lowest failing rank's first row)
  // and throws on every rank. That it finds none would be a device kernel that disagrees.
  check_dist_operator(comm, a, what);
  TESSERA_ASSERT(false, "the device check of ", what, " found unfit row ", unfit, " on rank ", comm.rank(),
                 " (or another rank did) where the host check found none");
}

DistOperatorCheck device_operator_check(cudaStream_t stream) {
  return [stream](const dist::Communicator& comm, const dist::DistMatrix& a, const std::string& what,
                  DeviceOperatorSlot& device_a) { dist_device_check_operator(comm, a, what, device_a, stream); };
}

std::vector<double> dist_device_inverse_diagonal(const dist::Communicator& comm, const dist::DistMatrix& a,
                                                 DeviceOperatorSlot& device_a, cudaStream_t stream) {
  if (a.row_partition != a.col_partition) return owned_inverse_diagonal(a);  // alike on every rank
  // The owned block's row i has its diagonal in column i; the kernel divides as the host does.
  // The slot keeps the device's for the phases that read it there.
  return dist::call_collectively(comm, "distributed device inverse diagonal", [&] {
    const dist::gpu::DeviceDistMatrix& da = device_operator(device_a, a, stream);
    auto inverse = std::make_shared<const tessera::cuda::DeviceBuffer<double>>(
        device_inverse_diagonal(da.local, "the level's operator", stream));
    device_a.inverse_diagonal = inverse;
    return inverse->download(stream);
  });
}

DistInverseDiagonal device_inverse_diagonal_step(cudaStream_t stream) {
  return [stream](const dist::Communicator& comm, const dist::DistMatrix& a, DeviceOperatorSlot& device_a) {
    return dist_device_inverse_diagonal(comm, a, device_a, stream);
  };
}

}  // namespace tessera::amg::gpu
