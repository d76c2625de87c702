#include "amg/dist/dist_graph_phases.hpp"

#include <utility>

namespace tessera::amg {

DistAggregates host_graph_phases(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                 double theta, SetupTimes& times, DeviceOperatorSlot& /*device_a*/,
                                 dist::DistMatrix* strong_graph) {
  return timed_graph_phases(
      times, [&] { return dist_strength_graph(comm, a, nodes, theta); },
      [&](const dist::DistMatrix& graph) { return dist_aggregate(comm, graph); },
      [&](dist::DistMatrix& graph) {
        if (strong_graph) *strong_graph = std::move(graph);
      });
}

}  // namespace tessera::amg
