// tessera-spmm: Y = A*X, X dense with k columns (1..128), row- or column-major.
//   tessera-spmm --gen poisson3d:128 --k 32 --layout row --compare cusparse --check
//   mpirun -np 4 tessera-spmm --gen elasticity3d:32 --k 8 --backend host --check
// On the GPU it times Tessera's SpMM and (with --compare cusparse) every cuSPARSE SpMM
// algorithm the layout accepts, keeping the fastest as the baseline. On the host it times
// the reference. Several ranks (or --distributed): dist::spmm on the ranks' GPUs (NCCL halos)
// or the host, X stored row-major, see spmv_distributed.hpp. Exit codes: 0 ok, 1 check failed, 2 bad input or device error.
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

struct Options : ProductOptions {
  std::string layout = "row";
  std::int64_t k = 8;
};

// Host backend: the reference SpMM timed with a steady clock; --check compares each column
// with the SpMV reference (a separate code path).
template <class T>
nlohmann::json run_host(const Csr<double>& a64, const Options& opt, Layout layout, int& status) {
  const Csr<T> a = convert_values<T>(a64, "A");
  DenseMatrix x(a.cols, opt.k, layout), y(a.rows, opt.k, layout);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& v : x.data) v = static_cast<double>(static_cast<T>(dist(rng)));
  std::vector<double> seconds;
  for (int r = 0; r < opt.warmup + opt.reps; ++r) {
    Stopwatch clock;
    ref::spmm(1.0, a, x, 0.0, y);
    if (r >= opt.warmup) seconds.push_back(clock.seconds());
  }
  // The reference sums in double: with --precision fp32 the limit is fp32's range all the same.
  throw_if_overflowed(overflowed_entry("Y = A X", PrecisionOf<T>::value, y.data, opt.k, layout));
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  const double s = seconds[seconds.size() / 2];
  perf::SpmvModelInput mi;
  mi.value_bytes = sizeof(T);
  mi.k = opt.k;
  mi.layout = layout;
  const perf::Traffic model = perf::model_traffic(a, mi);
  std::printf("rows %lld, cols %lld, nnz %lld, k %lld\nreference spmm: %.4f ms, %.2f GB/s (model bytes %.3f GB)\n",
              (long long)a.rows, (long long)a.cols, (long long)a.nnz(), (long long)opt.k, 1e3 * s,
              1e-9 * model.minimal_bytes() / s, 1e-9 * model.minimal_bytes());
  nlohmann::json out = {{"rows", a.rows}, {"nnz", a.nnz()}, {"k", opt.k}, {"reference_s", s},
                        {"bytes", model.minimal_bytes()}};
  if (opt.check) {
    double worst = 0, scale = 0;
    std::vector<double> xj(static_cast<std::size_t>(a.cols)), yj(static_cast<std::size_t>(a.rows));
    for (std::int64_t j = 0; j < opt.k; ++j) {
      for (std::int64_t i = 0; i < a.cols; ++i) xj[i] = x.at(i, j);
      ref::spmv(1.0, a, xj, 0.0, yj);
      for (std::int64_t i = 0; i < a.rows; ++i) {
        worst = std::max(worst, std::abs(yj[i] - y.at(i, j)));
        scale = std::max(scale, std::abs(yj[i]));
      }
    }
    const double rel = scale > 0 ? worst / scale : worst;
    const bool pass = report_check("reference spmm vs column-wise spmv", rel, 1e-12);
    out["check"] = {{"max_relative_error", rel}, {"pass", pass}};
    if (!pass) status = kExitCheckFailed;
  }
  return out;
}

// Several ranks, or --distributed: the distributed product (spmv_distributed.hpp).
int run_distributed(const dist::Communicator& comm, const Options& opt) {
  DistributedSpmvOptions d = distributed_options(opt);
  d.multi_vector = true;
  d.k = opt.k;
  d.column_major_requested = opt.layout == "col";
  nlohmann::json out = {{"driver", "tessera-spmm"}, {"matrix", opt.a.describe()}, {"precision", opt.precision}};
  const int status = run_distributed_spmv(comm, d, out);
  if (comm.rank() == 0 && !opt.json.empty()) write_json(opt.json, out);
  return status;
}

int run(int argc, char** argv) {
  Options opt;
  CLI::App app{"Tessera SpMM: Y = A*X with k dense columns on one GPU or the host reference; several ranks or "
                "--distributed: distributed"};
  add_product_options(app, opt);
  app.add_option("--k", opt.k, "columns of X and Y (1..128)")->check(CLI::Range(1, 128));
  app.add_option("--layout", opt.layout, "layout of X and Y: row or col")->check(CLI::IsMember({"row", "col"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  dist::Communicator comm;
  if (comm.size() > 1 || opt.distributed) return run_distributed(comm, opt);
  refuse_distributed_only_options(opt);
  Stopwatch load_clock;
  const Csr<double> a = load_matrix(opt.a, "A");
  const Precision precision = parse_precision(opt.precision);
  const Backend backend = resolve_backend(opt.backend);
  const Layout layout = opt.layout == "row" ? Layout::row_major : Layout::col_major;
  std::printf("tessera-spmm: %s, k %lld, %s-major, precision %s, backend %s, load %.2f s\n", opt.a.describe().c_str(),
              (long long)opt.k, opt.layout.c_str(), opt.precision.c_str(), to_string(backend), load_clock.seconds());
  nlohmann::json out = {{"driver", "tessera-spmm"}, {"matrix", opt.a.describe()}, {"precision", opt.precision},
                        {"backend", to_string(backend)}, {"k", opt.k}, {"layout", opt.layout}};
  int status = 0;
  if (backend == Backend::gpu) {
#if defined(TESSERA_HAVE_CUDA)
    GpuBenchOptions g;
    fill_gpu_bench_options(opt, precision, g);
    g.k = opt.k;
    g.layout = layout;
    out["gpu"] = run_gpu_spmm_benchmark(a, g);
    if (!out["gpu"].value("check_pass", true)) status = kExitCheckFailed;
#endif
  } else {
    TESSERA_REQUIRE_INPUT(opt.compare.empty(), "--compare cusparse needs the GPU backend");
    out["host"] = precision == Precision::fp64 ? run_host<double>(a, opt, layout, status)
                                               : run_host<float>(a, opt, layout, status);
  }
  if (!opt.json.empty()) write_json(opt.json, out);
  return status;
}

}  // namespace
}  // namespace tessera::driver

int main(int argc, char** argv) { return tessera::driver::run_driver(argc, argv, "tessera-spmm", tessera::driver::run); }
