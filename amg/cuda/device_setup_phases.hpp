#pragma once
// The graph phases of the smoothed-aggregation setup on one GPU, each the device twin of a
// host reference function that it must reproduce exactly (same pattern, same aggregates, same
// numbering; values to rounding):
//   device_strength_graph      <-> amg::strength_graph        (amg/strength.hpp)
//   device_aggregate           <-> amg::aggregate             (amg/aggregation.hpp)
//   device_tentative_prolongator <-> amg::tentative_prolongator (amg/tentative_prolongator.hpp)
// A node is a contiguous range of dofs, given as a device array node_ptr of num_nodes + 1
// offsets (the host NodeLayout uploaded): one dof for scalar problems, 3 for elasticity, up to
// k on coarse levels built from k near-null vectors (fewer for aggregates with fewer dofs than
// k, so coarse layouts need not be uniform). Everything is ordered on `stream`; functions that
// must size an output read one count back (one synchronisation).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// How device_strength_graph formed union_max(S, S^T): from A's entries and their mirrors
/// (scalar nodes, A's pattern symmetric: S u S^T directly, whatever the values), from S's rows
/// and their mirrors (S's pattern symmetric, no sort), or by sorting both directions' edges (the
/// general fallback).
enum class StrengthAssembly { mirrored_entries, mirrored_rows, sorted_union };

/// Strong node graph of A (square; node_ptr covers its rows): num_nodes x num_nodes, sorted
/// rows, no diagonal, symmetric pattern, values = scaled strength (larger direction).
/// `assembly`, when given, receives the path taken (tests check both are exercised). `scale`:
/// the power of two of amg/strength_rule.hpp, where the caller has it (a distributed operator's,
/// over every rank); else strength_scale of A's largest magnitude.
tessera::cuda::DeviceCsr<double> device_strength_graph(const tessera::cuda::DeviceCsr<double>& a,
                                                       const std::int64_t* node_ptr, std::int64_t num_nodes,
                                                       double theta, cudaStream_t stream = nullptr,
                                                       StrengthAssembly* assembly = nullptr,
                                                       std::optional<double> scale = std::nullopt);

/// max |values[i]| over n values (0 for none). Synchronises `stream`.
double device_max_abs(const double* values, std::int64_t n, cudaStream_t stream);

struct DeviceAggregates {
  std::int64_t count = 0;
  tessera::cuda::DeviceBuffer<std::int32_t> of_node;  // aggregate of each node, or -1 (kNotAggregated)
  tessera::cuda::DeviceBuffer<std::int32_t> roots;    // root node of each aggregate, increasing
};

/// MIS-2 roots, root + neighbours, leftovers to their strongest placed neighbour: the host
/// amg::aggregate's three phases and tie-breaks, so of_node equals the host result exactly.
DeviceAggregates device_aggregate(const tessera::cuda::DeviceCsr<double>& graph, cudaStream_t stream = nullptr);

struct DeviceTentativeProlongator {
  tessera::cuda::DeviceCsr<double> p;                    // fine dofs x coarse dofs
  tessera::cuda::DeviceBuffer<double> coarse_vectors;    // coarse dofs x k, row-major
  tessera::cuda::DeviceBuffer<std::int64_t> coarse_nodes;  // node_ptr of the coarse level (aggregates)
  std::int64_t coarse_dofs = 0;
};

/// Per-aggregate thin QR of the near-null space `b` (rows x k, row-major, device) on the
/// aggregate's dofs; the same Q (columns of P_tent), R (coarse vectors) and coarse node layout
/// as the host (R with a non-negative diagonal; min(dofs, k) coarse dofs per aggregate).
/// `node_ptr` is the fine layout the aggregates refer to.
DeviceTentativeProlongator device_tentative_prolongator(const DeviceAggregates& aggregates, const std::int64_t* node_ptr,
                                                        std::int64_t num_nodes, std::int64_t rows, const double* b,
                                                        int k, cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
