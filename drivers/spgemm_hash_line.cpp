#if defined(TESSERA_HAVE_CUDA)
#include "drivers/spgemm_hash_line.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "drivers/spgemm_row_batches.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/hash_spgemm.hpp"

namespace tessera::driver {
namespace {

/// The row-wise hash SpGEMM on the int64-offset CSR operands (uploaded once): one-shot
/// cuda::hash_spgemm per rep (allocations included), then the phases on a HashSpgemm plan and
/// the numeric phase alone on the kept plan. C is copied back (last rep) only when `keep_c`.
struct HashResult {
  double ms = 0, symbolic_ms = 0, numeric_ms = 0, reuse_ms = 0;
  std::int64_t peak_bytes = 0, c_nnz = 0;
  cuda::HashSpgemmInfo info;
  Csr<double> c;
};

HashResult time_hash(const Csr<double>& a_host, const Csr<double>& b_host, const GpuSpgemmBenchOptions& opt,
                     bool keep_c) {
  const auto a = cuda::upload(a_host), b = cuda::upload(b_host);
  Events ev;
  HashResult out;
  std::vector<double> total, symbolic, numeric, reuse;
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const std::int64_t held = cuda::DeviceMemory::current();
    cuda::DeviceMemory::reset_peak();
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[0]));
    const cuda::DeviceCsr<double> c = cuda::hash_spgemm(a, b);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[1]));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.e[1]));
    out.peak_bytes = std::max(out.peak_bytes, cuda::DeviceMemory::peak() - held);
    out.c_nnz = c.nnz;
    if (rep >= opt.warmup) total.push_back(ev.ms(0, 1));
    if (rep + 1 == opt.warmup + opt.reps && keep_c) out.c = cuda::download(c);
  }
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[0]));
    cuda::HashSpgemm plan;
    cuda::DeviceCsr<double> c;
    plan.symbolic(a, b, c);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[1]));
    plan.numeric(a, b, c);
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[2]));
    plan.numeric(a, b, c);  // AMG re-setup: numeric phase alone on the kept plan
    TESSERA_CUDA_CHECK(cudaEventRecord(ev.e[3]));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.e[3]));
    if (rep >= opt.warmup) symbolic.push_back(ev.ms(0, 1)), numeric.push_back(ev.ms(1, 2)), reuse.push_back(ev.ms(2, 3));
    if (rep + 1 == opt.warmup + opt.reps) out.info = plan.info();
  }
  out.ms = median(total);
  out.symbolic_ms = median(symbolic);
  out.numeric_ms = median(numeric);
  out.reuse_ms = median(reuse);
  return out;
}

nlohmann::json hash_info_json(const cuda::HashSpgemmInfo& info) {
  return {{"rows", info.rows}, {"products", info.products}, {"c_nnz", info.c_nnz},
          {"rows_per_bin", info.rows_per_bin}, {"global_table_rows", info.global_table_rows},
          {"global_table_chunks", info.global_table_chunks}, {"numeric_rows_per_bin", info.numeric_rows_per_bin},
          {"numeric_global_table_chunks", info.numeric_global_table_chunks}};
}

/// The "Tessera (hash)" line, its phase lines and JSON (the "tessera_auto" fields plus the
/// phases and info()); an out-of-memory one-shot product is reported with status
/// "out_of_memory" (the caller then runs the row batches). With check, sampled rows of C
/// against the host Gustavson rows.
nlohmann::json report_hash(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt,
                           double best_ms, const Agreement& agree, double flops) {
  HashResult r;
  const bool keep_c = flops <= kLargeProductFlops;
  try {
    r = time_hash(a, b, opt, keep_c);
  } catch (const DeviceError& e) {
    if (!is_out_of_memory(e)) throw;
    print_failed_line("Tessera (hash)", "out of device memory", e.what());
    return {{"status", "out_of_memory"}, {"message", e.what()}};
  }
  const double diff = agree.difference(r.c);
  const auto gflops = [&](double ms) { return ms > 0 ? flops / (ms * 1e6) : 0.0; };
  char speedup[32] = "-";
  if (best_ms > 0 && r.ms > 0) std::snprintf(speedup, sizeof speedup, "%.2fx", best_ms / r.ms);
  std::printf("%-26s %10.3f %10.1f %9s %10.1f  CSR in (int64 offsets), sorted CSR out, %lld nnz, %s\n",
              "Tessera (hash)", r.ms, gflops(r.ms), speedup, r.peak_bytes / kMiB, static_cast<long long>(r.c_nnz),
              agree.describe("hash - tile", diff).c_str());
  std::printf("%-26s %10.3f\n%-26s %10.3f\n%-26s %10.3f %10.1f\n", "hash symbolic", r.symbolic_ms, "hash numeric",
              r.numeric_ms, "hash numeric (reuse)", r.reuse_ms, gflops(r.reuse_ms));
  std::printf("hash rows per table size (empty, 10 shared, global):");
  for (const std::int64_t n : r.info.rows_per_bin) std::printf(" %lld", static_cast<long long>(n));
  std::printf("; %lld global-table rows in %lld chunks\n", static_cast<long long>(r.info.global_table_rows),
              static_cast<long long>(r.info.global_table_chunks));
  std::printf("hash numeric rows per table size (by exact length):");
  for (const std::int64_t n : r.info.numeric_rows_per_bin) std::printf(" %lld", static_cast<long long>(n));
  std::printf("; %lld global-table chunks\n", static_cast<long long>(r.info.numeric_global_table_chunks));
  nlohmann::json j = {{"ms", r.ms}, {"gflops", gflops(r.ms)}, {"peak_bytes", r.peak_bytes}, {"c_nnz", r.c_nnz},
                      {"symbolic_ms", r.symbolic_ms}, {"numeric_ms", r.numeric_ms}, {"numeric_reuse_ms", r.reuse_ms},
                      {"max_scaled_difference_vs_tessera", diff}, {"bound", agree.bound},
                      {"agrees", agree.agrees(diff)}, {"info", hash_info_json(r.info)}};
  if (best_ms > 0 && r.ms > 0) j["speedup_vs_best_cusparse"] = best_ms / r.ms;
  if (opt.check && keep_c) {
    SampledRowCheck sampled(a, b);
    for (const std::int64_t i : sampled.rows())
      sampled.compare(i, r.c.col_idx.data() + r.c.row_ptr[i], r.c.values.data() + r.c.row_ptr[i], r.c.row_length(i));
    std::printf("check hash vs host rows: %s\n", sampled.summary().c_str());
    j["sampled_check"] = sampled.json();
    j["check_pass"] = sampled.pass();
  }
  return j;
}

}  // namespace

/// The "Tessera (hash)" line (with compare_cusparse), then the row batches when asked for or
/// when the one-shot product did not fit. FP64 only; returns false when a check failed.
bool report_hash_lines(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt, double best_ms,
                       const Agreement& agree, double flops, nlohmann::json& out) {
  bool pass = true, out_of_memory = false;
  if (opt.compare_cusparse) {
    out["tessera_hash"] = report_hash(a, b, opt, best_ms, agree, flops);
    out_of_memory = out["tessera_hash"].value("status", "") == "out_of_memory";
    pass = out["tessera_hash"].value("agrees", true) && out["tessera_hash"].value("check_pass", true);
  }
  if (opt.row_batch_nnz < 0 && !out_of_memory) return pass;
  RowBatchOptions batches;
  batches.max_batch_nnz = std::max<std::int64_t>(0, opt.row_batch_nnz);
  batches.check = opt.check;
  batches.reason = opt.row_batch_nnz >= 0 ? "--row-batches" : "one-shot out of memory";
  out["tessera_hash_batches"] = run_hash_row_batches(a, b, batches, flops, best_ms);
  return pass && out["tessera_hash_batches"]["pass"].get<bool>();
}

}  // namespace tessera::driver
#endif
