#pragma once
// Generated problems, described by spec strings:
//   poisson2d:N       5-point Laplacian on an N x N grid            (N^2 rows)
//   poisson3d:N       7-point Laplacian on an N^3 grid               (N^3 rows)
//   poisson3d27:N     27-point Laplacian on an N^3 grid              (N^3 rows)
//   convdiff3d:N      poisson3d plus first-order upwind convection along +x of strength
//                     kConvdiffConvection: non-symmetric (the FGMRES problem)  (N^3 rows)
//   elasticity2d:N    Q1 plane-strain linear elasticity, N^2 nodes, 2 dofs each (2 N^2 rows)
//   elasticity3d:N    Q1 hexahedral linear elasticity, N^3 nodes, 3 dofs each (3 N^3 rows)
//   frame2d:N[:L]     plane frame of beams along the grid edges, N^2 nodes, 3 dofs each (ux uy
//                     rz: 3 N^2 rows); L the beams' slenderness (length 1 over the side of their
//                     square section), 10 if left out: bending is L^2 times softer than stretching
//   frame3d:N[:L]     space frame of beams along the grid edges, N^3 nodes, 6 dofs each (ux uy
//                     uz rx ry rz, as a shell's: 6 N^3 rows); L as for frame2d
//   rmat:S:E          R-MAT power-law graph, 2^S vertices, E*2^S edges, seeded
//   random:N:D        Erdos-Renyi N x N, D entries per row on average, seeded
// Optional trailing ":seed=K" for the random kinds. Every generator is row-range based: any
// rank can generate just rows [begin, end) and gets exactly those rows of the global matrix.
// Grids use unit spacing and lexicographic node order (x fastest); the Laplacians drop
// neighbours outside the grid (Dirichlet). The elasticity and frame kinds (E = 1, nu = 0.3) clamp
// the x = 0 edge or face by identity rows/columns, so they are SPD. rmat draws every edge to find a
// range's rows (cost O(E 2^S S) per call); it sums duplicate edges and keeps self-loops.
#include <cstdint>
#include <string>
#include <vector>

#include "local/formats/csr.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::gen {

/// convdiff3d's convection coefficient c (unit spacing, unit diffusion): row i holds 6 + c on
/// the diagonal and -1 - c for its x - 1 neighbour, -1 for the others; a cell Peclet number of
/// c / 2 = 1, where centred differences would start to oscillate.
inline constexpr double kConvdiffConvection = 2.0;

struct ProblemSpec {
  std::string kind;                 // "poisson3d", ...
  std::vector<std::int64_t> params; // the numbers after the kind (a frame's slenderness filled in)
  std::uint64_t seed = 1;
  std::string text;                 // the original spec string
};

/// Parses a spec string; InputError with the accepted forms on anything else.
ProblemSpec parse_spec(const std::string& text);

std::int64_t num_rows(const ProblemSpec& spec);
std::int64_t num_cols(const ProblemSpec& spec);

/// Rows [begin, end) of the problem's matrix.
RowBlock generate_rows(const ProblemSpec& spec, std::int64_t begin, std::int64_t end);

/// The whole matrix.
Csr<double> generate(const ProblemSpec& spec);

/// Node coordinates (x, y, z per row, so 3 doubles per row; z = 0 on the 2D grids) of rows
/// [begin, end) for the grid problems (the elasticity rigid-body modes are built from them);
/// InputError for graph problems, which have no geometry.
std::vector<double> coordinates(const ProblemSpec& spec, std::int64_t begin, std::int64_t end);

/// Unknowns per grid node (2 for elasticity2d, 3 for elasticity3d and frame2d, 6 for frame3d,
/// else 1).
int block_size(const ProblemSpec& spec);

/// The grid's spatial dimension (2 or 3); 0 for the graph problems.
int dimension(const ProblemSpec& spec);

/// Whether the kind's matrices are symmetric (the Laplacians, elasticity and frames are, exactly;
/// convdiff3d, rmat and random are not): a solver choice without a pass over the matrix.
bool is_symmetric(const ProblemSpec& spec);

}  // namespace tessera::gen
