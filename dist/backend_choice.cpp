#include "dist/backend_choice.hpp"

#include "dist/communicator.hpp"
#include "local/core/error.hpp"

#if TESSERA_HAVE_CUDA
#include "dist/cuda/device_local_spgemm.hpp"
#include "dist/rank_device.hpp"
#endif

namespace tessera::dist {

Backend resolve_distributed_backend(const Communicator& comm, const std::string& name) {
  TESSERA_REQUIRE_INPUT(name == "auto" || name == "host" || name == "gpu", "unknown backend '", name,
                        "': expected auto, host or gpu");
  if (name == "host") return Backend::host;
#if TESSERA_HAVE_CUDA
  // Every rank must agree before the collective device check: one rank without a device
  // sends the whole job to the host under auto.
  const bool everyone_has_one = comm.allreduce(std::int64_t(gpu_available()), ReduceOp::min) == 1;
  if (!everyone_has_one) {
    TESSERA_REQUIRE_INPUT(name == "auto", "--backend gpu: not every rank sees a CUDA device (",
                          gpu_available() ? "this rank has one" : "this rank has none", "); use --backend host");
    return Backend::host;
  }
  // Ranks sharing a GPU run it through the host-staged transport: a choice the user makes
  // (--backend gpu), never auto's, which wants one GPU per rank (device_transport.hpp).
  const RankDevice device = rank_device(comm);  // collective: InputError on every rank for a missing GPU
  return device.shared && name == "auto" ? Backend::host : Backend::gpu;
#else
  (void)comm;
  return resolve_backend(name);  // gpu: the same InputError on every rank (no CUDA in this build)
#endif
}

LocalSpgemm local_spgemm_for(const Communicator& comm, Backend backend, const std::string& spgemm,
                             std::shared_ptr<cuda::OffloadStats> stats) {
  TESSERA_REQUIRE_INPUT(spgemm == "tile" || spgemm == "cusparse" || spgemm == "hash" || spgemm == "auto",
                        "unknown SpGEMM '", spgemm, "': expected tile, cusparse, hash or auto");
  if (backend == Backend::host) {
    TESSERA_REQUIRE_INPUT(spgemm != "cusparse" && spgemm != "hash", "SpGEMM '", spgemm,
                          "' selects the GPU products: it needs the gpu backend");
    return host_local_spgemm;
  }
#if TESSERA_HAVE_CUDA
  use_rank_device(comm);
  return device_local_spgemm(cuda::parse_offload_spgemm(spgemm), std::move(stats));
#else
  (void)comm;
  (void)stats;
  throw InputError("the gpu backend needs a build with CUDA");
#endif
}

}  // namespace tessera::dist
