#include "drivers/amg_single_gpu.hpp"

#if TESSERA_HAVE_CUDA
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "amg/cuda/device_cycle.hpp"
#include "amg/cuda/device_fgmres.hpp"
#include "amg/cuda/device_hierarchy.hpp"
#include "amg/cuda/device_level_ops.hpp"
#include "amg/cuda/device_pcg.hpp"
#include "amg/hierarchy.hpp"
#include "drivers/common/driver_main.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/owned_stream.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::driver {
namespace {

/// CG (or FGMRES) with `m` on the device from the host vectors b and x (x comes back), p.solves
/// times from the same initial guess: the first solve's result and time go to run.res and
/// run.solve_s, the others' to run.repeated_*. Times the solves alone, after the uploads.
void device_solves(amg::gpu::DeviceAmgPreconditioner& m, const cuda::DeviceCsr<double>& da, const SingleGpuProblem& p,
                   amg::Vector& x, const amg::KrylovOptions& ko, cudaStream_t stream, AmgRun& run) {
  m.set_cuda_graph(p.cuda_graph);
  const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, {}, stream);
  cuda::DeviceBuffer<double> db, dx;
  db.upload(p.b, stream);
  const amg::gpu::DevicePreconditioner apply = [&](const double* r, double* z) { m.apply(r, z); };
  for (int solve = 0; solve < p.solves; ++solve) {
    dx.upload(x, stream);  // the initial guess, again
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    Stopwatch solve_clock;
    amg::SolveResult res = p.use_cg ? amg::gpu::device_pcg(da, plan, db.data(), dx.data(), apply, ko, stream)
                                    : amg::gpu::device_fgmres(da, plan, db.data(), dx.data(), apply, ko, stream);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const double seconds = solve_clock.seconds();
    if (solve == 0) {
      run.res = std::move(res);
      run.solve_s = seconds;
    } else {
      run.repeated_solve_s.push_back(seconds);
      run.repeated_iterations.push_back(res.iterations);
    }
  }
  x = dx.download(stream);
  std::printf("cycle as a CUDA graph: %s\n", m.cuda_graph_state().c_str());
  run.extra["cuda_graph"] = m.cuda_graph_state();
  run.extra["cuda_graph_captures"] = m.cuda_graph_captures();
}

void print_device_products(const amg::gpu::DeviceSetupStats& s, const std::string& spgemm) {
  std::printf("device setup products (%s SpGEMM, %d products, %d on tiles): %.4f s = product %.4f + convert %.4f + transfers %.4f "
              "(up %.4f, down %.4f)\n",
              spgemm.c_str(), s.products, s.tile_products, s.total(), s.product, s.convert, s.transfers(), s.upload, s.download);
}

nlohmann::json device_products_json(const amg::gpu::DeviceSetupStats& s, const std::string& spgemm) {
  return {{"spgemm", spgemm}, {"products", s.products}, {"tile_products", s.tile_products}, {"product_seconds", s.product}, {"convert_seconds", s.convert},
          {"upload_seconds", s.upload}, {"download_seconds", s.download}};
}

/// Re-runs the device setup on the same values; fills run.resetup_s and run.resetup_phases.
void time_device_resetup(amg::gpu::DeviceHierarchy& h, const cuda::DeviceCsr<double>& da, AmgRun& run) {
  Stopwatch clock;
  amg::gpu::device_resetup(h, da.values.data());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  run.resetup_s = clock.seconds();
  const amg::HierarchyStats stats = amg::gpu::statistics(h);
  std::printf("device re-setup (%s): %.4f s, phases summed %.4f s\n",
              h.resetup_was_full_setup ? "no plans kept: full setup" : "same pattern, values only", run.resetup_s,
              stats.times.total());
  run.resetup_phases = stats.times;
}

}  // namespace

AmgRun run_device_setup(const SingleGpuProblem& p, amg::Vector& x, const amg::KrylovOptions& ko) {
  AmgRun run;
  // A stream of the driver's own, as PCTESSERA has (the cycle then runs on it, no second stream);
  // declared first: everything below frees on it.
  const cuda::OwnedStream stream;
  Stopwatch upload_clock;
  const cuda::DeviceCsr<double> da = cuda::upload(p.a, stream.get());
  // The hierarchy's own matrix where it is not A (--pmat); its upload is timed with A's.
  const std::optional<cuda::DeviceCsr<double>> dpmat =
      &p.pmat == &p.a ? std::nullopt : std::optional<cuda::DeviceCsr<double>>(cuda::upload(p.pmat, stream.get()));
  const cuda::DeviceCsr<double>& setup_matrix = dpmat ? *dpmat : da;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const double a_upload_s = upload_clock.seconds();
  // Plans for a fast re-setup cost device memory (several times the hierarchy's): keep them
  // only when a re-setup is asked for.
  amg::AmgOptions options = p.options;
  options.keep_setup_plans = p.resetup;
  Stopwatch setup_clock;
  amg::gpu::DeviceHierarchy h =
      amg::gpu::device_setup(setup_matrix, p.nns, options, cuda::parse_offload_spgemm(p.spgemm), stream.get());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  run.setup_s = setup_clock.seconds();
  run.stats = amg::gpu::statistics(h);
  amg::print(stdout, run.stats);
  const double device_mib = double(amg::gpu::device_bytes(h)) / (1 << 20);
  std::printf(
      "device setup (%s SpGEMM): %.4f s, hierarchy %.1f MiB on the device (plans kept for re-setup: %s); A uploaded "
      "in %.4f s\n",
      p.spgemm.c_str(), run.setup_s, device_mib, options.keep_setup_plans ? "yes" : "no", a_upload_s);
  const std::vector<std::string> engines = amg::gpu::product_engines(h);
  for (std::size_t l = 0; l < engines.size(); ++l) std::printf("level %zu products: %s\n", l, engines[l].c_str());
  run.extra = {{"setup_location", "device"}, {"spgemm", p.spgemm}, {"product_engines", engines},
               {"a_upload_seconds", a_upload_s},
               {"device_hierarchy_mib", device_mib}, {"setup_plans_kept", options.keep_setup_plans}};
  if (p.resetup) time_device_resetup(h, setup_matrix, run);
  amg::gpu::DeviceAmgPreconditioner m(h, stream.get());
  device_solves(m, da, p, x, ko, stream.get(), run);
  return run;
}

AmgRun run_host_setup_on_gpu(const SingleGpuProblem& p, amg::Vector& x, const amg::KrylovOptions& ko) {
  AmgRun run;
  const auto product_stats = std::make_shared<amg::gpu::DeviceSetupStats>();
  const amg::LevelOps ops = amg::gpu::device_setup_ops(amg::gpu::parse_setup_spgemm(p.spgemm), product_stats);
  Stopwatch setup_clock;
  amg::Hierarchy h = amg::setup(p.pmat, p.nns, p.options, ops);
  run.setup_s = setup_clock.seconds();
  run.stats = amg::statistics(h);
  amg::print(stdout, run.stats);
  print_device_products(*product_stats, p.spgemm);
  run.extra = {{"setup_location", "host"}, {"device_setup", device_products_json(*product_stats, p.spgemm)}};
  if (p.resetup) {
    *product_stats = {};
    Stopwatch clock;
    amg::resetup(h, p.pmat, ops);
    run.resetup_s = clock.seconds();
    std::printf("re-setup (same pattern, values only): %.4f s, phases summed %.4f s\n", run.resetup_s,
                amg::statistics(h).times.total());
    print_device_products(*product_stats, p.spgemm);
    run.extra["device_resetup"] = device_products_json(*product_stats, p.spgemm);
  }
  const cuda::OwnedStream stream;  // declared before what frees on it
  Stopwatch upload_clock;
  amg::gpu::DeviceAmgPreconditioner m(h, stream.get());
  const cuda::DeviceCsr<double> da = cuda::upload(p.a, stream.get());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const double upload_s = upload_clock.seconds();
  std::printf("device hierarchy: %.1f MiB uploaded in %.4f s\n", double(m.device_bytes()) / (1 << 20), upload_s);
  run.extra["hierarchy_upload_seconds"] = upload_s;
  device_solves(m, da, p, x, ko, stream.get(), run);
  return run;
}

}  // namespace tessera::driver
#endif
