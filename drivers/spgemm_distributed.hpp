#pragma once
// The distributed mode of tessera-spgemm (several ranks, or --op PtAP): each rank generates or
// reads its rows, the product runs through dist::DistSpgemm / dist::DistPtap, and --check
// gathers the operands and the result to rank 0 and compares with the serial reference.
// Backend gpu: the rank-local products run on the rank's GPU (dist::device_local_spgemm with
// the tile SpGEMM); compare "cusparse" runs the same distributed product again with cuSPARSE
// local products and prints both times and their ratio.
#include <string>

#include <nlohmann/json.hpp>

#include "dist/communicator.hpp"
#include "local/core/backend.hpp"
#include "drivers/common/matrix_source.hpp"

namespace tessera::driver {

struct DistributedSpgemmOptions {
  MatrixSource a, b, p;          // b for --op AB, p for --op PtAP (else a simple aggregation P)
  std::string op = "AA";         // AA | AB | AAT | PtAP
  std::string partition = "rows";
  int reps = 3;                  // numeric-only recomputations timed after the first product
  int whole_reps = 1;            // whole products (symbolic + numeric) timed; the median is reported
  bool trace = false;            // print the host step trace of the last whole product
  bool check = false;
  Backend backend = Backend::host;  // gpu: local products on the rank's GPU (tile SpGEMM)
  std::string compare;              // "" or "cusparse" (gpu only): a second run, cuSPARSE local products
  int warmup = 1;                   // gpu: untimed products first (context, cuSPARSE handle, allocator)
};

/// Collective. Returns the exit status (0, or kExitCheckFailed) and fills `out` on rank 0.
int run_distributed_spgemm(const dist::Communicator& comm, const DistributedSpgemmOptions& options, nlohmann::json& out);

}  // namespace tessera::driver
