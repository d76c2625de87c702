#pragma once
// GPU side of tessera-spmv and tessera-spmm: uploads A once, times Tessera's kernels and the
// cuSPARSE baselines on the same device arrays (median of event-timed repetitions after
// warm-up), prints time, GB/s, fraction of the measured copy bandwidth, the traffic model's
// prediction and the speedup, and checks the results against the host reference.
// Only built into programs when TESSERA_HAVE_CUDA is defined.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "local/core/precision.hpp"
#include "local/formats/csr.hpp"
#include "local/formats/dense.hpp"

namespace tessera::driver {

struct GpuBenchOptions {
  Precision precision = Precision::fp64;
  bool compare_cusparse = false;
  bool check = false;
  bool sweep = false;                  // also time every kernel variant (tuning data)
  std::string spmv_algorithm = "auto"; // SpMV only: auto, vector, nnz-split, stream
  int reps = 20, warmup = 3;
  std::int64_t k = 1;                  // SpMM only
  Layout layout = Layout::row_major;   // SpMM only
};

/// Returns the results as JSON; "check_pass" is false when a --check failed.
nlohmann::json run_gpu_spmv_benchmark(const Csr<double>& a, const GpuBenchOptions& options);
nlohmann::json run_gpu_spmm_benchmark(const Csr<double>& a, const GpuBenchOptions& options);

}  // namespace tessera::driver
