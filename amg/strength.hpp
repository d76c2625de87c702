#pragma once
// Strength of connection on the node graph, with symmetric scaling (GAMG, ML):
//   nodes I != J are strongly connected when ||A_IJ|| >= theta * sqrt(||A_II|| ||A_JJ||),
// where a node is a contiguous range of dofs (one dof for scalar problems, 3 for 3D
// elasticity, k for a coarse level built from k near-null vectors) and ||.|| is the
// Frobenius norm of the block (|a_ij| for scalar rows). The graph is made symmetric (an
// edge kept in either direction is kept in both) so the aggregation sees an undirected graph.
#include <cstdint>
#include <vector>

#include "local/formats/csr.hpp"

namespace tessera::amg {

/// Node I owns dofs [node_ptr[I], node_ptr[I+1]).
using NodeLayout = std::vector<std::int64_t>;

/// node_ptr of `rows` dofs grouped `block_size` at a time; InputError unless it divides rows.
NodeLayout uniform_nodes(std::int64_t rows, int block_size);

/// Node of every dof.
std::vector<std::int32_t> node_of_dof(const NodeLayout& nodes);

/// Strong node graph: num_nodes x num_nodes, sorted, no diagonal, symmetric pattern; the value
/// of edge (I, J) is the scaled strength ||A_IJ|| / sqrt(||A_II|| ||A_JJ||) (the larger of the
/// two directions), which the aggregation uses to attach leftover nodes.
Csr<double> strength_graph(const Csr<double>& a, const NodeLayout& nodes, double theta);

}  // namespace tessera::amg
