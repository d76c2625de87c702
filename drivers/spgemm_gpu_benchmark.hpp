#pragma once
// GPU side of tessera-spgemm: uploads A and B once, converts them to tiles on the device
// (timed separately), times Tessera's tile SpGEMM per phase (symbolic, numeric, and the
// numeric phase alone on a reused plan) and each cuSPARSE SpGEMM algorithm on the same device
// data (median of event-timed repetitions after warm-up, allocations included), prints a
// table (time, GFLOP/s = 2 x intermediate products / time, speedup over the fastest
// successful cuSPARSE algorithm, peak device memory, failures as such), checks the results
// agree, and returns everything as JSON. It also prints the work estimate (scalar products,
// tile pairs, products per pair) and the engine the model of spgemm_engine_choice.hpp picks,
// and with compare_cusparse (FP64) a "Tessera (auto)" line: DeviceProduct with the automatic
// engine, CSR in and sorted CSR out, beside (never instead of) the tile SpGEMM's line. Only built into programs when TESSERA_HAVE_CUDA is
// defined.
#include <nlohmann/json.hpp>

#include "local/core/precision.hpp"
#include "local/formats/csr.hpp"

namespace tessera::driver {

struct GpuSpgemmBenchOptions {
  Precision precision = Precision::fp64;
  bool tensor_cores = true;      // false: FMA tile products (same pipeline)
  bool compare_cusparse = false; // ALG1, ALG2, ALG3
  bool drop_zeros = false;       // compaction of exact zeros after the numeric phase
  bool check = false;            // compare with the host reference (tessera::ref::spgemm)
  int reps = 10, warmup = 2;
};

/// Returns the results as JSON; "check_pass" is false when a check failed.
nlohmann::json run_gpu_spgemm_benchmark(const Csr<double>& a, const Csr<double>& b,
                                        const GpuSpgemmBenchOptions& options);

}  // namespace tessera::driver
