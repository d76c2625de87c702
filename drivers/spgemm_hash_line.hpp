#pragma once
// The row-wise hash SpGEMM's lines of tessera-spgemm's GPU table (spgemm_gpu_benchmark.hpp says
// what each line means): "Tessera (hash)", one-shot cuda::hash_spgemm per rep, then its phases
// on a HashSpgemm plan and the numeric phase alone on the kept plan, with its row-bin counts;
// then "Tessera (hash, batches)" (spgemm_row_batches.hpp) when asked for or when the one-shot
// product ran out of device memory. FP64 only; exists only when TESSERA_HAVE_CUDA is defined.
#include <nlohmann/json.hpp>

#include "drivers/spgemm_bench_support.hpp"
#include "drivers/spgemm_gpu_benchmark.hpp"
#include "local/formats/csr.hpp"

namespace tessera::driver {

#if defined(TESSERA_HAVE_CUDA)
/// The "Tessera (hash)" line (with compare_cusparse; JSON "tessera_hash"), then the row batches
/// (JSON "tessera_hash_batches") when opt.row_batch_nnz >= 0 or the one-shot product did not
/// fit. best_ms > 0: the fastest cuSPARSE time, for the speedup column. Returns false when a
/// line disagreed with the tile result or failed its check.
bool report_hash_lines(const Csr<double>& a, const Csr<double>& b, const GpuSpgemmBenchOptions& opt, double best_ms,
                       const Agreement& agree, double flops, nlohmann::json& out);
#endif

}  // namespace tessera::driver
