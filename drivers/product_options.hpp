#pragma once
// The command line that tessera-spmv and tessera-spmm share (one GPU, the host reference, or
// the distributed product), registered once, and its translation into the options of the GPU
// benchmark and of the distributed driver. Each driver adds only its own options (SpMM: --k,
// --layout) and its host reference run.
#include <CLI/CLI.hpp>

#include <string>

#include "drivers/common/matrix_source.hpp"
#include "drivers/spmv_distributed.hpp"
#include "local/core/precision.hpp"

namespace tessera::driver {

struct GpuBenchOptions;

struct ProductOptions {
  MatrixSource a;
  std::string precision = "fp64", backend = "auto", compare, json, partition = "rows";
  std::string algorithm = "auto";  // GPU SpMV kernel: auto, vector, nnz-split, stream
  std::string halo = "auto";       // distributed GPU halo route: auto, nccl, peer, both
  bool check = false, sweep = false, distributed = false;
  int reps = 20, warmup = 3;
};

/// --A --gen --precision --backend --compare --reps --warmup --sweep --check --json
/// --partition --distributed --algorithm --halo.
void add_product_options(CLI::App& app, ProductOptions& o);

/// The distributed driver's options with the shared fields filled in.
DistributedSpmvOptions distributed_options(const ProductOptions& o);

/// Refuses, on the one-rank product, the options that only the distributed product reads (--halo),
/// instead of ignoring them.
void refuse_distributed_only_options(const ProductOptions& o);

/// The GPU benchmark's options with the shared fields filled in (k and layout left to SpMM).
void fill_gpu_bench_options(const ProductOptions& o, Precision precision, GpuBenchOptions& g);

}  // namespace tessera::driver
