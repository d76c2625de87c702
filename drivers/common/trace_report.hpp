#pragma once
// The step trace (local/core/step_trace.hpp) of every rank, printed by rank 0 as one line per
// step: calls, and the seconds on the fastest rank, the slowest rank and rank by rank. A step
// whose slowest rank spends much more than its fastest is where the ranks wait for each other;
// an `mpi.*` step is time inside MPI (transfer and waiting for the other ranks).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dist/communicator.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::driver {

/// Collective: whether to trace, the same answer on every rank (a rank's own answer could
/// differ when TESSERA_TRACE is set on some ranks only, and the report's collectives would hang):
/// `flag` (--trace) or TESSERA_TRACE on any rank. Leaves the trace off; the caller switches it
/// on around what it measures.
bool agree_on_tracing(const dist::Communicator& comm, bool flag);

/// Collective; prints on rank 0 under `title` and returns the table as JSON (rank 0; null
/// elsewhere): a row a step, with its calls, seconds and host page faults rank by rank.
nlohmann::json report_step_trace(const dist::Communicator& comm, const std::string& title,
                                 const std::vector<trace::StepTotal>& mine);

}  // namespace tessera::driver
