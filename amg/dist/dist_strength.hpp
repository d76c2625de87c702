#pragma once
// Strength of connection on a distributed operator: the serial rule of amg/strength.hpp
// (||A_IJ|| >= theta sqrt(||A_II|| ||A_JJ||) on node blocks, symmetrised by the larger
// direction) with the same arithmetic, so the graph equals the serial one bit for bit:
//   - a node never spans ranks (its dofs are owned rows of one rank), so a rank computes the
//     block norms of its node rows from its own rows, in global column order as the serial code;
//   - the node id and the diagonal block norm of every ghost column arrive in ONE halo
//     exchange over A's plan (an {id, norm} pair per dof);
//   - the graph is a DistMatrix over the node partition; its transpose (dist::transpose: one
//     all-to-all) supplies the edges kept only in the other direction.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "amg/strength.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"

namespace tessera::amg {

/// This rank's nodes: global nodes [first, first + count()), node n owning the rank-local
/// dofs [ptr[n], ptr[n+1]); `partition` is the node partition over ranks.
struct DistNodes {
  std::int64_t first = 0;
  NodeLayout ptr{0};
  dist::RowPartition partition;
  // Every node's dofs where all this rank's nodes have the same number (scalar problems, the
  // elasticity levels), else 0: the device phases then make ptr on the GPU instead of uploading it.
  std::int64_t dofs_per_node = 0;

  std::int64_t count() const { return static_cast<std::int64_t>(ptr.size()) - 1; }
  /// The node of rank-local dof `dof` (in [0, ptr.back())): a division where every node has
  /// dofs_per_node dofs, else a search of ptr.
  std::int64_t node_of(std::int64_t dof) const {
    if (dofs_per_node > 0) return dof / dofs_per_node;
    return std::upper_bound(ptr.begin(), ptr.end(), dof) - ptr.begin() - 1;
  }
};

/// Collective. Nodes of `block_size` consecutive rows; InputError (every rank) if a rank's row
/// range splits a node.
DistNodes uniform_dist_nodes(const dist::Communicator& comm, const dist::DistMatrix& a, int block_size);

/// Collective. Nodes of the given sizes, in order, on this rank (the coarse nodes: one per
/// owned aggregate), numbered after those of lower ranks.
DistNodes dist_nodes_from_sizes(const dist::Communicator& comm, const std::vector<std::int64_t>& sizes);

/// Collective. strength_scale (amg/strength_rule.hpp) of A's largest magnitude over every rank:
/// the power of two the strength's squares are taken with, so that the graph depends on A only
/// up to scale.
double dist_strength_scale(const dist::Communicator& comm, const dist::DistMatrix& a);

/// Collective. The symmetric strong node graph over nodes.partition (no diagonal; value =
/// scaled strength), equal to strength_graph() of the gathered operator.
dist::DistMatrix dist_strength_graph(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                     double theta);

/// The strong edges between this rank's nodes and other ranks' nodes, both directions merged:
/// the part of dist_strength_graph()'s rows outside its owned x owned block, with the same
/// values. The device graph phases (amg/cuda/dist_device_graph_phases.hpp) compute the owned x
/// owned block on the GPU and take this small boundary part from here. Only the owned nodes
/// with such an edge are listed (a surface of the rank's nodes): rows over every owned node
/// would be an array of the operator's size, made and uploaded for a few boundary entries.
struct CrossRankEdges {
  std::vector<std::int64_t> rows;    // the owned nodes with an edge (this rank's index), increasing
  std::vector<std::int64_t> ptr{0};  // rows[i]'s edges are [ptr[i], ptr[i+1]), never empty
  std::vector<std::int64_t> node;    // the global node at the other end, increasing per row
  std::vector<double> strength;
};

/// Collective: one halo exchange over A's plan (node norms) and one all-to-all (the edges kept
/// in one direction only, transposed to the other end's owner). `scale`: dist_strength_scale(comm,
/// a) where the caller has it (every rank or none), else computed here.
CrossRankEdges cross_rank_strength(const dist::Communicator& comm, const dist::DistMatrix& a, const DistNodes& nodes,
                                   double theta, std::optional<double> scale = std::nullopt);

}  // namespace tessera::amg
