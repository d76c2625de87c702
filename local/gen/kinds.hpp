#pragma once
// One row-range generator per problem family; generators.cpp dispatches on the spec's kind.
// Internal to local/gen (not installed). Each returns rows [begin, end) of its global matrix
// with sorted unique global columns; the range has been checked by the caller.
#include <cstdint>

#include "local/formats/row_block.hpp"

namespace tessera::gen::detail {

/// Grid Laplacians: dim 2 with `points` 5, dim 3 with 7 or 27; Dirichlet boundary. With
/// `convection` c > 0, plus first-order upwind convection along +x: the centre gains c, the
/// west neighbour (x - 1) loses c.
RowBlock stencil_rows(int dim, int points, std::int64_t n, std::int64_t begin, std::int64_t end,
                      double convection = 0.0);

/// Q1 elasticity on n^dim nodes (dim 2: plane strain squares, 3: hexahedra), dim dofs per
/// node, the x = 0 edge or face clamped.
RowBlock elasticity_rows(int dim, std::int64_t n, std::int64_t begin, std::int64_t end);

/// A frame of beams on n^dim nodes, one along every grid edge, of length 1 and a square section of
/// side 1 / slenderness; 6 dofs a node in 3D (ux uy uz rx ry rz), 3 in 2D (ux uy rz); the x = 0
/// edge or face clamped.
RowBlock frame_rows(int dim, std::int64_t n, std::int64_t slenderness, std::int64_t begin, std::int64_t end);

/// R-MAT graph with 2^scale vertices and edge_factor * 2^scale edges.
RowBlock rmat_rows(int scale, std::int64_t edge_factor, std::uint64_t seed, std::int64_t begin, std::int64_t end);

/// Erdos-Renyi n x n with mean_degree entries per row on average.
RowBlock random_rows(std::int64_t n, std::int64_t mean_degree, std::uint64_t seed, std::int64_t begin,
                     std::int64_t end);

/// An empty block of rows [begin, end) of a square `global_rows` matrix, with room reserved
/// for about `entries_per_row` entries per row.
inline RowBlock start_block(std::int64_t global_rows, std::int64_t begin, std::int64_t end,
                            std::int64_t entries_per_row) {
  RowBlock b;
  b.global_rows = b.global_cols = global_rows;
  b.row_begin = begin;
  b.row_end = end;
  b.row_ptr.reserve(static_cast<std::size_t>(end - begin) + 1);
  b.col.reserve(static_cast<std::size_t>((end - begin) * entries_per_row));
  b.values.reserve(static_cast<std::size_t>((end - begin) * entries_per_row));
  return b;
}

}  // namespace tessera::gen::detail
