#pragma once
// The graph phases of one level of the distributed setup -- the strong node graph of the level's
// operator, then its aggregates -- as one replaceable step of DistHierarchy: the host's
// (dist_strength_graph, then dist_aggregate) by default, the ranks' GPUs' with the GPU backend
// (amg::gpu::device_graph_phases, amg/cuda/dist_device_graph_phases.hpp). Every version returns
// the same aggregates, numbered alike. The GPU version leaves the level's A on the device in
// `device_a` (device_operator_slot.hpp) for the phases after it; the host version ignores it.
// Where the caller asks (filtered prolongator smoothing: dist_filtered_operator.hpp), either
// hands the strong node graph over too, in dist_strength_graph's host form.
#include <chrono>
#include <functional>
#include <utility>

#include "amg/dist/dist_aggregation.hpp"
#include "amg/dist/device_operator_slot.hpp"
#include "amg/dist/dist_strength.hpp"
#include "amg/hierarchy.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::amg {

/// Collective. Aggregates of `a`'s strong node graph (threshold theta); the wall time of each
/// phase is added to times.strength and times.aggregation. `device_a` is the level's slot for
/// A's device copy. `strong_graph`: where not null, receives the graph (dist_strength_graph's).
using DistGraphPhases =
    std::function<DistAggregates(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                 double theta, SetupTimes& times, DeviceOperatorSlot& device_a,
                                 dist::DistMatrix* strong_graph)>;

/// Both versions' skeleton: graph = strength(), then aggregate(graph), then hand_over(graph)
/// (which gives a caller who asked the graph in host form); the wall time of strength and
/// hand-over is added to times.strength, aggregation's to times.aggregation.
template <class Strength, class Aggregate, class HandOver>
DistAggregates timed_graph_phases(SetupTimes& times, Strength&& strength, Aggregate&& aggregate,
                                  HandOver&& hand_over) {
  using clock = std::chrono::steady_clock;
  const clock::time_point t0 = clock::now();
  auto graph = [&] {
    TESSERA_TRACE_STEP("strength");
    return strength();
  }();
  const clock::time_point t1 = clock::now();
  DistAggregates aggregates = [&] {
    TESSERA_TRACE_STEP("aggregation");
    return aggregate(std::as_const(graph));
  }();
  const clock::time_point t2 = clock::now();
  {
    TESSERA_TRACE_STEP("strength_graph_hand_over");
    hand_over(graph);
  }
  times.strength += std::chrono::duration<double>(t1 - t0).count() +
                    std::chrono::duration<double>(clock::now() - t2).count();
  times.aggregation += std::chrono::duration<double>(t2 - t1).count();
  return aggregates;
}

/// The host's: dist_strength_graph, then dist_aggregate (`device_a` is left as it is).
DistAggregates host_graph_phases(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                 double theta, SetupTimes& times, DeviceOperatorSlot& device_a,
                                 dist::DistMatrix* strong_graph);

}  // namespace tessera::amg
