#if defined(TESSERA_HAVE_CUDA)
#include "drivers/spgemm_gpu_benchmark.hpp"

#include "drivers/common/overflow_check.hpp"
#include "drivers/spgemm_bench_support.hpp"
#include "drivers/spgemm_hash_line.hpp"
#include "drivers/spgemm_row_batches.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "local/core/error.hpp"
#include "local/cuda/cusparse_spgemm.hpp"
#include "local/cuda/device_product.hpp"
#include "local/cuda/spgemm_engine_choice.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/cuda/tile_spgemm.hpp"
#include "local/formats/convert.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::driver {
namespace {

struct TesseraTimes {
  double convert_ms = 0, symbolic_ms = 0, numeric_ms = 0, total_ms = 0, reuse_numeric_ms = 0;
  std::int64_t peak_bytes = 0;
  cuda::TileSpgemmInfo info;
  Csr<double> c;
};

template <class T>
TesseraTimes time_tessera(const Csr<double>& a_host, const Csr<double>& b_host, const GpuSpgemmBenchOptions& opt) {
  using Out = cuda::spgemm_output_t<T>;
  const auto a_csr = cuda::upload(convert_values<T>(a_host, "A"));
  const auto b_csr = cuda::upload(convert_values<T>(b_host, "B"));
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  cuda::TileSpgemmOptions options{opt.tensor_cores ? cuda::TileProduct::tensor_core : cuda::TileProduct::fma,
                                  opt.drop_zeros};
  options.list_batch_bytes = opt.list_batch_bytes;
  Events ev;
  TesseraTimes out;
  std::vector<double> convert, symbolic, numeric, reuse;
  cuda::DeviceTileMatrix<T> a, b;
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[0]));
    a = cuda::to_tiles(a_csr);
    b = cuda::to_tiles(b_csr);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[1]));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.e[1]));
    if (rep >= opt.warmup) convert.push_back(ev.ms(0, 1));
  }
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const std::int64_t held = cuda::DeviceMemory::current();
    cuda::DeviceMemory::reset_peak();
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[0]));
    cuda::TileSpgemm<T> plan(options);
    cuda::DeviceTileMatrix<Out> c;
    plan.symbolic(a, b, c);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[1]));
    plan.numeric(a, b, c);
    cuda::DeviceTileMatrix<Out> compact;
    if (opt.drop_zeros) compact = cuda::drop_zeros(c);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[2]));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.e[2]));
    out.peak_bytes = std::max(out.peak_bytes, cuda::DeviceMemory::peak() - held);
    plan.numeric(a, b, c);  // AMG re-setup: numeric phase alone on the kept plan
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[3]));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.e[3]));
    if (rep >= opt.warmup) {
      symbolic.push_back(ev.ms(0, 1));
      numeric.push_back(ev.ms(1, 2));
      reuse.push_back(ev.ms(2, 3));
    }
    if (rep + 1 == opt.warmup + opt.reps) {
      out.info = plan.info();
      if (opt.drop_zeros) c = cuda::drop_zeros(c);
      out.c = convert_values<double>(cuda::download(cuda::to_csr(c)));
    }
  }
  out.convert_ms = median(convert);
  out.symbolic_ms = median(symbolic);
  out.numeric_ms = median(numeric);
  out.reuse_numeric_ms = median(reuse);
  out.total_ms = out.symbolic_ms + out.numeric_ms;
  return out;
}

struct CusparseResult {
  cuda::CusparseSpgemmAlg alg = cuda::CusparseSpgemmAlg::alg1;
  cuda::CusparseSpgemmStatus status = cuda::CusparseSpgemmStatus::error;
  std::string message;
  double ms = 0;
  std::int64_t peak_bytes = 0;
  Csr<double> c;
};

template <class T>
std::vector<CusparseResult> time_cusparse(const Csr<double>& a_host, const Csr<double>& b_host,
                                          const GpuSpgemmBenchOptions& opt) {
  const auto a = cuda::to_int32_offsets(cuda::upload(convert_values<T>(a_host, "A")));
  const auto b = cuda::to_int32_offsets(cuda::upload(convert_values<T>(b_host, "B")));
  std::vector<CusparseResult> results;
  for (auto alg : {cuda::CusparseSpgemmAlg::alg1, cuda::CusparseSpgemmAlg::alg2, cuda::CusparseSpgemmAlg::alg3}) {
    CusparseResult r;
    r.alg = alg;
    std::vector<double> times;
    for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
      auto run = cuda::cusparse_spgemm(a, b, cuda::CusparseSpgemmOptions{alg});
      r.status = run.status;
      r.message = run.message;
      if (run.status != cuda::CusparseSpgemmStatus::success) break;
      r.peak_bytes = std::max(r.peak_bytes, run.peak_bytes);
      if (rep >= opt.warmup) times.push_back(run.milliseconds);
      if (rep + 1 == opt.warmup + opt.reps) r.c = convert_values<double>(cuda::download(run.c));
    }
    r.ms = median(times);
    results.push_back(std::move(r));
  }
  return results;
}

/// Tessera as a library user gets it: DeviceProduct with OffloadSpgemm::automatic, CSR in and
/// row-sorted CSR out, one-shot (no plan kept, cuSPARSE ALG1 when the model picks it), timed
/// from the work estimate to C in CSR (estimate, operand forms, product, C's conversion or row
/// sort, allocations: all included), median of the reps. FP64 only (DeviceProduct's type).
struct AutoResult {
  cuda::SpgemmWorkEstimate estimate;
  cuda::OffloadSpgemm engine = cuda::OffloadSpgemm::automatic;
  double ms = 0, estimate_ms = 0;
  std::int64_t peak_bytes = 0, c_nnz = 0;
  Csr<double> c;  // copied back only when keep_c
};

AutoResult time_auto(const Csr<double>& a_host, const Csr<double>& b_host, const GpuSpgemmBenchOptions& opt,
                     bool keep_c) {
  const auto a = cuda::upload(a_host), b = cuda::upload(b_host);
  Events ev;
  AutoResult out;
  std::vector<double> total, estimate;
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const std::int64_t held = cuda::DeviceMemory::current();
    cuda::DeviceMemory::reset_peak();
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[0]));
    cuda::DeviceProduct product(cuda::OffloadSpgemm::automatic, nullptr, /*keep_plan=*/false);
    out.engine = product.resolve_engine(a, b);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[1]));
    cuda::ProductOperand a_form, b_form;
    product.multiply(a_form.bind(a, out.engine, nullptr), b_form.bind(b, out.engine, nullptr));
    cuda::DeviceCsr<double> c;
    product.result_csr(c);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[2]));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.e[2]));
    out.peak_bytes = std::max(out.peak_bytes, cuda::DeviceMemory::peak() - held);
    out.estimate = product.estimate();
    if (rep >= opt.warmup) total.push_back(ev.ms(0, 2)), estimate.push_back(ev.ms(0, 1));
    out.c_nnz = c.nnz;
    if (rep + 1 == opt.warmup + opt.reps && keep_c) out.c = cuda::download(c);
  }
  out.ms = median(total);
  out.estimate_ms = median(estimate);
  return out;
}

void print_estimate(const cuda::SpgemmWorkEstimate& e) {
  std::printf("work estimate: %lld scalar products, %lld tile pairs, %.2f products per pair (tile from %.2f), %.1f "
              "products per row (tile from %.1f, hash up to %.0f): the model picks %s\n",
              static_cast<long long>(e.scalar_products), static_cast<long long>(e.tile_pairs), e.products_per_pair(),
              cuda::kTileProductsPerPairThreshold, e.products_per_row(), cuda::kTileMinProductsPerRow,
              cuda::kHashMaxProductsPerRow,
              cuda::to_string(cuda::choose_spgemm_engine(e)));
}

nlohmann::json estimate_json(const cuda::SpgemmWorkEstimate& e) {
  return {{"scalar_products", e.scalar_products}, {"tile_pairs", e.tile_pairs},
          {"products_per_pair", e.products_per_pair()}, {"threshold", cuda::kTileProductsPerPairThreshold},
          {"products_per_row", e.products_per_row()}, {"min_products_per_row", cuda::kTileMinProductsPerRow},
          {"engine", cuda::to_string(cuda::choose_spgemm_engine(e))}};
}

/// The "Tessera (auto)" line and its JSON, against the fastest cuSPARSE algorithm (best_ms).
nlohmann::json report_auto(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt,
                           double best_ms, const Agreement& agree, double flops) {
  AutoResult r;
  try {
    r = time_auto(a, b, opt, agree.keep_results);
  } catch (const DeviceError& e) {
    const bool oom = is_out_of_memory(e);
    print_failed_line("Tessera (auto)", oom ? "out of device memory" : "device error", e.what());
    return {{"status", oom ? "out_of_memory" : "device_error"}, {"message", e.what()}, {"agrees", true}};
  }
  const double diff = agree.difference(r.c);
  const double gflops = r.ms > 0 ? flops / (r.ms * 1e6) : 0.0;
  char speedup[32] = "-";
  if (best_ms > 0 && r.ms > 0) std::snprintf(speedup, sizeof speedup, "%.2fx", best_ms / r.ms);
  std::printf("%-26s %10.3f %10.1f %9s %10.1f  %s (estimate %.3f ms; CSR in, sorted CSR out), %s\n", "Tessera (auto)",
              r.ms, gflops, speedup, r.peak_bytes / kMiB, cuda::to_string(r.engine), r.estimate_ms,
              agree.describe("auto - tile", diff).c_str());
  nlohmann::json j = {{"engine", cuda::to_string(r.engine)}, {"ms", r.ms}, {"estimate_ms", r.estimate_ms},
                      {"gflops", gflops}, {"peak_bytes", r.peak_bytes}, {"c_nnz", r.c_nnz},
                      {"max_scaled_difference_vs_tessera", diff}, {"bound", agree.bound}, {"agrees", agree.agrees(diff)}};
  if (best_ms > 0 && r.ms > 0) j["speedup_vs_best_cusparse"] = best_ms / r.ms;
  return j;
}

nlohmann::json tile_json(const TesseraTimes& t, double flops) {
  const double gflops = t.total_ms > 0 ? flops / (t.total_ms * 1e6) : 0.0;
  return {{"convert_ms", t.convert_ms}, {"symbolic_ms", t.symbolic_ms}, {"numeric_ms", t.numeric_ms},
          {"total_ms", t.total_ms}, {"reuse_numeric_ms", t.reuse_numeric_ms}, {"gflops", gflops},
          {"peak_bytes", t.peak_bytes}, {"c_nnz", t.c.nnz()}, {"c_tiles", t.info.c_tiles},
          {"tile_pairs", t.info.tile_pairs}, {"rows_small", t.info.rows_small}, {"rows_medium", t.info.rows_medium},
          {"rows_large", t.info.rows_large}, {"pull_tasks", t.info.pull_tasks},
          {"listed_tasks", t.info.listed_tasks}, {"listed_pairs", t.info.listed_pairs},
          {"list_batches", t.info.list_batches}, {"list_bytes", t.info.list_bytes}};
}

/// The tile SpGEMM's timings, or nothing (reported, in `failure`) when it ran out of memory.
template <class T>
std::optional<TesseraTimes> try_time_tessera(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt,
                                             std::string& failure) {
  try {
    return time_tessera<T>(a, b, opt);
  } catch (const DeviceError& e) {
    if (!is_out_of_memory(e)) throw;
    failure = e.what();
    return std::nullopt;
  }
}

/// cuSPARSE lines (and the Tessera (auto) / (hash) lines in FP64); sets best_ms, returns false
/// when a line disagreed or failed its check.
template <class T>
bool report_comparisons(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt, double flops,
                        const std::optional<TesseraTimes>& t, double& best_ms, nlohmann::json& out) {
  const bool large = flops > kLargeProductFlops;
  const auto gflops = [&](double ms) { return ms > 0 ? flops / (ms * 1e6) : 0.0; };
  // FP16 inputs have no cuSPARSE SpGEMM: compare with FP32 on the same (rounded) inputs.
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const auto rounded_a = convert_values<double>(convert_values<T>(a)), rounded_b = convert_values<double>(convert_values<T>(b));
  const auto runs = time_cusparse<C>(rounded_a, rounded_b, opt);
  const Csr<double> magnitude = large ? Csr<double>{} : magnitude_product(rounded_a, rounded_b);
  // both within 2 n u (|A||B|)_ij of the exact product, n <= A's longest row
  const std::int64_t longest = std::max<std::int64_t>(1, longest_row(a));
  const Agreement agree{t ? &t->c : nullptr, large ? nullptr : &magnitude, 4.0 * double(longest) * std::ldexp(1.0, -53),
                        opt.drop_zeros, !large};
  for (const auto& r : runs)
    if (r.status == cuda::CusparseSpgemmStatus::success && (best_ms == 0 || r.ms < best_ms)) best_ms = r.ms;
  for (const auto& r : runs) {
    nlohmann::json j = {{"alg", cuda::to_string(r.alg)}, {"status", cuda::to_string(r.status)}};
    const std::string name = std::string("cusparse ") + cuda::to_string(r.alg);
    if (r.status == cuda::CusparseSpgemmStatus::success) {
      const double diff = agree.difference(r.c);
      j.update({{"ms", r.ms}, {"gflops", gflops(r.ms)}, {"peak_bytes", r.peak_bytes},
                {"max_scaled_difference_vs_tessera", diff}, {"agrees", agree.agrees(diff)}});
      std::printf("%-26s %10.3f %10.1f %9s %10.1f  ok, %s\n", name.c_str(), r.ms, gflops(r.ms), "",
                  r.peak_bytes / kMiB, agree.describe("tessera - cusparse", diff).c_str());
    } else {
      j["message"] = r.message;
      print_failed_line(name.c_str(), cuda::to_string(r.status), r.message);
    }
    out["cusparse"].push_back(j);
  }
  if (best_ms > 0 && t) out["speedup_vs_best_cusparse"] = best_ms / t->total_ms;
  if constexpr (!std::is_same_v<T, double>) {
    std::printf("Tessera (auto), Tessera (hash): skipped, FP64 only (precision %s)\n", to_string(PrecisionOf<T>::value));
    return true;
  } else {
    out["tessera_auto"] = report_auto(a, b, opt, best_ms, agree, flops);
    const bool auto_ok = out["tessera_auto"]["agrees"].get<bool>();  // drop_zeros: patterns differ, not compared
    return report_hash_lines(a, b, opt, best_ms, agree, flops, out) && auto_ok;
  }
}

/// --check of the tile SpGEMM: the whole product against ref::spgemm, or sampled rows past
/// kLargeProductFlops (no full product on the host).
template <class T>
bool check_tile(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt, const TesseraTimes& t,
                double flops, nlohmann::json& out) {
  if (flops > kLargeProductFlops && (opt.drop_zeros || !std::is_same_v<T, double>)) {
    std::printf("check: skipped, too large for the host reference (sampled rows: FP64, zeros kept only)\n");
    out["check"] = {{"skipped", "product too large for the host reference"}};
    return true;
  }
  const auto ta = convert_values<T>(a), tb = convert_values<T>(b);
  if (flops > kLargeProductFlops) {
    SampledRowCheck sampled(a, b);
    for (const std::int64_t i : sampled.rows())
      sampled.compare(i, t.c.col_idx.data() + t.c.row_ptr[i], t.c.values.data() + t.c.row_ptr[i], t.c.row_length(i));
    out["check"] = sampled.json();
    std::printf("check vs host rows: %s\n", sampled.summary().c_str());
    return sampled.pass();
  }
  // Bound (docs/spgemm-design.md): 2 n u (|A||B|)_ij with n <= the longest row of A.
  const Csr<double> want = ref::spgemm(ta, tb, ref::SpgemmOptions{!opt.drop_zeros});
  Csr<double> magnitude = magnitude_product(convert_values<double>(ta), convert_values<double>(tb));
  if (opt.drop_zeros) magnitude = want;  // patterns differ; fall back to relative to |c|
  const std::int64_t longest = std::max<std::int64_t>(1, longest_row(a));
  const double u = std::is_same_v<T, double> ? std::ldexp(1.0, -53) : std::is_same_v<T, float> ? std::ldexp(1.0, -24) : std::ldexp(1.0, -23);
  const double err = scaled_difference(t.c, want, magnitude), bound = 2.0 * longest * u;
  const bool pass = err <= bound;
  out["check"] = {{"max_scaled_error", err}, {"bound", bound}, {"pass", pass}};
  std::printf("check vs host reference: max |c - ref| / (|A||B|) = %.3e, bound %.3e: %s\n", err, bound,
              pass ? "PASS" : "FAIL");
  return pass;
}

template <class T>
nlohmann::json run_typed(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt) {
  const double flops = 2.0 * static_cast<double>(ref::spgemm_flops(a, b));
  const auto gflops = [&](double ms) { return ms > 0 ? flops / (ms * 1e6) : 0.0; };
  std::string tile_failure;
  const std::optional<TesseraTimes> t = try_time_tessera<T>(a, b, opt, tile_failure);
  if (t) throw_if_overflowed(overflowed_entry(opt.product, PrecisionOf<T>::value, t->c));
  const cuda::SpgemmWorkEstimate estimate = [&] {
    const auto da = cuda::upload(a), db = cuda::upload(b);
    return cuda::estimate_spgemm_work(da, db);
  }();
  nlohmann::json out = {{"precision", to_string(PrecisionOf<T>::value)},
                        {"path", opt.tensor_cores ? "tensor_core" : "fma"},
                        {"flops", flops},
                        {"work_estimate", estimate_json(estimate)}};
  out["tessera"] = t ? tile_json(*t, flops) : nlohmann::json{{"status", "out_of_memory"}, {"message", tile_failure}};
  print_estimate(estimate);
  std::printf("\n%-26s %10s %10s %9s %10s  %s\n", "GPU SpGEMM", "time ms", "GFLOP/s", "speedup", "peak MiB", "status");
  if (t) {
    std::printf("%-26s %10.3f %10s %9s %10s\n", "tessera to_tiles(A),(B)", t->convert_ms, "", "", "");
    std::printf("%-26s %10.3f\n", "tessera symbolic", t->symbolic_ms);
    std::printf("%-26s %10.3f\n", "tessera numeric", t->numeric_ms);
    std::printf("%-26s %10.3f %10.1f\n", "tessera numeric (reuse)", t->reuse_numeric_ms, gflops(t->reuse_numeric_ms));
  } else {
    print_failed_line("tessera total", "out of device memory", tile_failure);
  }
  bool pass = true;
  double best_ms = 0;
  if (opt.compare_cusparse) {
    pass = report_comparisons<T>(a, b, opt, flops, t, best_ms, out);
  } else if (opt.row_batch_nnz >= 0) {
    if constexpr (std::is_same_v<T, double>)
      pass = report_hash_lines(a, b, opt, 0.0, Agreement{}, flops, out);
    else
      std::printf("Tessera (hash, batches): skipped, FP64 only (precision %s)\n", to_string(PrecisionOf<T>::value));
  }
  if (t) {
    char speedup[32] = "";
    if (best_ms > 0) std::snprintf(speedup, sizeof speedup, "%.2fx", best_ms / t->total_ms);
    std::printf("%-26s %10.3f %10.1f %9s %10.1f  %lld tiles, %lld nnz\n", "tessera total", t->total_ms,
                gflops(t->total_ms), speedup, t->peak_bytes / kMiB, static_cast<long long>(t->info.c_tiles),
                static_cast<long long>(t->c.nnz()));
    std::printf("tile pairs %lld; tile-rows by pairs: %lld warp, %lld block, %lld global-table; "
                "%lld searching warp tasks, %lld listed warp tasks (%lld pairs, made in %lld batches, %.1f MiB)\n",
                static_cast<long long>(t->info.tile_pairs), static_cast<long long>(t->info.rows_small),
                static_cast<long long>(t->info.rows_medium), static_cast<long long>(t->info.rows_large),
                static_cast<long long>(t->info.pull_tasks), static_cast<long long>(t->info.listed_tasks),
                static_cast<long long>(t->info.listed_pairs), static_cast<long long>(t->info.list_batches),
                static_cast<double>(t->info.list_bytes) / kMiB);
    if (opt.check) pass = check_tile<T>(a, b, opt, *t, flops, out) && pass;
  } else if (opt.check) {
    std::printf("check: the tile SpGEMM ran out of device memory, its result is not checked\n");
  }
  out["check_pass"] = pass;
  return out;
}

}  // namespace

nlohmann::json run_gpu_spgemm_benchmark(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt) {
  TESSERA_REQUIRE_INPUT(opt.reps >= 1 && opt.warmup >= 0, "GPU SpGEMM benchmark: reps must be >= 1, warmup >= 0");
  switch (opt.precision) {
    case Precision::fp32: return run_typed<float>(a, b, opt);
    case Precision::fp16: return run_typed<Half>(a, b, opt);
    default: return run_typed<double>(a, b, opt);
  }
}

}  // namespace tessera::driver
#endif
