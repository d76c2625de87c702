#if defined(TESSERA_HAVE_CUDA)
#include "drivers/spmv_gpu_benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "drivers/common/driver_main.hpp"
#include "drivers/common/overflow_check.hpp"
#include "local/core/error.hpp"
#include "local/cuda/bandwidth.hpp"
#include "local/cuda/cusparse_spmv.hpp"
#include "local/cuda/spmm.hpp"
#include "local/cuda/spmv.hpp"
#include "local/formats/convert.hpp"
#include "local/formats/footprint.hpp"
#include "local/perf/spmv_model.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::driver {
namespace {

struct Measured {
  std::string name;
  double seconds = 0, bytes = 0;  // bytes: the minimal traffic of this format
};

template <class T>
std::vector<double> random_inputs(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& e : v) e = static_cast<double>(static_cast<T>(dist(rng)));  // rounded: host and device agree
  return v;
}

template <class T>
cuda::DeviceBuffer<T> to_device(const std::vector<double>& v) {
  cuda::DeviceBuffer<T> d;
  d.upload(std::vector<T>(v.begin(), v.end()));
  return d;
}

template <class T>
std::vector<double> to_host(const cuda::DeviceBuffer<T>& d) {
  const std::vector<T> h = d.download();
  return std::vector<double>(h.begin(), h.end());
}

double device_l2_bytes() {
  int device = 0, l2 = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return l2;
}

// Largest |got - want| / (sum_j |a_ij x_j|) over the outputs; the bound is (max row + 3) * u.
template <class T>
double max_relative_error(const Csr<T>& a, const DenseMatrix& x, const std::vector<double>& want,
                          const std::vector<double>& got) {
  double worst = 0;
  for (std::int64_t j = 0; j < x.cols; ++j)
    for (std::int64_t i = 0; i < a.rows; ++i) {
      double scale = 0;
      for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        scale += std::abs(static_cast<double>(a.values[p]) * x.at(a.col_idx[p], j));
      const std::int64_t at = x.layout == Layout::row_major ? i * x.cols + j : j * a.rows + i;
      const double err = std::abs(got[at] - want[at]);
      if (!(err <= 0)) worst = std::max(worst, scale > 0 ? err / scale : std::numeric_limits<double>::infinity());
      if (std::isnan(got[at])) return std::numeric_limits<double>::quiet_NaN();
    }
  return worst;
}

template <class T>
double error_bound(const Csr<T>& a) {
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) longest = std::max(longest, a.row_length(i));
  return (longest + 3) * std::numeric_limits<T>::epsilon() / 2;
}

void print_model(const perf::Traffic& t, double copy_bw) {
  std::printf("model: A %.3f GB, X %.3f GB (compulsory %.3f, %lld L2 windows), Y %.3f GB; %.3f flop/byte; "
              "predicted %.4f ms at copy bandwidth\n",
              1e-9 * t.a_bytes, 1e-9 * t.x_bytes, 1e-9 * t.x_compulsory_bytes, (long long)t.x_windows,
              1e-9 * t.y_bytes, t.intensity(), 1e3 * t.predicted_seconds(copy_bw));
}

nlohmann::json model_json(const perf::Traffic& t, double copy_bw) {
  return {{"a_bytes", t.a_bytes},           {"x_bytes", t.x_bytes},      {"x_compulsory_bytes", t.x_compulsory_bytes},
          {"y_bytes", t.y_bytes},           {"flops", t.flops},          {"intensity", t.intensity()},
          {"x_windows", t.x_windows},       {"predicted_s", t.predicted_seconds(copy_bw)}};
}

// Prints the table and returns it; speedups are against the fastest cuSPARSE entry.
nlohmann::json report(const std::vector<Measured>& runs, double copy_bw, double predicted_s) {
  double best_cusparse = 0;
  for (const Measured& m : runs)
    if (m.name.rfind("cusparse", 0) == 0 && (best_cusparse == 0 || m.seconds < best_cusparse)) best_cusparse = m.seconds;
  std::printf("%-28s %10s %9s %7s %11s %9s\n", "kernel", "time ms", "GB/s", "%copy", "model/time", "vs cuSP");
  nlohmann::json out = nlohmann::json::array();
  for (const Measured& m : runs) {
    const double gbs = 1e-9 * m.bytes / m.seconds;
    const double speedup = best_cusparse > 0 ? best_cusparse / m.seconds : 0;
    std::printf("%-28s %10.4f %9.1f %6.1f%% %11.2f %8.2fx\n", m.name.c_str(), 1e3 * m.seconds, gbs,
                100 * m.bytes / m.seconds / copy_bw, predicted_s / m.seconds, speedup);
    out.push_back({{"kernel", m.name}, {"seconds", m.seconds}, {"bytes", m.bytes}, {"gbs", gbs},
                   {"fraction_of_copy", m.bytes / m.seconds / copy_bw}, {"model_over_time", predicted_s / m.seconds},
                   {"speedup_vs_best_cusparse", speedup}});
  }
  return out;
}

bool check_one(const std::string& what, double err, double bound, nlohmann::json& checks) {
  const bool pass = report_check(what, err, bound);
  checks.push_back({{"what", what}, {"max_relative_error", err}, {"bound", bound}, {"pass", pass}});
  return pass;
}


void print_sweep_line(const std::string& what, double seconds, double bytes, double copy_bw, nlohmann::json& out) {
  std::printf("sweep %-36s %9.4f ms %8.1f GB/s %6.1f%%\n", what.c_str(), 1e3 * seconds, 1e-9 * bytes / seconds,
              100 * bytes / seconds / copy_bw);
  out.push_back({{"variant", what}, {"seconds", seconds}, {"fraction_of_copy", bytes / seconds / copy_bw}});
}

// CSR-Stream of one block shape on the same data, or the reason the plan refused it; its
// result is checked too (`verify` is a no-op without --check).
template <class T, class Timer>
void sweep_stream_shape(cuda::StreamShape shape, bool offsets16, const cuda::DeviceCsr<T>& da, const T* x, T* y,
                        double bytes, double copy_bw, Timer& time,
                        const std::function<void(const std::string&)>& verify, nlohmann::json& out) {
  const int capacity = cuda::stream_capacity(shape);
  const std::string name = std::string("csr-stream ") + cuda::to_string(shape) + " cap " + std::to_string(capacity) +
                           (offsets16 ? " off16" : "");
  cuda::SpmvOptions options{cuda::SpmvAlgorithm::stream};
  options.stream_shape = shape;
  options.stream_offsets16 = offsets16;
  const cuda::SpmvPlan p = cuda::make_spmv_plan(da, options);
  if (p.algorithm != cuda::SpmvAlgorithm::stream) {
    std::printf("sweep %s refused: longest row %lld > %d (half a block's capacity)\n", name.c_str(),
                (long long)p.stats.max_row, capacity / 2);
    out.push_back({{"variant", name}, {"refused", true}, {"max_row", p.stats.max_row}});
    return;
  }
  const double s = time([&] { cuda::spmv(p, T(1), da, x, T(0), y); });
  print_sweep_line(name, s, bytes, copy_bw, out);
  out.back()["blocks"] = p.stream_blocks.count;
  out.back()["stream_shape"] = cuda::to_string(shape);
  out.back()["offsets16"] = offsets16;
  std::printf("      %lld blocks, %.1f nonzeros per block\n", (long long)p.stream_blocks.count,
              p.stream_blocks.count ? double(da.nnz) / double(p.stream_blocks.count) : 0.0);
  verify(name + " (sweep)");
}

// Every vector-kernel shape, a few nnz-split chunk sizes and CSR-Stream on the same data
// (tuning data for the plan's automatic choices).
template <class T, class Timer>
nlohmann::json sweep_spmv(const cuda::DeviceCsr<T>& da, const T* x, T* y, double bytes, double copy_bw, Timer& time,
                          const std::function<void(const std::string&)>& verify) {
  nlohmann::json out = nlohmann::json::array();
  for (int tpr : {4, 8, 16, 32})
    for (int rpg : {1, 2, 4, 8}) {
      const cuda::SpmvPlan p = cuda::make_spmv_plan(da, {cuda::SpmvAlgorithm::vector, tpr, rpg});
      const double s = time([&] { cuda::spmv(p, T(1), da, x, T(0), y); });
      print_sweep_line("csr-vector tpr " + std::to_string(tpr) + " rows/group " + std::to_string(rpg), s, bytes,
                       copy_bw, out);
    }
  for (std::int64_t chunk : {256, 1024, 4096}) {
    const cuda::SpmvPlan p = cuda::make_spmv_plan(da, {cuda::SpmvAlgorithm::nnz_split, 0, 0, chunk});
    const double s = time([&] { cuda::spmv(p, T(1), da, x, T(0), y); });
    print_sweep_line("csr-nnz-split chunk " + std::to_string(chunk), s, bytes, copy_bw, out);
  }
  // Every block shape side by side, with int64 row bounds, then with 16-bit block offsets.
  for (bool offsets16 : {false, true})
    for (cuda::StreamShape shape : cuda::kStreamShapes)
      sweep_stream_shape(shape, offsets16, da, x, y, bytes, copy_bw, time, verify, out);
  return out;
}

template <class T>
nlohmann::json spmv_bench(const Csr<double>& a64, const GpuBenchOptions& opt) {
  const double copy_bw = cuda::measure_copy_bandwidth();
  std::printf("copy bandwidth: %.1f GB/s (1 GiB device-to-device cudaMemcpy, read + write)\n", 1e-9 * copy_bw);
  const Csr<T> a = convert_values<T>(a64, "A");
  const cuda::DeviceCsr<T> da = cuda::upload(a);
  DenseMatrix xr(a.cols, 1, Layout::row_major);
  xr.data = random_inputs<T>(a.cols, 1);
  cuda::DeviceBuffer<T> dx = to_device<T>(xr.data), dy(static_cast<std::size_t>(a.rows));
  dy.fill_bytes(0xff);

  Stopwatch plan_clock;
  const cuda::SpmvAlgorithm requested = cuda::parse_spmv_algorithm(opt.spmv_algorithm);
  const cuda::SpmvPlan plan = cuda::make_spmv_plan(da, {requested});
  const double plan_s = plan_clock.seconds();
  std::printf("rows %lld, cols %lld, nnz %lld; row length mean %.2f max %lld cv %.3f -> %s (asked %s), "
              "%d threads/row (analysis %.2f ms)\n",
              (long long)a.rows, (long long)a.cols, (long long)a.nnz(), plan.stats.mean, (long long)plan.stats.max_row,
              plan.stats.cv, cuda::to_string(plan.algorithm), cuda::to_string(requested), plan.threads_per_row,
              1e3 * plan_s);
  perf::SpmvModelInput mi;
  mi.value_bytes = sizeof(T);
  mi.cache_bytes = device_l2_bytes();
  const perf::Traffic model = perf::model_traffic(a, mi);
  print_model(model, copy_bw);

  nlohmann::json out = {{"rows", a.rows}, {"cols", a.cols}, {"nnz", a.nnz()}, {"copy_bandwidth", copy_bw},
                        {"row_mean", plan.stats.mean}, {"row_max", plan.stats.max_row}, {"row_cv", plan.stats.cv},
                        {"algorithm", cuda::to_string(plan.algorithm)}, {"requested_algorithm", cuda::to_string(requested)},
                        {"threads_per_row", plan.threads_per_row},
                        {"analysis_s", plan_s}, {"model", model_json(model, copy_bw)}};
  std::vector<Measured> runs;
  auto time = [&](const std::function<void()>& f) { return cuda::median_device_seconds(f, opt.warmup, opt.reps); };
  nlohmann::json checks = nlohmann::json::array();
  bool pass = true;
  std::vector<double> want;
  if (opt.check) {
    want.assign(static_cast<std::size_t>(a.rows), 0.0);
    ref::spmv(1.0, a, xr.data, 0.0, want);
  }
  const double bound = error_bound(a);
  auto verify = [&](const std::string& what) {
    if (opt.check) pass &= check_one(what, max_relative_error(a, xr, want, to_host(dy)), bound, checks);
    dy.fill_bytes(0xff);
  };

  runs.push_back({std::string("tessera ") + cuda::to_string(plan.algorithm),
                  time([&] { cuda::spmv(plan, T(1), da, dx.data(), T(0), dy.data()); }), model.minimal_bytes()});
  throw_if_overflowed(overflowed_entry("y = A x", PrecisionOf<T>::value, to_host(dy), 1, Layout::row_major));
  verify("tessera CSR");
  {
    const TileMatrix<T> tiles = to_tiles(a);
    const cuda::DeviceTileMatrix<T> dt = cuda::upload(tiles);
    const double tile_bytes = memory_footprint(tiles).total() + model.x_compulsory_bytes + model.y_bytes;
    std::printf("tiles: %lld tiles, %.2f nnz/tile, %.3f GB (CSR %.3f GB)\n", (long long)tiles.num_tiles(),
                tiles.num_tiles() ? double(tiles.nnz()) / tiles.num_tiles() : 0.0,
                1e-9 * memory_footprint(tiles).total(), 1e-9 * memory_footprint(a).total());
    runs.push_back({"tessera tiles", time([&] { cuda::spmv_tiles(T(1), dt, dx.data(), T(0), dy.data()); }), tile_bytes});
    verify("tessera tiles");
  }
  if (opt.compare_cusparse) {
    for (const char* alg : {"default", "csr_alg2"}) {
      cuda::CusparseSpmv<T> cs(da, alg, dx.data(), dy.data());
      runs.push_back({cs.name(), time([&] { cs.run(T(1), T(0)); }), model.minimal_bytes()});
      verify(cs.name());
    }
  }
  out["runs"] = report(runs, copy_bw, model.predicted_seconds(copy_bw));
  if (opt.sweep) out["sweep"] = sweep_spmv(da, dx.data(), dy.data(), model.minimal_bytes(), copy_bw, time, verify);
  out["checks"] = checks;
  out["check_pass"] = pass;
  return out;
}

// Every SpMM kernel the plan can pick (tiles in FP64 only; a column-major X both read in place
// and staged row-major), each checked like the automatic choice.
template <class T, class Time, class Verify>
nlohmann::json sweep_spmm(const cuda::DeviceCsr<T>& da, std::int64_t k, Layout layout, const T* x, T* y, double bytes,
                          double copy_bw, Time& time, Verify& verify) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<cuda::SpmmAlgorithm> algorithms{cuda::SpmmAlgorithm::balanced, cuda::SpmmAlgorithm::nnz_split};
  if (std::is_same_v<T, double>) algorithms.push_back(cuda::SpmmAlgorithm::tiles);
  std::vector<cuda::ColMajorX> staging{cuda::ColMajorX::automatic};
  if (layout == Layout::col_major) staging = {cuda::ColMajorX::in_place, cuda::ColMajorX::staged_row_major};
  for (auto alg : algorithms)
    for (auto cm : staging) {
      if (alg == cuda::SpmmAlgorithm::tiles && cm == cuda::ColMajorX::staged_row_major) continue;  // reads X in place
      cuda::SpmmPlan p = cuda::make_spmm_plan(da, k, alg);
      p.col_major_x = cm;
      std::string name = std::string("spmm ") + cuda::to_string(alg);
      if (layout == Layout::col_major && alg != cuda::SpmmAlgorithm::tiles)
        name += std::string(", X ") + cuda::to_string(cm);
      if (alg == cuda::SpmmAlgorithm::tiles) name += " (fill " + std::to_string(p.tiles.fill()).substr(0, 4) + ")";
      const double s = time([&] { cuda::spmm(p, T(1), da, x, T(0), y, layout); });
      print_sweep_line(name, s, bytes, copy_bw, out);
      verify(name + " (sweep)");
    }
  return out;
}

template <class T>
nlohmann::json spmm_bench(const Csr<double>& a64, const GpuBenchOptions& opt) {
  if (opt.spmv_algorithm != "auto")
    throw InputError("--algorithm " + opt.spmv_algorithm + " selects the SpMV kernel; tessera-spmm picks its own");
  const double copy_bw = cuda::measure_copy_bandwidth();
  std::printf("copy bandwidth: %.1f GB/s (1 GiB device-to-device cudaMemcpy, read + write)\n", 1e-9 * copy_bw);
  const Csr<T> a = convert_values<T>(a64, "A");
  const cuda::DeviceCsr<T> da = cuda::upload(a);
  const std::int64_t k = opt.k;
  DenseMatrix x(a.cols, k, opt.layout);
  x.data = random_inputs<T>(a.cols * k, 1);
  cuda::DeviceBuffer<T> dx = to_device<T>(x.data), dy(static_cast<std::size_t>(a.rows * k));
  dy.fill_bytes(0xff);
  Stopwatch plan_clock;
  const cuda::SpmmPlan plan = cuda::make_spmm_plan(da, k);
  const double plan_s = plan_clock.seconds();
  const char* layout = opt.layout == Layout::row_major ? "row-major" : "col-major";
  std::printf("rows %lld, cols %lld, nnz %lld, k %lld %s; row length mean %.2f max %lld cv %.3f -> %s (analysis %.2f ms)\n",
              (long long)a.rows, (long long)a.cols, (long long)a.nnz(), (long long)k, layout, plan.stats.mean,
              (long long)plan.stats.max_row, plan.stats.cv, cuda::to_string(plan.algorithm), 1e3 * plan_s);
  if (plan.algorithm == cuda::SpmmAlgorithm::tiles)
    std::printf("tile pattern: %lld tiles, %.1f values a tile, %.1f MB\n", (long long)plan.tiles.num_tiles,
                plan.tiles.fill(), 1e-6 * (plan.tiles.tile_row_ptr.bytes() + plan.tiles.tile_col.bytes() +
                                            plan.tiles.bitmap.bytes()));
  perf::SpmvModelInput mi;
  mi.value_bytes = sizeof(T);
  mi.k = k;
  mi.layout = opt.layout;
  mi.cache_bytes = device_l2_bytes();
  const perf::Traffic model = perf::model_traffic(a, mi);
  print_model(model, copy_bw);
  nlohmann::json out = {{"rows", a.rows}, {"cols", a.cols}, {"nnz", a.nnz()}, {"k", k}, {"layout", layout},
                        {"copy_bandwidth", copy_bw}, {"row_mean", plan.stats.mean}, {"row_cv", plan.stats.cv},
                        {"algorithm", cuda::to_string(plan.algorithm)}, {"analysis_s", plan_s},
                        {"tile_fill", plan.tiles.fill()},
                        {"model", model_json(model, copy_bw)}};
  std::vector<Measured> runs;
  auto time = [&](const std::function<void()>& f) { return cuda::median_device_seconds(f, opt.warmup, opt.reps); };
  nlohmann::json checks = nlohmann::json::array();
  bool pass = true;
  std::vector<double> want;
  if (opt.check) {
    DenseMatrix y(a.rows, k, opt.layout);
    ref::spmm(1.0, a, x, 0.0, y);
    want = std::move(y.data);
  }
  const double bound = error_bound(a);
  auto verify = [&](const std::string& what) {
    if (opt.check) pass &= check_one(what, max_relative_error(a, x, want, to_host(dy)), bound, checks);
    dy.fill_bytes(0xff);
  };
  runs.push_back({std::string("tessera ") + cuda::to_string(plan.algorithm),
                  time([&] { cuda::spmm(plan, T(1), da, dx.data(), T(0), dy.data(), opt.layout); }),
                  model.minimal_bytes()});
  throw_if_overflowed(overflowed_entry("Y = A X", PrecisionOf<T>::value, to_host(dy), k, opt.layout));
  verify("tessera SpMM");
  if (opt.sweep) out["sweep"] = sweep_spmm(da, k, opt.layout, dx.data(), dy.data(), model.minimal_bytes(), copy_bw,
                                           time, verify);
  if (opt.compare_cusparse) {
    for (const char* alg : {"default", "csr_alg1", "csr_alg2", "csr_alg3"}) {
      try {
        cuda::CusparseSpmm<T> cs(da, k, opt.layout, alg, dx.data(), dy.data());
        runs.push_back({cs.name(), time([&] { cs.run(T(1), T(0)); }), model.minimal_bytes()});
        verify(cs.name());
      } catch (const DeviceError& e) {  // cuSPARSE rejects some algorithm/layout pairs
        std::printf("cusparse-spmm-%s skipped: %s\n", alg, e.what());
        out["skipped"].push_back({{"alg", alg}, {"reason", e.what()}});
      }
    }
  }
  out["runs"] = report(runs, copy_bw, model.predicted_seconds(copy_bw));
  out["checks"] = checks;
  out["check_pass"] = pass;
  return out;
}

}  // namespace

nlohmann::json run_gpu_spmv_benchmark(const Csr<double>& a, const GpuBenchOptions& options) {
  switch (options.precision) {
    case Precision::fp64: return spmv_bench<double>(a, options);
    case Precision::fp32: return spmv_bench<float>(a, options);
    default: throw InputError("GPU SpMV supports fp64 and fp32");
  }
}

nlohmann::json run_gpu_spmm_benchmark(const Csr<double>& a, const GpuBenchOptions& options) {
  switch (options.precision) {
    case Precision::fp64: return spmm_bench<double>(a, options);
    case Precision::fp32: return spmm_bench<float>(a, options);
    default: throw InputError("GPU SpMM supports fp64 and fp32");
  }
}

}  // namespace tessera::driver
#endif  // TESSERA_HAVE_CUDA
