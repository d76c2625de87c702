#include "drivers/amg_distributed_backend.hpp"

#include <cstdio>
#include <utility>

#include "amg/dist/dist_smoothing.hpp"
#include "amg/dist/dist_tentative.hpp"
#include "local/core/error.hpp"

#if TESSERA_HAVE_CUDA
#include "amg/cuda/device_setup_backend.hpp"
#include "amg/cuda/dist_device_smoothing.hpp"
#include "amg/cuda/dist_device_transfer.hpp"
#endif

namespace tessera::driver::dist_amg {
namespace {

#if TESSERA_HAVE_CUDA
/// What the device merge gives besides P (with the merge on the GPUs).
amg::gpu::MergeOutputs merge_outputs(const SetupPlacement& p) {
  using amg::gpu::MergeOutputs;
  if (p.solve_operands) return MergeOutputs::kept_for_solve;
  if (p.galerkin_operands) return MergeOutputs::kept_on_device;
  return p.transpose_p ? MergeOutputs::p_transposed : MergeOutputs::p_only;
}
#endif

}  // namespace

SetupPlacement setup_placement(const DistributedAmgOptions& o) {
  TESSERA_REQUIRE_INPUT(o.backend == Backend::gpu || o.setup != "device",
                        "--setup device runs the graph phases on the GPUs: it needs --backend gpu");
  SetupPlacement p;
  p.graph_phases = o.backend == Backend::gpu && o.setup != "host";
  TESSERA_REQUIRE_INPUT(o.resetup_transfer != "device" || p.graph_phases,
                        "--resetup-transfer device runs from the levels' device copies of A: it needs --backend gpu "
                        "with the graph phases on the GPUs (not --setup host)");
  TESSERA_REQUIRE_INPUT(o.tentative != "device" || p.graph_phases,
                        "--tentative device is a step of the GPU setup: it needs --backend gpu with the graph phases "
                        "on the GPUs (not --setup host)");
  TESSERA_REQUIRE_INPUT(o.merge != "device" || p.graph_phases,
                        "--merge device is a step of the GPU setup: it needs --backend gpu with the graph phases on "
                        "the GPUs (not --setup host)");
  p.tentative = p.graph_phases && o.tentative != "host";
  p.merge = p.graph_phases && o.merge != "host";
  TESSERA_REQUIRE_INPUT(o.transpose_p != "device" || p.merge,
                        "--transpose-p device transposes P where the device merge made it: it needs --backend gpu "
                        "with the graph phases and the merge on the GPUs");
  p.transpose_p = p.merge && o.transpose_p != "host";
  TESSERA_REQUIRE_INPUT(o.galerkin_operands != "device" || p.transpose_p,
                        "--galerkin-operands device reads P and P^T where the device merge made them: it needs "
                        "--backend gpu with the graph phases, the merge and P^T on the GPUs");
  p.galerkin_operands = p.transpose_p && o.galerkin_operands != "host";
  TESSERA_REQUIRE_INPUT(o.solve_operands != "device" || p.galerkin_operands,
                        "--solve-operands device shares the P and R the setup kept on the GPUs: it needs --backend "
                        "gpu with the graph phases, the merge, P^T and the Galerkin operands on the GPUs");
  p.solve_operands = p.galerkin_operands && o.solve_operands != "host";
  return p;
}

// With the graph phases on the GPUs, the products read A from the levels' device copies the
// strength phase makes. (--setup host keeps the products' host copies of A.)
amg::DistSetupBackend setup_backend(Devices& devices, const DistributedAmgOptions& o, const SetupPlacement& placement,
                                    dist::LocalSpgemm products, std::shared_ptr<cuda::OffloadStats> stats) {
#if TESSERA_HAVE_CUDA
  if (placement.graph_phases) {
    const cuda::OffloadSpgemm spgemm = cuda::parse_offload_spgemm(o.spgemm);
    amg::DistSetupBackend backend = amg::gpu::device_setup_backend(*devices.ctx, spgemm, stats);
    if (o.resetup_transfer == "device") backend.transfer_on_device = amg::gpu::dist_device_transfer(*devices.ctx);
    if (!placement.tentative) backend.tentative = amg::dist_tentative_prolongator;  // the ablations
    if (!placement.merge) backend.smoothing = amg::dist_smoothed_prolongator;
    if (placement.merge && !placement.solve_operands)
      backend.smoothing = amg::gpu::device_smoothing(devices.ctx->compute(), spgemm, stats, merge_outputs(placement));
    return backend;
  }
#else
  (void)devices;
  (void)stats;
  TESSERA_REQUIRE_INPUT(!placement.graph_phases, "--backend gpu: this build has no CUDA backend");
#endif
  amg::DistSetupBackend backend;  // the host's steps, with `products` where they run
  backend.products = std::move(products);
  if (o.backend == Backend::gpu) backend.host_coarse_factor = amg::CoarseFactor::on_first_use;  // as the GPUs' steps
  return backend;
}

void add_placement_keys(nlohmann::json& out, const SetupPlacement& p) {
  const auto where = [](bool on_gpus) { return on_gpus ? "device" : "host"; };
  out["graph_phases"] = where(p.graph_phases);
  out["eigen_estimates"] = where(p.graph_phases);
  out["tentative"] = where(p.tentative);
  out["merge"] = where(p.merge);
  out["transpose_p"] = where(p.transpose_p);
  out["galerkin_operands"] = where(p.galerkin_operands);
  out["solve_operands"] = where(p.solve_operands);
}

void print_placement(const DistributedAmgOptions& o, const SetupPlacement& p, const nlohmann::json& products_json) {
  const auto where = [](bool on_gpus) { return on_gpus ? "GPUs" : "host"; };
  std::printf("setup products on the GPUs (%s, slowest rank): %s; graph phases and eigenvalue estimates on the %s, "
              "tentative prolongator's QR on the %s, P's first merge on the %s, the Galerkin product's P^T on the "
              "%s, the solve's P and R %s\n",
              o.spgemm.c_str(), products_json.dump().c_str(), where(p.graph_phases), where(p.tentative),
              where(p.merge), where(p.transpose_p), p.solve_operands ? "kept from the setup" : "uploaded after it");
}

std::string where_tessera_ran(const DistributedAmgOptions& o, const SetupPlacement& p, int ranks) {
  if (o.backend != Backend::gpu) return detail::concat("host, ", ranks, " MPI rank(s)");
  return detail::concat(p.graph_phases ? "setup on the GPUs (symbolic steps on the host)"
                                       : "setup on the host (its products on the GPUs)",
                        ", solve on ", ranks, " GPU(s), one per MPI rank");
}

}  // namespace tessera::driver::dist_amg
