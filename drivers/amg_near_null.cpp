#include "drivers/amg_near_null.hpp"

#include <algorithm>
#include <cmath>

#include "dist/read_matrix_market.hpp"
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

/// The --near-null file's header, checked against A: an array of A's rows, at least one column.
void check_vectors_file(const std::string& path, std::int64_t rows) {
  const io::MatrixMarketHeader h = io::read_matrix_market_header(path);
  TESSERA_REQUIRE_INPUT(h.format == "array", "--near-null ", path, ": expected a Matrix Market array (one column a ",
                        "vector), got a '", h.format, "' file");
  TESSERA_REQUIRE_INPUT(h.rows == rows && h.cols >= 1, "--near-null ", path, ": ", h.rows, " x ", h.cols,
                        ", expected A's ", rows, " rows and at least one vector");
}

/// R of the Cholesky factorisation G = R^T R of the k x k Gram matrix (row-major); InputError,
/// naming `source` (where the vectors came from) and the first vector whose part outside the
/// span of those before it is under 1e-5 of its norm (a pivot under 1e-10 of its diagonal
/// entry), a zero vector first of all.
std::vector<double> gram_cholesky(const std::vector<double>& gram, int k, const std::string& source) {
  std::vector<double> r(static_cast<std::size_t>(k) * k, 0.0);
  for (int j = 0; j < k; ++j) {
    double pivot = gram[j * k + j];
    for (int i = 0; i < j; ++i) pivot -= r[i * k + j] * r[i * k + j];
    TESSERA_REQUIRE_INPUT(gram[j * k + j] > 0, source, ": vector ", j, " is zero");
    TESSERA_REQUIRE_INPUT(pivot > 1e-10 * gram[j * k + j], source, ": vector ", j,
                          " is a combination of vectors 0..", j - 1, " (its part outside their span is ",
                          std::sqrt(std::max(pivot, 0.0) / gram[j * k + j]),
                          " of its norm): drop it, it adds coarse unknowns that interpolate nothing");
    r[j * k + j] = std::sqrt(pivot);
    for (int c = j + 1; c < k; ++c) {
      double s = gram[j * k + c];
      for (int i = 0; i < j; ++i) s -= r[i * k + j] * r[i * k + c];
      r[j * k + c] = s / r[j * k + j];
    }
  }
  return r;
}

/// B R^-1 row by row (forward substitution with R^T): columns orthonormal over all ranks.
DenseMatrix orthonormalised(const DenseMatrix& b, const std::vector<double>& r) {
  const std::int64_t k = b.cols;
  DenseMatrix q(b.rows, k, Layout::row_major);
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      double s = b.at(i, j);
      for (std::int64_t c = 0; c < j; ++c) s -= q.at(i, c) * r[c * k + j];
      q.at(i, j) = s / r[j * k + j];
    }
  return q;
}

/// Each column of B divided by its largest magnitude over all ranks (a zero column stays zero):
/// the same span, and no vector of any finite size can overflow or underflow the squares that
/// a Gram matrix or an aggregate's QR sums.
DenseMatrix scaled_by_largest(const dist::Communicator& comm, const DenseMatrix& b) {
  const std::int64_t k = b.cols;
  std::vector<double> largest(static_cast<std::size_t>(k), 0.0);
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t j = 0; j < k; ++j) largest[j] = std::max(largest[j], std::abs(b.at(i, j)));
  comm.allreduce_in_place(largest, dist::ReduceOp::max);
  DenseMatrix scaled(b.rows, k, Layout::row_major);
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t j = 0; j < k; ++j) scaled.at(i, j) = largest[j] > 0 ? b.at(i, j) / largest[j] : 0.0;
  return scaled;
}

/// The rank's rows of B's columns made orthonormal over all ranks, their independence checked
/// on the way (every rank factors the same summed Gram matrix, so they agree on a refusal).
DenseMatrix orthonormal_over_ranks(const dist::Communicator& comm, const DenseMatrix& b, const std::string& source) {
  const int k = static_cast<int>(b.cols);
  std::vector<double> gram(static_cast<std::size_t>(k) * k, 0.0);
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q) gram[p * k + q] += b.at(i, p) * b.at(i, q);
  comm.allreduce_in_place(gram, dist::ReduceOp::sum);
  return orthonormalised(b, gram_cholesky(gram, k, source));
}

}  // namespace

NearNullSource::NearNullSource(const MatrixSource& a, const NearNullChoice& choice, std::int64_t rows)
    : a_(a), vectors_file_(choice.vectors), rows_(rows) {
  const bool generated = !a.spec.empty();
  const bool from_file = !choice.coordinates.empty();
  const bool given = !choice.vectors.empty();
  TESSERA_REQUIRE_INPUT(!(from_file && generated), "--coordinates is for a matrix read with --A; --gen ", a.spec,
                        " makes its own grid's coordinates");
  TESSERA_REQUIRE_INPUT(!(from_file && choice.null_space == "constant"),
                        "--coordinates gives the rigid-body near-null space; --null-space constant would ignore them");
  TESSERA_REQUIRE_INPUT(!(given && from_file), "--near-null gives the near-null vectors themselves; --coordinates "
                        "would make others (the rigid-body modes): give one of them");
  TESSERA_REQUIRE_INPUT(!(given && choice.null_space != "auto"), "--near-null gives the near-null vectors "
                        "themselves; --null-space ", choice.null_space, " would make others");
  TESSERA_REQUIRE_INPUT(choice.block_size >= 0, "--block-size must be positive, got ", choice.block_size);
  if (from_file) nodes_ = read_node_coordinates(choice.coordinates, rows);
  if (given) check_vectors_file(choice.vectors, rows);
  const int generated_block = generated ? gen::block_size(gen::parse_spec(a.spec)) : 1;
  const int implied = from_file ? static_cast<int>(rows / nodes_.rows) : generated_block;
  TESSERA_REQUIRE_INPUT(!from_file || choice.block_size == 0 || choice.block_size == implied, "--block-size ",
                        choice.block_size, " disagrees with --coordinates: ", rows, " rows over ", nodes_.rows,
                        " nodes are ", implied, " dofs a node");
  block_size_ = choice.block_size ? choice.block_size : implied;
  TESSERA_REQUIRE_INPUT(rows % block_size_ == 0, "A's ", rows, " rows are not whole nodes of block size ", block_size_);
  if (given) {
    kind_ = Kind::vectors;
    return;
  }

  // The generated grids' coordinates make rigid-body modes for the elasticity kinds (more than
  // one dof a node); a scalar grid keeps its constant.
  const bool has_coordinates = from_file || (generated && generated_block > 1);
  const bool rigid_body = choice.null_space == "rigid-body" || (choice.null_space == "auto" && has_coordinates);
  if (!rigid_body) return;
  kind_ = Kind::rigid_body;
  dimension_ = from_file ? static_cast<int>(nodes_.cols) : (generated ? gen::dimension(gen::parse_spec(a.spec)) : 0);
  TESSERA_REQUIRE_INPUT(has_coordinates, "--null-space rigid-body needs node coordinates: --coordinates FILE with --A, "
                        "or --gen elasticity2d:N, elasticity3d:N, frame2d:N or frame3d:N");
  // A solid's nodes carry their displacements; a frame's or shell's their rotations too (GAMG's
  // rule for PCSetCoordinates: the block size says which).
  const bool rotations = block_size_ == amg::rigid_body_mode_count(dimension_) && block_size_ != dimension_;
  TESSERA_REQUIRE_INPUT(block_size_ == dimension_ || rotations, "rigid-body modes in ", dimension_, "D need ",
                        dimension_, " dofs a node (the displacements) or ", amg::rigid_body_mode_count(dimension_),
                        " (the displacements and rotations), the block size is ", block_size_);
  node_dofs_ = rotations ? amg::NodeDofs::with_rotations : amg::NodeDofs::displacements;
}

std::string NearNullSource::describe() const {
  switch (kind_) {
    case Kind::constant:
      return block_size_ == 1 ? "the constant vector" : "one constant a component";
    case Kind::rigid_body:
      return detail::concat("rigid-body modes of ", nodes_.rows == 0 ? "the grid's nodes" : "the --coordinates nodes",
                            node_dofs_ == amg::NodeDofs::with_rotations ? ", their rotations too" : "");
    case Kind::vectors:
      return "the vectors of --near-null " + vectors_file_;
  }
  return "";
}

std::vector<double> NearNullSource::dof_coordinates(std::int64_t begin, std::int64_t end) const {
  TESSERA_ASSERT(kind_ == Kind::rigid_body && 0 <= begin && begin <= end && end <= rows_, "dof_coordinates(", begin,
                 ", ", end, ") of ", rows_, " rows");
  if (nodes_.rows == 0) return gen::coordinates(gen::parse_spec(a_.spec), begin, end);
  std::vector<double> xyz;
  xyz.reserve(static_cast<std::size_t>(3 * (end - begin)));
  for (std::int64_t dof = begin; dof < end; ++dof)
    for (int d = 0; d < 3; ++d) xyz.push_back(d < nodes_.cols ? nodes_.at(dof / block_size_, d) : 0.0);
  return xyz;
}

DenseMatrix NearNullSource::vectors(const dist::Communicator& comm, std::int64_t begin, std::int64_t end) const {
  TESSERA_ASSERT(kind_ == Kind::vectors && 0 <= begin && begin <= end && end <= rows_, "vectors(", begin, ", ", end,
                 ") of ", rows_, " rows");
  const DenseMatrix columns = dist::read_matrix_market_dense_rows(comm, vectors_file_, begin, end);  // NaN refused
  DenseMatrix rows(columns.rows, columns.cols, Layout::row_major);
  for (std::int64_t i = 0; i < columns.rows; ++i)
    for (std::int64_t j = 0; j < columns.cols; ++j) rows.at(i, j) = columns.at(i, j);
  return rows;
}

OwnedNearNull owned_near_null(const dist::Communicator& comm, const NearNullSource& source, std::int64_t begin,
                              std::int64_t end) {
  OwnedNearNull out;
  const std::int64_t owned = end - begin;
  switch (source.kind()) {
    case NearNullSource::Kind::constant:
      out.space = amg::constant_near_null_space(owned, source.block_size());
      break;
    case NearNullSource::Kind::rigid_body: {
      out.coordinates = source.dof_coordinates(begin, end);
      std::vector<double> sums(4, 0.0);  // the global centroid (x y z) and the row count
      for (std::size_t i = 0; i < out.coordinates.size(); ++i) sums[i % 3] += out.coordinates[i];
      sums[3] = static_cast<double>(owned);
      comm.allreduce_in_place(sums, dist::ReduceOp::sum);
      const double n = std::max(1.0, sums[3]);
      out.space = amg::rigid_body_modes(out.coordinates, owned, source.dimension(),
                                        {sums[0] / n, sums[1] / n, sums[2] / n}, source.node_dofs());
      // MatNullSpaceCreateRigidBody, which the GAMG baseline makes its modes with from coordinates,
      // knows no rotation dofs: GAMG gets these modes as vectors instead.
      if (source.node_dofs() == amg::NodeDofs::with_rotations) {
        out.orthonormal = orthonormal_over_ranks(comm, out.space.vectors, "the rigid-body modes");
        out.coordinates.clear();
      }
      break;
    }
    case NearNullSource::Kind::vectors:
      out.space = amg::NearNullSpace{scaled_by_largest(comm, source.vectors(comm, begin, end)), source.block_size()};
      out.orthonormal = orthonormal_over_ranks(comm, out.space.vectors, "--near-null " + source.vectors_file());
      break;
  }
  return out;
}

}  // namespace tessera::driver
