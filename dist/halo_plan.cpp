#include "dist/halo_plan.hpp"

#include <algorithm>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::dist {

HaloPlan HaloPlan::build(const Communicator& comm, const RowPartition& owners, const std::vector<std::int64_t>& ghosts) {
  TESSERA_TRACE_STEP("halo_plan.build");
  const int ranks = comm.size(), me = comm.rank();
  std::vector<std::int64_t> request_counts(static_cast<std::size_t>(ranks), 0);
  for (std::int64_t g : ghosts) ++request_counts[owners.owner(g)];
  TESSERA_ASSERT(request_counts[me] == 0, "rank ", me, " lists one of its own indices as a ghost");
  const std::vector<std::int64_t> serve_counts = comm.alltoall(request_counts);
  // Sorted ghosts are grouped by owner already: the requests go out in ghost order.
  const std::vector<std::int64_t> requested = comm.alltoallv(ghosts, request_counts, serve_counts);

  HaloPlan plan;
  for (int q = 0; q < ranks; ++q) {
    if (request_counts[q] > 0) {
      plan.pattern.recv_ranks.push_back(q);
      plan.pattern.recv_offsets.push_back(plan.pattern.recv_offsets.back() + request_counts[q]);
    }
    if (serve_counts[q] > 0) {
      plan.pattern.send_ranks.push_back(q);
      plan.pattern.send_offsets.push_back(plan.pattern.send_offsets.back() + serve_counts[q]);
    }
  }
  plan.send_local.resize(requested.size());
  const std::int64_t first = owners.begin(me);
  for (std::size_t i = 0; i < requested.size(); ++i) {
    TESSERA_ASSERT(owners.owner(requested[i]) == me, "rank ", me, " was asked for index ", requested[i],
                   " it does not own");
    plan.send_local[i] = requested[i] - first;
  }
  return plan;
}

void HaloPlan::pack(const double* owned, std::int64_t item_len, double* send) const {
  for (std::size_t i = 0; i < send_local.size(); ++i)
    std::copy_n(owned + send_local[i] * item_len, item_len, send + static_cast<std::int64_t>(i) * item_len);
}

}  // namespace tessera::dist
