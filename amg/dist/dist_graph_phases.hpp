#pragma once
// The graph phases of one level of the distributed setup -- the strong node graph of the level's
// operator, then its aggregates -- as one replaceable step of DistHierarchy: the host's
// (dist_strength_graph, then dist_aggregate) by default, the ranks' GPUs' with the GPU backend
// (amg::gpu::device_graph_phases, amg/cuda/dist_device_graph_phases.hpp). Every version returns
// the same aggregates, numbered alike.
#include <functional>

#include "amg/dist/dist_aggregation.hpp"
#include "amg/dist/dist_strength.hpp"
#include "amg/hierarchy.hpp"

namespace tessera::amg {

/// Collective. Aggregates of `a`'s strong node graph (threshold theta); the wall time of each
/// phase is added to times.strength and times.aggregation.
using DistGraphPhases = std::function<DistAggregates(const dist::Communicator& comm, const dist::DistMatrix& a,
                                                     const DistNodes& nodes, double theta, SetupTimes& times)>;

/// The host's: dist_strength_graph, then dist_aggregate.
DistAggregates host_graph_phases(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                 double theta, SetupTimes& times);

}  // namespace tessera::amg
