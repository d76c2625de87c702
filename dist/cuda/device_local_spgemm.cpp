#include "dist/cuda/device_local_spgemm.hpp"

#include <cuda_runtime_api.h>

#include "dist/rank_device.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist {

LocalSpgemm device_local_spgemm(cuda::OffloadSpgemm which, std::shared_ptr<cuda::OffloadStats> stats) {
  if (!stats) stats = std::make_shared<cuda::OffloadStats>();
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  const auto multiply = [which, stats, device](const Csr<double>& a, const Csr<double>& b) {
    TESSERA_CUDA_CHECK(cudaSetDevice(device));
    return cuda::offload_spgemm(a, b, which, *stats);
  };
  const auto chain = [which, stats, device](const Csr<double>& l, const Csr<double>& a, const Csr<double>& b) {
    TESSERA_CUDA_CHECK(cudaSetDevice(device));
    ChainedProduct c;
    c.product = cuda::offload_chain(l, a, b, which, *stats, &c.inner_entries);
    return c;
  };
  return LocalSpgemm(multiply, chain);
}

int use_rank_device(const Communicator& comm) {
  const int device = rank_device(comm).index;
  TESSERA_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

}  // namespace tessera::dist
