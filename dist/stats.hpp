#pragma once
// Per-rank work and traffic of the distributed ops, and their reduction over ranks (what the
// drivers print: per-rank values, totals, and the load imbalance max/mean).
#include <cstdint>
#include <vector>

namespace tessera::dist {

class Communicator;

struct DistStats {
  std::int64_t rows = 0;              // owned rows of the operand/result
  std::int64_t nnz = 0;               // owned stored entries
  std::int64_t halo_bytes = 0;        // ghost vector entries received (SpMV/SpMM)
  std::int64_t remote_row_bytes = 0;  // remote matrix rows received (SpGEMM, PtAP, transpose)
  double exchange_seconds = 0;        // time spent waiting for or driving communication
  double compute_seconds = 0;         // local multiplies

  DistStats& operator+=(const DistStats& o);
};

struct StatsSummary {
  DistStats total;  // sums over ranks (seconds: sums too)
  DistStats max;    // maxima over ranks
  double rows_imbalance = 1, nnz_imbalance = 1, compute_imbalance = 1;  // max/mean (1 = perfect)
};

/// Collective.
StatsSummary summarize(const Communicator& comm, const DistStats& mine);
/// Collective: every rank's statistics at `root` (empty elsewhere), for per-rank tables.
std::vector<DistStats> gather_stats(const Communicator& comm, const DistStats& mine, int root = 0);

}  // namespace tessera::dist
