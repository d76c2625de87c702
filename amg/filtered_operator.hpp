#pragma once
// The filtered operator of prolongator smoothing (Vanek, Mandel, Brezina 1996; ML's and MueLu's
// "filtered matrix"): P = (I - omega D^-1 A_F) P_tent instead of (I - omega D^-1 A) P_tent, where
//   A_F keeps the entries of A inside a node's diagonal block and between strongly connected
//   nodes (the strength graph of the level), and adds every other entry of a row to the row's
//   diagonal, so that A_F's row sums are A's (A_F times a constant is A times it).
// D stays diag(A) (positive for the operators a setup accepts, while a lumped diagonal need not
// be) and omega = 4 / (3 lambda_max(D^-1 A_F)) from an estimate of A_F's own.
//
// Why: P's pattern is pattern(P_tent) ∪ pattern(A P_tent). Where the strength graph drops many
// entries (an anisotropic operator; a frame's operator with its kinds of dof separated, where the
// weak axial-bending couplings survive), A P_tent reaches along the weak couplings too, and P
// and every coarse operator fill in for nothing: frame3d:24:30 separated, operator complexity
// 4.30 with A, 1.56 with A_F, at 42 against 43 iterations (docs/performance.md, sixty-fifth
// session). Where the graph keeps every entry, A_F is A and filtered_operator() says so
// (nullopt): the hierarchy is the unfiltered one, at no cost.
//
// The pattern of A_F and the map from A's entries into it are fixed by the setup's strength
// graph; a re-setup (new values, same pattern) refreshes the values through the map, as the
// aggregates are kept.
#include <cstdint>
#include <optional>
#include <vector>

#include "amg/strength.hpp"
#include "local/formats/csr.hpp"

namespace tessera::amg {

struct FilteredOperator {
  Csr<double> a;  // A_F (values as of the last refresh_filtered_values)
  // Entry p of A (in A's CSR order) is added into entry target[p] of A_F: itself where kept,
  // its row's diagonal where dropped.
  std::vector<std::int64_t> target;
};

/// A_F's pattern and map (values zero) for `a`, whose dofs form `nodes`, and `graph`, the strong
/// node graph of strength_graph(a, nodes, theta). nullopt when no entry is dropped (A_F = A).
/// Every row of `a` must hold its diagonal (a setup's operators do: check_operator).
std::optional<FilteredOperator> filtered_operator(const Csr<double>& a, const NodeLayout& nodes,
                                                  const Csr<double>& graph);

/// A_F's values from `a` (the pattern filtered_operator saw): each entry of A, in A's order,
/// added into its target, from zero. The device refresh adds in the same order (bit-equal).
void refresh_filtered_values(const Csr<double>& a, FilteredOperator& f);

}  // namespace tessera::amg
