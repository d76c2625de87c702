#include "amg/dist/dist_graph_phases.hpp"

#include <chrono>

namespace tessera::amg {

DistAggregates host_graph_phases(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                 double theta, SetupTimes& times) {
  using clock = std::chrono::steady_clock;
  const clock::time_point t0 = clock::now();
  const dist::DistMatrix graph = dist_strength_graph(comm, a, nodes, theta);
  const clock::time_point t1 = clock::now();
  DistAggregates aggregates = dist_aggregate(comm, graph);
  times.strength += std::chrono::duration<double>(t1 - t0).count();
  times.aggregation += std::chrono::duration<double>(clock::now() - t1).count();
  return aggregates;
}

}  // namespace tessera::amg
