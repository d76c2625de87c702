// write_grid_problem SPEC A.mtx COORDINATES.mtx [MODES.mtx]: a generated grid problem as the
// files a user brings to `tessera-amg --A A.mtx --coordinates COORDINATES.mtx`: A as a Matrix
// Market coordinate file, the nodes' x y (2D grids) or x y z as an array with one row a node (the
// generator gives them a dof; every dof of a node carries its node's). MODES.mtx, if named: the
// rigid-body modes of those coordinates as an array of A's rows, one column a mode (a frame's
// turning its nodes' rotations too), what `tessera-amg --near-null MODES.mtx` reads. Values are
// written with 17 digits, so the files read back to the generator's matrix and coordinates bit
// for bit.
#include <cstdio>
#include <exception>

#include "amg/near_null_space.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"

int main(int argc, char** argv) {
  using namespace tessera;
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s SPEC A.mtx COORDINATES.mtx [MODES.mtx]\n", argv[0]);
    return 2;
  }
  try {
    const gen::ProblemSpec spec = gen::parse_spec(argv[1]);
    const Csr<double> a = gen::generate(spec);
    const int dofs = gen::block_size(spec), dim = gen::dimension(spec);
    const std::vector<double> per_dof = gen::coordinates(spec, 0, a.rows);
    DenseMatrix nodes(a.rows / dofs, dim, Layout::row_major);
    for (std::int64_t n = 0; n < nodes.rows; ++n)
      for (int d = 0; d < dim; ++d) nodes.at(n, d) = per_dof[3 * n * dofs + d];
    io::write_matrix_market(argv[2], a);
    io::write_matrix_market(argv[3], nodes);
    const amg::NodeDofs node_dofs = dofs == dim ? amg::NodeDofs::displacements : amg::NodeDofs::with_rotations;
    if (argc == 5) io::write_matrix_market(argv[4], amg::rigid_body_modes(per_dof, a.rows, dim, node_dofs).vectors);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_grid_problem: %s\n", e.what());
    return 2;
  }
  return 0;
}
