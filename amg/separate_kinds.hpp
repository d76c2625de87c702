#pragma once
// A matrix to build the preconditioner from, for systems whose kinds of dof follow different
// directions: A without the couplings between different kinds ("separate displacement
// components"). A node's dofs are interleaved, dof = kinds * node + kind (the generators' layout
// and PETSc's block size). A scalar AMG of the result (block size 1, the constant) coarsens each
// kind by its own couplings, where aggregates of whole nodes must coarsen all kinds alike; the
// Krylov method still iterates on A. On a slender frame (frame2d:N:L, L = 30: each displacement
// 900 times stiffer along its beams than across them) that took 27-36 PCG iterations where the
// rigid-body modes on A took 101-230; on stubby beams (L = 1) the rigid-body modes stay better
// (docs/performance.md, sixty-third session).
#include "local/formats/csr.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::amg {

/// `rows` (any rows of a global matrix) keeping entry (i, j) only where i % kinds == j % kinds,
/// both global indices; the diagonal stays. InputError unless kinds >= 1 divides the global size.
RowBlock without_cross_kind_couplings(const RowBlock& rows, int kinds);

/// The same for a whole matrix.
Csr<double> without_cross_kind_couplings(const Csr<double>& a, int kinds);

}  // namespace tessera::amg
