#include "drivers/product_options.hpp"

#include "drivers/spmv_gpu_benchmark.hpp"
#include "local/core/error.hpp"

namespace tessera::driver {

void add_product_options(CLI::App& app, ProductOptions& o) {
  app.add_option("--A", o.a.file, "Matrix Market file (.mtx or .mtx.gz)");
  app.add_option("--gen", o.a.spec, kGeneratorHelp);
  app.add_option("--precision", o.precision, "fp64 (default) or fp32")->check(CLI::IsMember({"fp64", "fp32"}));
  app.add_option("--backend", o.backend, "auto (GPU when present), host, gpu")->check(CLI::IsMember({"auto", "host", "gpu"}));
  app.add_option("--compare", o.compare, "also time a baseline on the same data: cusparse")->check(CLI::IsMember({"cusparse"}));
  app.add_option("--reps", o.reps, "timed repetitions (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed warm-up runs")->check(CLI::NonNegativeNumber);
  app.add_flag("--sweep", o.sweep, "GPU: also time every kernel variant (tuning data)");
  app.add_flag("--check", o.check, "compare with the host reference; exit 1 on FAIL");
  app.add_option("--json", o.json, "write the results as JSON to this file");
  app.add_option("--partition", o.partition, "distributed: row partition over ranks, rows or nnz")
      ->check(CLI::IsMember({"rows", "nnz"}));
  app.add_flag("--distributed", o.distributed, "run the distributed product even on one rank");
  app.add_option("--halo", o.halo,
                 "distributed GPU halo exchange: auto (peer within a node, else nccl), nccl, peer, or both "
                 "(times both routes side by side and checks that they give the same result)")
      ->check(CLI::IsMember({"auto", "nccl", "peer", "both"}));
  app.add_option("--algorithm", o.algorithm, "GPU SpMV kernel (tessera-spmv only): auto, vector, nnz-split, stream")
      ->check(CLI::IsMember({"auto", "vector", "nnz-split", "stream"}));
}

DistributedSpmvOptions distributed_options(const ProductOptions& o) {
  DistributedSpmvOptions d;
  d.a = o.a;
  d.partition = o.partition;
  d.backend = o.backend;
  d.precision = o.precision;
  d.compare = o.compare;
  d.sweep = o.sweep;
  d.reps = o.reps;
  d.warmup = o.warmup;
  d.check = o.check;
  d.halo = o.halo;
  return d;
}

void refuse_distributed_only_options(const ProductOptions& o) {
  TESSERA_REQUIRE_INPUT(o.halo == "auto", "--halo ", o.halo,
                        " chooses how GPUs exchange halos in the distributed product (several ranks or --distributed)");
}

void fill_gpu_bench_options(const ProductOptions& o, Precision precision, GpuBenchOptions& g) {
  g.precision = precision;
  g.compare_cusparse = o.compare == "cusparse";
  g.check = o.check;
  g.sweep = o.sweep;
  g.spmv_algorithm = o.algorithm;
  g.reps = o.reps;
  g.warmup = o.warmup;
}

}  // namespace tessera::driver
