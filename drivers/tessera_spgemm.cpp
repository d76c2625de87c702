// tessera-spgemm: C = A*B (or A*A, A*A^T, P^T A P) on generated or Matrix Market matrices.
//   tessera-spgemm --gen poisson3d:32 --op AA --check
//   tessera-spgemm --A a.mtx.gz --B b.mtx --op AB --precision fp32 --json out.json
//   mpirun -np 4 tessera-spgemm --gen elasticity3d:16 --op PtAP --partition nnz --check
// One rank, host backend: the two reference algorithms (CSR Gustavson and tile-pair products),
// --check compares them. One rank, GPU: the tile SpGEMM, --compare cusparse benchmarks it.
// Several ranks (or --op PtAP, or --distributed): the distributed product, --check against the
// serial reference; with the GPU backend its rank-local products run on each rank's GPU.
// One rank, GPU, --compare cusparse (FP64) also times the "Tessera (auto)" and "Tessera (hash)"
// lines; --row-batches NNZ (or a hash product that does not fit) computes C in row batches
// never held whole (rmat:20:16 A*A): checksums, and sampled rows with --check.
//   tessera-spgemm --gen rmat:20:16 --op AA --backend gpu --compare cusparse --check
// Exit codes: 0 ok, 1 check failed, 2 bad input.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "drivers/common/driver_main.hpp"
#include "drivers/common/matrix_source.hpp"
#include "drivers/common/overflow_check.hpp"
#include "drivers/product_check.hpp"
#include "dist/backend_choice.hpp"
#include "drivers/spgemm_distributed.hpp"
#include "dist/communicator.hpp"
#include "local/core/backend.hpp"
#include "local/core/error.hpp"
#include "local/core/precision.hpp"
#include "local/formats/convert.hpp"
#include "local/formats/footprint.hpp"
#include "local/reference/kernels.hpp"
#if defined(TESSERA_HAVE_CUDA) && __has_include("drivers/spgemm_gpu_benchmark.hpp")
#include "drivers/spgemm_gpu_benchmark.hpp"
#define TESSERA_DRIVER_GPU_SPGEMM 1
#endif

namespace tessera::driver {
namespace {

struct Options {
  MatrixSource a, b, p;
  std::string op = "AA", precision = "fp64", backend = "auto", json, compare, path = "tc", partition = "rows";
  bool check = false, drop_zeros = false, distributed = false, trace = false;
  int reps = 5, warmup = 1, whole_reps = 1;
  std::int64_t row_batches = -1;  // --row-batches: < 0 off (hash batches only on out-of-memory)
  std::int64_t list_batch_mib = 1024;  // --list-batch-mib: TileSpgemmOptions::list_batch_bytes
};

nlohmann::json describe(const char* name, const Csr<double>& m, const TileMatrix<double>& t) {
  const double mean_per_tile = t.num_tiles() ? double(t.nnz()) / double(t.num_tiles()) : 0.0;
  std::printf("%-2s %10lld x %-10lld nnz %12lld  tiles %11lld  nnz/tile %5.2f  CSR %8.1f MiB  tiles %8.1f MiB\n",
              name, (long long)m.rows, (long long)m.cols, (long long)m.nnz(), (long long)t.num_tiles(),
              mean_per_tile, memory_footprint(m).total() / 1048576.0, memory_footprint(t).total() / 1048576.0);
  return {{"rows", m.rows}, {"cols", m.cols}, {"nnz", m.nnz()}, {"tiles", t.num_tiles()},
          {"nnz_per_tile", mean_per_tile}, {"csr_bytes", memory_footprint(m).total()},
          {"tile_bytes", memory_footprint(t).total()}};
}

// Runs the host reference SpGEMM on inputs rounded to the precision's storage type T.
template <class T>
int run_host(const Csr<double>& a_in, const Csr<double>& b_in, const Options& opt, nlohmann::json& out) {
  Stopwatch convert_clock;
  const Csr<T> a = convert_values<T>(a_in, "A"), b = convert_values<T>(b_in, "B");
  const TileMatrix<T> at = to_tiles(a), bt = to_tiles(b);
  const double convert_s = convert_clock.seconds();
  ref::SpgemmOptions so;
  so.keep_zeros = !opt.drop_zeros;

  Stopwatch csr_clock;
  const Csr<double> c = ref::spgemm(a, b, so);
  const double csr_s = csr_clock.seconds();
  // The reference sums in double: in fp32 and fp16 an entry past fp32's range overflowed too.
  throw_if_overflowed(overflowed_entry(product_formula(opt.op), PrecisionOf<T>::value, c));
  Stopwatch tile_clock;
  const TileMatrix<double> ct = ref::spgemm_tiles(at, bt, so);
  const double tile_s = tile_clock.seconds();

  const std::int64_t flops = ref::spgemm_flops(a, b);
  out["A"] = describe("A", a_in, to_tiles(a_in));
  out["B"] = describe("B", b_in, to_tiles(b_in));
  out["C"] = describe("C", c, ct);
  std::printf("intermediate products %lld, compression ratio %.2f\n", (long long)flops,
              c.nnz() ? double(flops) / double(c.nnz()) : 0.0);
  std::printf("time: convert+tile %.4f s | reference CSR (Gustavson) %.4f s, %.3f GFLOP/s | reference tiles %.4f s, %.3f GFLOP/s\n",
              convert_s, csr_s, 2e-9 * flops / csr_s, tile_s, 2e-9 * flops / tile_s);
  out["intermediate_products"] = flops;
  out["time"] = {{"convert_and_tile_s", convert_s}, {"reference_csr_s", csr_s}, {"reference_tiles_s", tile_s}};
  if (!opt.check) return 0;
  const ProductComparison cmp = compare_products(a, b, c, to_csr(ct));
  out["check"] = {{"pattern_equal", cmp.pattern_equal}, {"max_relative_error", cmp.max_relative_error},
                  {"bound", cmp.bound}};
  if (!cmp.pattern_equal) std::printf("check: tile and CSR products differ in pattern: %s\n", cmp.pattern_message.c_str());
  const bool pass = report_check("tile vs CSR reference", cmp.max_relative_error, cmp.bound) && cmp.pattern_equal;
  out["check"]["pass"] = pass;
  return pass ? 0 : kExitCheckFailed;
}

// Several ranks or PtAP: the distributed product; with the GPU backend its rank-local products
// run on each rank's GPU (tile SpGEMM; --compare cusparse runs it again with cuSPARSE).
int run_distributed(const dist::Communicator& comm, const Options& opt) {
  TESSERA_REQUIRE_INPUT(opt.precision == "fp64", "distributed products run in fp64");
  TESSERA_REQUIRE_INPUT(opt.row_batches < 0, "--row-batches runs on one rank, with the GPU backend");
  const Backend backend = dist::resolve_distributed_backend(comm, opt.backend);
  DistributedSpgemmOptions d;
  d.backend = backend;
  d.compare = opt.compare;
  d.warmup = opt.warmup;
  d.a = opt.a;
  d.b = opt.b;
  d.p = opt.p;
  d.op = opt.op;
  d.partition = opt.partition;
  d.reps = opt.reps;
  d.whole_reps = opt.whole_reps;
  d.trace = opt.trace;
  d.check = opt.check;
  nlohmann::json out = {{"driver", "tessera-spgemm"}, {"op", opt.op}, {"precision", "fp64"},
                        {"backend", to_string(backend)}, {"A_source", opt.a.describe()}};
  if (comm.rank() == 0)
    std::printf("tessera-spgemm: distributed %s on %d rank(s), partition by %s, %s backend\n", opt.op.c_str(),
                comm.size(), opt.partition.c_str(), to_string(backend));
  const int status = run_distributed_spgemm(comm, d, out);
  if (comm.rank() == 0 && !opt.json.empty()) write_json(opt.json, out);
  return status;
}

int run(int argc, char** argv) {
  Options opt;
  CLI::App app{"Tessera SpGEMM: C = A*B on the 8x8 bitmap tile format"};
  app.add_option("--A", opt.a.file, "Matrix Market file for A (.mtx or .mtx.gz)");
  app.add_option("--gen", opt.a.spec, kGeneratorHelp);
  app.add_option("--B", opt.b.file, "Matrix Market file for B (--op AB)");
  app.add_option("--gen-B", opt.b.spec, "generate B (--op AB)");
  app.add_option("--op", opt.op, "product: AA (A*A), AB (A*B), AAT (A*A^T), PtAP (Galerkin P^T A P)")
      ->check(CLI::IsMember({"AA", "AB", "AAT", "PtAP"}));
  app.add_option("--P", opt.p.file, "Matrix Market file for P (--op PtAP; default: aggregation of 8 consecutive rows)");
  app.add_option("--partition", opt.partition, "row partition over ranks: rows or nnz")->check(CLI::IsMember({"rows", "nnz"}));
  app.add_option("--precision", opt.precision, "fp64 (default), fp32, fp16 (FP16 inputs, FP32 accumulation)")
      ->check(CLI::IsMember({"fp64", "fp32", "fp16"}));
  app.add_option("--backend", opt.backend, "auto (GPU when present), host, gpu")->check(CLI::IsMember({"auto", "host", "gpu"}));
  app.add_option("--path", opt.path, "GPU tile products: tc (tensor cores) or fma")->check(CLI::IsMember({"tc", "fma"}));
  app.add_option("--compare", opt.compare, "also run a baseline on the same data: cusparse")->check(CLI::IsMember({"cusparse"}));
  app.add_option("--reps", opt.reps, "timed repetitions (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--whole-reps", opt.whole_reps,
                 "distributed: whole products (symbolic + numeric) timed, median reported (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--trace", opt.trace,
               "distributed: print the host wall-clock time of the last whole product's steps on every rank "
               "(MPI waits appear as mpi.* steps)");
  app.add_option("--warmup", opt.warmup, "untimed warm-up runs")->check(CLI::NonNegativeNumber);
  app.add_option("--row-batches", opt.row_batches,
                 "GPU, fp64: also compute C with the hash SpGEMM in row batches of at most NNZ entries of C "
                 "(0: sized from free device memory), nothing copied back: checksums, and sampled rows with "
                 "--check. Automatic when the hash line (--compare cusparse) runs out of device memory")
      ->type_name("NNZ")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--list-batch-mib", opt.list_batch_mib,
                 "GPU tile SpGEMM: scratch for making the skewed rows' pair lists, in MiB per batch of rows (16 "
                 "bytes a pair; the lists are the same for any value)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30));
  app.add_flag("--drop-zeros", opt.drop_zeros, "remove entries that cancel to exactly zero");
  app.add_flag("--distributed", opt.distributed,
               "run the distributed product even on one rank (scaling sweeps compare one code path)");
  app.add_flag("--check", opt.check, "verify the product against an independent reference; exit 1 on FAIL");
  app.add_option("--json", opt.json, "write the results as one JSON object to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }

  dist::Communicator comm;
  if (comm.size() > 1 || opt.op == "PtAP" || opt.distributed) return run_distributed(comm, opt);
  TESSERA_REQUIRE_INPUT(opt.whole_reps == 1 && !opt.trace, "--whole-reps and --trace time the distributed product "
                        "(several ranks, --op PtAP or --distributed)");

  Stopwatch load_clock;
  const Csr<double> a = load_matrix(opt.a, "A");
  Csr<double> b;
  if (opt.op == "AA") {
    TESSERA_REQUIRE_INPUT(a.rows == a.cols, "--op AA needs a square A, got ", a.rows, "x", a.cols);
    b = a;
  } else if (opt.op == "AAT") {
    b = ref::transpose(a);
  } else {
    b = load_matrix(opt.b, "B (--op AB)");
  }
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "dimension mismatch: A is ", a.rows, "x", a.cols, " but B is ", b.rows, "x",
                        b.cols);
  const Precision precision = parse_precision(opt.precision);
  const Backend backend = resolve_backend(opt.backend);
  nlohmann::json out = {{"driver", "tessera-spgemm"}, {"op", opt.op}, {"precision", opt.precision},
                        {"backend", to_string(backend)}, {"A_source", opt.a.describe()}};
  std::printf("tessera-spgemm: op %s, precision %s, backend %s, load %.3f s\n", opt.op.c_str(), opt.precision.c_str(),
              to_string(backend), load_clock.seconds());

  int status = 0;
  if (backend == Backend::gpu) {
#if defined(TESSERA_DRIVER_GPU_SPGEMM)
    GpuSpgemmBenchOptions g;
    g.precision = precision;
    g.tensor_cores = opt.path == "tc";
    g.compare_cusparse = opt.compare == "cusparse";
    g.drop_zeros = opt.drop_zeros;
    g.check = opt.check;
    g.reps = opt.reps;
    g.warmup = opt.warmup;
    g.row_batch_nnz = opt.row_batches;
    g.list_batch_bytes = opt.list_batch_mib << 20;
    g.product = product_formula(opt.op);
    out["gpu"] = run_gpu_spgemm_benchmark(a, b, g);
    status = out["gpu"].value("check_pass", true) ? 0 : kExitCheckFailed;
#else
    throw InputError("this build has no GPU SpGEMM yet; use --backend host");
#endif
  } else {
    TESSERA_REQUIRE_INPUT(opt.compare.empty(), "--compare cusparse needs the GPU backend");
    TESSERA_REQUIRE_INPUT(opt.row_batches < 0, "--row-batches needs the GPU backend");
    switch (precision) {
      case Precision::fp64: status = run_host<double>(a, b, opt, out); break;
      case Precision::fp32: status = run_host<float>(a, b, opt, out); break;
      case Precision::fp16: status = run_host<Half>(a, b, opt, out); break;
    }
  }
  if (!opt.json.empty()) write_json(opt.json, out);
  return status;
}

}  // namespace
}  // namespace tessera::driver

int main(int argc, char** argv) { return tessera::driver::run_driver(argc, argv, "tessera-spgemm", tessera::driver::run); }
