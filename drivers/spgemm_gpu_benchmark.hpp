#pragma once
// GPU side of tessera-spgemm: uploads A and B once, converts them to tiles on the device
// (timed separately), times Tessera's tile SpGEMM per phase (symbolic, numeric, and the
// numeric phase alone on a reused plan) and each cuSPARSE SpGEMM algorithm on the same device
// data (median of event-timed repetitions after warm-up, allocations included), prints a
// table (time, GFLOP/s = 2 x intermediate products / time, speedup over the fastest
// successful cuSPARSE algorithm, peak device memory, failures as such), checks the results
// agree, and returns everything as JSON. It also prints the work estimate (scalar products,
// tile pairs, products per pair) and the engine the model of spgemm_engine_choice.hpp picks,
// and with compare_cusparse (FP64) two more lines beside (never instead of) the tile SpGEMM's:
//   "Tessera (auto)": DeviceProduct with the automatic engine, CSR in and sorted CSR out;
//   "Tessera (hash)": the row-wise hash SpGEMM (local/cuda/hash_spgemm.hpp) on the int64-offset
//   CSR operands, one-shot per rep (allocations included), then its symbolic and numeric phases
//   on a HashSpgemm plan and the numeric phase alone on the kept plan (AMG re-setup), with its
//   row-bin statistics; other precisions print why it is skipped.
// Products larger than the device (drivers/spgemm_row_batches.hpp): with row_batch_nnz >= 0,
// or when the one-shot hash product runs out of device memory, a "Tessera (hash, batches)"
// line computes C in row batches without ever holding it (checksums; sampled rows with check).
// An out-of-memory tile SpGEMM or auto line is reported as such and the run goes on; cuSPARSE
// reports its own INSUFFICIENT_RESOURCES. Past kLargeProductFlops no full product is formed on
// the host: agreement between lines is not computed and check uses sampled rows. Only built
// into programs when TESSERA_HAVE_CUDA is defined.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

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
  std::string product = "C = A*B";  // names C in messages (an overflowed entry)
  std::int64_t row_batch_nnz = -1; // >= 0: hash row batches of at most this many entries of C
                                   // (0: sized from free device memory); < 0: only on OOM
  std::int64_t list_batch_bytes = std::int64_t{1} << 30;  // cuda::TileSpgemmOptions::list_batch_bytes
};

/// 2 x intermediate products past which the host forms no full product (A*B or |A||B|).
constexpr double kLargeProductFlops = 2e9;

/// Returns the results as JSON; "check_pass" is false when a check failed.
nlohmann::json run_gpu_spgemm_benchmark(const Csr<double>& a, const Csr<double>& b,
                                        const GpuSpgemmBenchOptions& options);

}  // namespace tessera::driver
