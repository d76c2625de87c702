// Host code only (no kernels): the products are local/cuda's offload.
#include "amg/cuda/device_level_ops.hpp"

namespace tessera::amg::gpu {

LevelOps device_setup_ops(SetupSpgemm which, std::shared_ptr<DeviceSetupStats> stats) {
  if (!stats) stats = std::make_shared<DeviceSetupStats>();
  LevelOps ops = host_reference_ops();
  ops.multiply = [which, stats](const Csr<double>& a, const Csr<double>& b) {
    return tessera::cuda::offload_spgemm(a, b, which, *stats);
  };
  ops.galerkin = [which, stats](const Csr<double>& a, const Csr<double>& p) {
    return tessera::cuda::offload_galerkin(a, p, which, *stats);
  };
  return ops;
}

}  // namespace tessera::amg::gpu
