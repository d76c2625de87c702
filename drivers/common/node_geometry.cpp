#include "drivers/common/node_geometry.hpp"

#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"

namespace tessera::driver {

namespace {

/// The coordinates file, checked against A: n x 2 or n x 3, A's rows a whole number of its nodes.
DenseMatrix read_node_coordinates(const std::string& path, std::int64_t rows) {
  DenseMatrix nodes = io::read_matrix_market_dense(path);  // NaN and Inf refused there
  TESSERA_REQUIRE_INPUT(nodes.cols == 2 || nodes.cols == 3, "--coordinates ", path,
                        ": expected one row a node with 2 (x y) or 3 (x y z) columns, got ", nodes.rows, " x ",
                        nodes.cols, " (the rigid-body modes of 2D or 3D elasticity)");
  TESSERA_REQUIRE_INPUT(nodes.rows > 0, "--coordinates ", path, ": the file holds no nodes");
  TESSERA_REQUIRE_INPUT(rows >= nodes.rows && rows % nodes.rows == 0, "--coordinates ", path, ": ", nodes.rows,
                        " nodes, but A's ", rows, " rows are not a whole number of dofs a node");
  return nodes;
}

}  // namespace

NodeGeometry::NodeGeometry(const MatrixSource& a, const NearNullChoice& choice, std::int64_t rows)
    : a_(a), rows_(rows) {
  const bool generated = !a.spec.empty();
  const bool from_file = !choice.coordinates.empty();
  TESSERA_REQUIRE_INPUT(!(from_file && generated), "--coordinates is for a matrix read with --A; --gen ", a.spec,
                        " makes its own grid's coordinates");
  TESSERA_REQUIRE_INPUT(!(from_file && choice.null_space == "constant"),
                        "--coordinates gives the rigid-body near-null space; --null-space constant would ignore them");
  TESSERA_REQUIRE_INPUT(choice.block_size >= 0, "--block-size must be positive, got ", choice.block_size);
  if (from_file) nodes_ = read_node_coordinates(choice.coordinates, rows);
  const int generated_block = generated ? gen::block_size(gen::parse_spec(a.spec)) : 1;
  const int implied = from_file ? static_cast<int>(rows / nodes_.rows) : generated_block;
  TESSERA_REQUIRE_INPUT(!from_file || choice.block_size == 0 || choice.block_size == implied, "--block-size ",
                        choice.block_size, " disagrees with --coordinates: ", rows, " rows over ", nodes_.rows,
                        " nodes are ", implied, " dofs a node");
  block_size_ = choice.block_size ? choice.block_size : implied;
  TESSERA_REQUIRE_INPUT(rows % block_size_ == 0, "A's ", rows, " rows are not whole nodes of block size ", block_size_);

  // The generated grids' coordinates make rigid-body modes for the elasticity kinds (more than
  // one dof a node); a scalar grid keeps its constant.
  const bool has_coordinates = from_file || (generated && generated_block > 1);
  dimension_ = from_file ? static_cast<int>(nodes_.cols) : (generated ? gen::dimension(gen::parse_spec(a.spec)) : 0);
  rigid_body_ = choice.null_space == "rigid-body" || (choice.null_space == "auto" && has_coordinates);
  if (!rigid_body_) return;
  TESSERA_REQUIRE_INPUT(has_coordinates, "--null-space rigid-body needs node coordinates: --coordinates FILE with --A, "
                        "or --gen elasticity2d:N or elasticity3d:N");
  TESSERA_REQUIRE_INPUT(block_size_ == dimension_, "rigid-body modes in ", dimension_, "D need ", dimension_,
                        " dofs a node (the displacements), the block size is ", block_size_);
}

std::vector<double> NodeGeometry::dof_coordinates(std::int64_t begin, std::int64_t end) const {
  TESSERA_ASSERT(rigid_body_ && 0 <= begin && begin <= end && end <= rows_, "dof_coordinates(", begin, ", ", end,
                 ") of ", rows_, " rows");
  if (nodes_.rows == 0) return gen::coordinates(gen::parse_spec(a_.spec), begin, end);
  std::vector<double> xyz;
  xyz.reserve(static_cast<std::size_t>(3 * (end - begin)));
  for (std::int64_t dof = begin; dof < end; ++dof)
    for (int d = 0; d < 3; ++d) xyz.push_back(d < nodes_.cols ? nodes_.at(dof / block_size_, d) : 0.0);
  return xyz;
}

}  // namespace tessera::driver
