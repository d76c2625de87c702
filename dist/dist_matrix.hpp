#pragma once
// DistMatrix: a row-partitioned sparse matrix. Rank r owns global rows
// [row_partition.begin(r), row_partition.end(r)) stored as two host Csr blocks (PETSc's
// diag/offdiag, Ginkgo's local/non-local):
//   local     owned rows x owned columns   column j <-> global column col_begin() + j
//   nonlocal  owned rows x ghost columns   column g <-> global column ghost_cols[g]
// ghost_cols is sorted, so within a row, global column order is: ghosts left of the owned
// range, owned columns, ghosts right of it ("row order", used by packing and value refresh).
// Both blocks convert to the tile format with to_tiles(). The column partition is the row
// partition for square operators and its own partition for rectangular ones (e.g. P).
// Global indices are int64 throughout; the blocks' int32 columns are rank-local.
#include <cstdint>
#include <string>
#include <vector>

#include "dist/halo_plan.hpp"
#include "dist/partition.hpp"
#include "local/formats/csr.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::dist {

class Communicator;

struct DistMatrix {
  RowPartition row_partition;
  RowPartition col_partition;
  int rank = 0;
  Csr<double> local;
  Csr<double> nonlocal;
  std::vector<std::int64_t> ghost_cols;
  HaloPlan halo;  // brings x[ghost_cols] for products; built once at assembly

  std::int64_t global_rows() const { return row_partition.global_rows(); }
  std::int64_t global_cols() const { return col_partition.global_rows(); }
  std::int64_t row_begin() const { return row_partition.begin(rank); }
  std::int64_t col_begin() const { return col_partition.begin(rank); }
  std::int64_t owned_rows() const { return local.rows; }
  std::int64_t nnz() const { return local.nnz() + nonlocal.nnz(); }
};

/// Collective. `rows` holds exactly this rank's rows under `row_partition` (what
/// gen::generate_rows and io::read_matrix_market_rows return for that range); columns are split
/// into owned and ghost by `col_partition`. Any rank's bad input (wrong row range or sizes,
/// unsorted or out-of-range columns) throws the same InputError on every rank.
DistMatrix assemble(const Communicator& comm, const RowBlock& rows, const RowPartition& row_partition,
                    const RowPartition& col_partition);
/// Why `b` (`rows` rows over the compact columns `global_of` of a `global_cols`-column matrix)
/// is not a rank-local product assemble_compact accepts: shapes, an increasing column map,
/// sorted in-range rows. Empty if it is. Local (no communication).
std::string compact_block_error(const Csr<double>& b, const std::vector<std::int64_t>& global_of, std::int64_t rows,
                                std::int64_t global_cols);
/// Collective. As assemble(), for rows whose columns index `global_of` (sorted, unique global
/// columns): the compact output of a rank-local product, split without a detour through
/// global indices; `rows`' storage becomes the local block (move it in). Ghosts are the outside
/// columns some entry uses.
DistMatrix assemble_compact(const Communicator& comm, Csr<double> rows,
                            const std::vector<std::int64_t>& global_of, const RowPartition& row_partition,
                            const RowPartition& col_partition);
/// Collective. As assemble(), from blocks already split the way a DistMatrix stores them (PETSc's
/// MPIAIJ diagonal and off-diagonal blocks with its garray): `local` over this rank's columns of
/// `col_partition`, `nonlocal` over `ghost_cols` (increasing global columns owned by other
/// ranks), both moved in. Ghosts that no entry uses are dropped and the non-local columns
/// renumbered, so the result is assemble()'s for the same rows. Any rank's bad blocks (shapes,
/// unsorted or out-of-range columns, ghosts not increasing or inside the owned range) throw the
/// same InputError on every rank.
DistMatrix assemble_blocks(const Communicator& comm, Csr<double> local, Csr<double> nonlocal,
                           std::vector<std::int64_t> ghost_cols, const RowPartition& row_partition,
                           const RowPartition& col_partition);
/// Square operator: columns partitioned like rows.
DistMatrix assemble(const Communicator& comm, const RowBlock& rows, const RowPartition& row_partition);

/// This rank's rows with global columns (the inverse of assemble).
RowBlock owned_row_block(const DistMatrix& a);

/// Stored values in row order (global column order within each row).
HostArray<double> values_in_row_order(const DistMatrix& a);
/// The same into out[0, a.nnz()) (no temporary).
void copy_values_in_row_order(const DistMatrix& a, double* out);
/// Row order of one owned row r: the position of its first entry among all entries; its global
/// columns and/or values appended (a null vector is skipped).
std::int64_t row_order_offset(const DistMatrix& a, std::int64_t r);
void append_row_in_row_order(const DistMatrix& a, std::int64_t r, std::vector<std::int64_t>* cols,
                             std::vector<double>* values);
/// Numeric refresh: new values for the same pattern, in row order (`count` of them, which must
/// be a.nnz()).
void set_values_in_row_order(DistMatrix& a, const double* values, std::int64_t count);
template <class Allocator>
void set_values_in_row_order(DistMatrix& a, const std::vector<double, Allocator>& values) {
  set_values_in_row_order(a, values.data(), static_cast<std::int64_t>(values.size()));
}

/// The owned rows as one rank-local Csr over columns [owned columns | ghost columns]: owned
/// column j stays j, ghost g becomes local.cols + g (each row stays sorted). This is the operand
/// the local kernels of SpGEMM/PtAP see (its device twin: dist/cuda/device_extended_block.hpp).
Csr<double> extended_block(const DistMatrix& a);
/// Refills the values of extended_block(a) after a value refresh of `a`.
void fill_extended_values(const DistMatrix& a, Csr<double>& extended);

/// Collective. The whole matrix at `root` (an empty Csr elsewhere); for checks and small
/// problems only (global columns must fit int32).
Csr<double> gather(const Communicator& comm, const DistMatrix& a, int root = 0);

}  // namespace tessera::dist
