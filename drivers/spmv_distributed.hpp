#pragma once
// The distributed mode of tessera-spmv and tessera-spmm (several ranks, or --distributed on
// one): each rank generates or reads only its rows, x (or X) is filled from the GLOBAL row
// index so every rank count multiplies the same vectors, the product runs through
// dist::gpu::spmv / spmm (one GPU per rank, NCCL halo exchange overlapped with the local
// block; --backend gpu, or auto when every rank has a GPU) or dist::spmv / spmm on the host
// backend, and --check gathers A and y to rank 0 and compares with the serial reference.
// --compare cusparse (GPU) times cuSPARSE and Tessera's kernel on each rank's local block.
// --halo both (GPU) times the NCCL and the peer halo routes side by side on the same data, one
// product at a time and as a stream of back-to-back products, and requires identical results.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "dist/communicator.hpp"
#include "drivers/common/matrix_source.hpp"

namespace tessera::driver {

struct DistributedSpmvOptions {
  MatrixSource a;
  std::string partition = "rows";        // rows | nnz
  std::string backend = "auto";          // auto: the GPUs if every rank has one (else host); host; gpu
  std::string precision = "fp64";        // the distributed blocks hold doubles: fp64 only
  std::string compare;                   // empty, or cusparse (GPU: each rank's local block)
  bool sweep = false;                    // GPU-only option: refused
  bool multi_vector = false;             // false: y = A x (dist::spmv); true: Y = A X (dist::spmm)
  std::int64_t k = 1;                    // columns of X (multi_vector only)
  bool column_major_requested = false;   // --layout col: reported; dist::spmm stores X row-major
  int reps = 20, warmup = 3;
  bool check = false;
  std::string halo = "auto";             // GPU halo route: auto | nccl | peer | both (compare the two)
};

/// The value of x(row, col) for global row `row` of X with k columns: uniform in [-1, 1), a
/// pure function of (row, col, k), so results do not depend on the number of ranks.
double distributed_fill_value(std::int64_t row, std::int64_t col, std::int64_t k);

/// Collective. Prints on rank 0, fills `out` (meaningful on rank 0) and returns the exit
/// status, the same on every rank: 0, or kExitCheckFailed. Bad options are an InputError
/// thrown on every rank.
int run_distributed_spmv(const dist::Communicator& comm, const DistributedSpmvOptions& options, nlohmann::json& out);

}  // namespace tessera::driver
