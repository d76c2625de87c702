// tessera-spmv: y = A*x on a generated or Matrix Market matrix.
//   tessera-spmv --gen poisson3d:256 --compare cusparse --check --json out.json
//   tessera-spmv --A a.mtx.gz --precision fp32 --backend host
//   mpirun -np 4 tessera-spmv --gen poisson3d27:64 --partition nnz --backend host --check
// On the GPU it times Tessera's CSR kernel (CSR-Stream, vector or nnz-split, chosen from the
// row statistics, or forced with --algorithm stream|vector|nnz-split) and the tile kernel,
// optionally cuSPARSE, against the measured copy bandwidth and the traffic model. On the
// host it times the reference kernel. Several ranks (or --distributed): dist::spmv, on the
// ranks' GPUs (NCCL halos) or the host, see spmv_distributed.hpp. --algorithm other than auto
// needs one process on the GPU. Exit codes: 0 ok, 1 check failed, 2 bad input or device error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "drivers/common/driver_main.hpp"
#include "drivers/common/matrix_source.hpp"
#include "drivers/common/overflow_check.hpp"
#include "drivers/product_options.hpp"
#include "drivers/spmv_distributed.hpp"
#include "dist/communicator.hpp"
#include "local/core/backend.hpp"
#include "local/core/error.hpp"
#include "local/core/precision.hpp"
#include "local/formats/convert.hpp"
#include "local/perf/spmv_model.hpp"
#include "local/reference/kernels.hpp"
#if defined(TESSERA_HAVE_CUDA)
#include "drivers/spmv_gpu_benchmark.hpp"
#endif

namespace tessera::driver {
namespace {

using Options = ProductOptions;

// Host backend: the reference kernel, timed with a steady clock; --check compares it with
// the SpMM reference at k = 1 (a separate code path).
template <class T>
nlohmann::json run_host(const Csr<double>& a64, const Options& opt, int& status) {
  const Csr<T> a = convert_values<T>(a64, "A");
  std::vector<double> x(static_cast<std::size_t>(a.cols)), y(static_cast<std::size_t>(a.rows));
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& v : x) v = static_cast<double>(static_cast<T>(dist(rng)));
  std::vector<double> seconds;
  for (int r = 0; r < opt.warmup + opt.reps; ++r) {
    Stopwatch clock;
    ref::spmv(1.0, a, x, 0.0, y);
    if (r >= opt.warmup) seconds.push_back(clock.seconds());
  }
  // The reference sums in double: with --precision fp32 the limit is fp32's range all the same.
  throw_if_overflowed(overflowed_entry("y = A x", PrecisionOf<T>::value, y, 1, Layout::row_major));
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  const double s = seconds[seconds.size() / 2];
  perf::SpmvModelInput mi;
  mi.value_bytes = sizeof(T);
  const perf::Traffic model = perf::model_traffic(a, mi);
  std::printf("rows %lld, cols %lld, nnz %lld\nreference spmv: %.4f ms, %.2f GB/s (model bytes %.3f GB)\n",
              (long long)a.rows, (long long)a.cols, (long long)a.nnz(), 1e3 * s, 1e-9 * model.minimal_bytes() / s,
              1e-9 * model.minimal_bytes());
  nlohmann::json out = {{"rows", a.rows}, {"nnz", a.nnz()}, {"reference_s", s}, {"bytes", model.minimal_bytes()}};
  if (opt.check) {
    DenseMatrix xm(a.cols, 1, Layout::col_major), ym(a.rows, 1, Layout::col_major);
    xm.data = x;
    ref::spmm(1.0, a, xm, 0.0, ym);
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      worst = std::max(worst, std::abs(y[i] - ym.data[i]));
      scale = std::max(scale, std::abs(ym.data[i]));
    }
    const double rel = scale > 0 ? worst / scale : worst;
    const bool pass = report_check("reference spmv vs spmm(k=1)", rel, 1e-12);
    out["check"] = {{"max_relative_error", rel}, {"pass", pass}};
    if (!pass) status = kExitCheckFailed;
  }
  return out;
}

// Several ranks, or --distributed: the distributed product (spmv_distributed.hpp).
int run_distributed(const dist::Communicator& comm, const Options& opt) {
  const DistributedSpmvOptions d = distributed_options(opt);
  nlohmann::json out = {{"driver", "tessera-spmv"}, {"matrix", opt.a.describe()}, {"precision", opt.precision}};
  const int status = run_distributed_spmv(comm, d, out);
  if (comm.rank() == 0 && !opt.json.empty()) write_json(opt.json, out);
  return status;
}

int run(int argc, char** argv) {
  Options opt;
  CLI::App app{"Tessera SpMV: y = A*x on one GPU or the host reference; several ranks or --distributed: distributed"};
  add_product_options(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  dist::Communicator comm;
  // --algorithm picks the single-GPU CSR kernel; the other runs would silently ignore it.
  TESSERA_REQUIRE_INPUT(opt.algorithm == "auto" || (comm.size() == 1 && !opt.distributed), "--algorithm ",
                        opt.algorithm, " selects the single-GPU SpMV kernel: not with several ranks or --distributed");
  if (comm.size() > 1 || opt.distributed) return run_distributed(comm, opt);
  refuse_distributed_only_options(opt);
  Stopwatch load_clock;
  const Csr<double> a = load_matrix(opt.a, "A");
  const Precision precision = parse_precision(opt.precision);
  const Backend backend = resolve_backend(opt.backend);
  std::printf("tessera-spmv: %s, precision %s, backend %s, load %.2f s\n", opt.a.describe().c_str(),
              opt.precision.c_str(), to_string(backend), load_clock.seconds());
  nlohmann::json out = {{"driver", "tessera-spmv"}, {"matrix", opt.a.describe()}, {"precision", opt.precision},
                        {"backend", to_string(backend)}};
  int status = 0;
  if (backend == Backend::gpu) {
#if defined(TESSERA_HAVE_CUDA)
    GpuBenchOptions g;
    fill_gpu_bench_options(opt, precision, g);
    out["gpu"] = run_gpu_spmv_benchmark(a, g);
    if (!out["gpu"].value("check_pass", true)) status = kExitCheckFailed;
#endif
  } else {
    TESSERA_REQUIRE_INPUT(opt.compare.empty(), "--compare cusparse needs the GPU backend");
    TESSERA_REQUIRE_INPUT(opt.algorithm == "auto", "--algorithm ", opt.algorithm, " needs the GPU backend");
    out["host"] = precision == Precision::fp64 ? run_host<double>(a, opt, status) : run_host<float>(a, opt, status);
  }
  if (!opt.json.empty()) write_json(opt.json, out);
  return status;
}

}  // namespace
}  // namespace tessera::driver

int main(int argc, char** argv) { return tessera::driver::run_driver(argc, argv, "tessera-spmv", tessera::driver::run); }
