#pragma once
// Per-rank and total statistics of a distributed operation, printed by rank 0 and returned as
// JSON: rows, nnz, halo and remote-row bytes, exchange vs compute time, load imbalance.
#include <string>

#include <nlohmann/json.hpp>

#include "dist/communicator.hpp"
#include "dist/stats.hpp"

namespace tessera::driver {

/// Collective; prints on rank 0 (a table with one line per rank, then totals and max/mean).
nlohmann::json report_dist_stats(const dist::Communicator& comm, const std::string& what, const dist::DistStats& mine);

}  // namespace tessera::driver
