// PCTESSERA's readers of a PETSc operator (amg/petsc/petsc_operator.hpp) against MatGetRow, the
// reference: the rows read in place from PETSc's arrays (stored_aij_rows.hpp: seqaij, mpiaij
// and types derived from them) and the row-by-row fallback (baij) must give the same columns and
// bitwise the same values, on random matrices whose row and column ownership ranges differ,
// with empty rows, rows with only ghost columns, ranks owning no rows, and 1x1 and empty
// matrices. Then the re-setup reader: the same pattern gives the new values, a changed pattern
// (on one rank) false there. The DistMatrix the distributed hierarchy reads (read_dist_matrix:
// PETSc's diagonal and off-diagonal blocks copied as they are) must equal the assembly of
// MatGetRow's rows, also after MatZeroRows left garray with ghosts no entry uses; its re-setup
// refresh (refresh_values_if_same_pattern) takes new values, and refuses a new entry on one
// rank on every rank. And the one-GPU hierarchy's reader (whole_matrix_arrays.hpp): on a
// rank that owns every row, the whole matrix's arrays as MatGetRow gives it (PETSc's own where
// they are read in place on one rank), refused on any other rank. Every rank prints its checks;
// the exit code is non-zero if any rank failed one.
#include <petscmat.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "amg/petsc/petsc_operator.hpp"
#include "amg/petsc/stored_aij_rows.hpp"
#include "amg/petsc/whole_matrix_arrays.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"

namespace {

using tessera::RowBlock;

int checks = 0, failures = 0;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  ++failures;
  std::printf("[rank %d] FAIL: %s\n", PetscGlobalRank, what.c_str());
}

/// This rank's rows as MatGetRow returns them: the reference.
RowBlock rows_by_get_row(Mat a) {
  RowBlock r;
  PetscInt begin = 0, end = 0;
  MatGetOwnershipRange(a, &begin, &end);
  r.row_begin = begin;
  r.row_end = end;
  for (PetscInt i = begin; i < end; ++i) {
    PetscInt n = 0;
    const PetscInt* cols = nullptr;
    const PetscScalar* vals = nullptr;
    MatGetRow(a, i, &n, &cols, &vals);
    for (PetscInt k = 0; k < n; ++k) {
      r.col.push_back(cols[k]);
      r.values.push_back(PetscRealPart(vals[k]));
    }
    r.row_ptr.push_back(static_cast<std::int64_t>(r.col.size()));
    MatRestoreRow(a, i, &n, &cols, &vals);
  }
  return r;
}

bool same_rows(const RowBlock& got, const RowBlock& want) {
  return got.row_begin == want.row_begin && got.row_end == want.row_end && got.row_ptr == want.row_ptr &&
         got.col == want.col && got.values == want.values;  // bitwise: a copy, no arithmetic
}

struct Shape {
  const char* name;
  PetscInt rows;        // global, square
  bool uneven;          // ownership ranges skewed, rows and columns differently; rank 1 owns no rows
  double empty_rows;    // fraction of rows left empty
  double ghost_only;    // fraction of rows with entries only outside the rank's columns
};

/// Local sizes: PETSc's split, or a skewed one (rank 1 owns nothing when there are 3+ ranks).
PetscInt local_size(PetscInt global, int rank, int size, bool uneven, int salt) {
  if (!uneven || size == 1) return PETSC_DECIDE;
  std::vector<PetscInt> share(size, 0);
  PetscInt left = global;
  for (int r = 0; r < size; ++r) {
    const bool nothing = size >= 3 && r == 1;
    const PetscInt want = r == size - 1 ? left : nothing ? 0 : std::min(left, global * (r + 1 + salt) / (size * 3));
    share[r] = want;
    left -= want;
  }
  return share[rank];
}

Mat random_matrix(MatType type, const Shape& shape, unsigned seed) {
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  Mat a = nullptr;
  MatCreate(PETSC_COMM_WORLD, &a);
  MatSetSizes(a, local_size(shape.rows, rank, size, shape.uneven, 0), local_size(shape.rows, rank, size, shape.uneven, 1),
              shape.rows, shape.rows);
  MatSetType(a, type);
  MatSetUp(a);
  MatSetOption(a, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE);
  PetscInt begin = 0, end = 0, col_begin = 0, col_end = 0;
  MatGetOwnershipRange(a, &begin, &end);
  MatGetOwnershipRangeColumn(a, &col_begin, &col_end);
  std::mt19937 gen(seed + 7919u * static_cast<unsigned>(rank));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<PetscInt> any_col(0, std::max<PetscInt>(shape.rows - 1, 0));
  for (PetscInt i = begin; i < end; ++i) {
    const double kind = unit(gen);
    if (kind < shape.empty_rows) continue;
    const bool ghost_only = kind < shape.empty_rows + shape.ghost_only && col_end - col_begin < shape.rows;
    std::set<PetscInt> cols;
    const int count = 1 + static_cast<int>(unit(gen) * 12);
    for (int t = 0; t < count * 4 && static_cast<int>(cols.size()) < count; ++t) {
      const PetscInt c = t % 2 == 0 ? any_col(gen) : std::clamp<PetscInt>(i + PetscInt(unit(gen) * 20) - 10, 0, shape.rows - 1);
      if (!ghost_only || c < col_begin || c >= col_end) cols.insert(c);
    }
    for (PetscInt c : cols) MatSetValue(a, i, c, unit(gen) * 2.0 - 1.0, INSERT_VALUES);
  }
  MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY);
  return a;
}

/// `a` assembled from MatGetRow's rows: the reference DistMatrix.
tessera::dist::DistMatrix assembled_by_get_row(const tessera::dist::Communicator& comm, Mat a) {
  RowBlock rows = rows_by_get_row(a);
  PetscInt m = 0, n = 0;
  MatGetSize(a, &m, &n);
  rows.global_rows = m;
  rows.global_cols = n;
  return tessera::petsc::assemble(comm, a, rows);
}

bool same_block(const tessera::Csr<double>& got, const tessera::Csr<double>& want) {
  return got.rows == want.rows && got.cols == want.cols && got.row_ptr == want.row_ptr &&
         got.col_idx == want.col_idx && got.values == want.values;  // bitwise: copies only
}

bool same_dist_matrix(const tessera::dist::DistMatrix& got, const tessera::dist::DistMatrix& want) {
  const tessera::dist::ExchangePattern &g = got.halo.pattern, &w = want.halo.pattern;
  return got.row_partition == want.row_partition && got.col_partition == want.col_partition &&
         got.rank == want.rank && same_block(got.local, want.local) && same_block(got.nonlocal, want.nonlocal) &&
         got.ghost_cols == want.ghost_cols && got.halo.send_local == want.halo.send_local &&
         g.send_ranks == w.send_ranks && g.send_offsets == w.send_offsets && g.recv_ranks == w.recv_ranks &&
         g.recv_offsets == w.recv_offsets;
}

/// read_dist_matrix against the assembly of MatGetRow's rows; returns what it read.
tessera::dist::DistMatrix check_dist_matrix(const tessera::dist::Communicator& comm, Mat a, const std::string& where) {
  tessera::dist::DistMatrix got = tessera::petsc::read_dist_matrix(comm, a);
  expect(same_dist_matrix(got, assembled_by_get_row(comm, a)), where + ": read_dist_matrix differs from the assembly of MatGetRow's rows");
  return got;
}

/// MatZeroRows (pattern not kept) empties every other owned row; garray keeps the ghosts that
/// only those rows used, which read_dist_matrix must drop as assemble does. On 2+ ranks with
/// enough rows, some rank must have had such ghosts, or the case tested nothing.
void check_zeroed_rows(const tessera::dist::Communicator& comm, Mat a, const std::string& where) {
  PetscInt begin = 0, end = 0;
  MatGetOwnershipRange(a, &begin, &end);
  std::vector<PetscInt> rows;
  for (PetscInt i = begin; i < end; i += 2) rows.push_back(i);
  MatSetOption(a, MAT_KEEP_NONZERO_PATTERN, PETSC_FALSE);
  MatZeroRows(a, static_cast<PetscInt>(rows.size()), rows.data(), 0.0, nullptr, nullptr);
  const tessera::dist::DistMatrix got = check_dist_matrix(comm, a, where + " after MatZeroRows");
  const tessera::petsc::StoredAijRows stored(a);
  const std::int64_t unused_here =
      stored ? std::int64_t(stored.ghost_count()) - std::int64_t(got.ghost_cols.size()) : 0;
  const std::int64_t unused = comm.allreduce(unused_here, tessera::dist::ReduceOp::max);
  PetscInt m = 0;
  MatGetSize(a, &m, nullptr);
  if (comm.size() > 1 && m > 100 && stored) expect(unused > 0, where + ": MatZeroRows left no unused ghost in garray");
}

/// `a`'s type, sizes and entries; with `move_entry`, one entry moved as with_moved_entry says
/// below; with `shift_columns`, the column ranges of with_other_column_ranges below.
Mat copy_of_entries(Mat a, bool ghost, bool move_entry, bool shift_columns, bool& moved) {
  MatType type = nullptr;
  MatGetType(a, &type);
  PetscInt m = 0, n = 0, local_rows = 0, local_cols = 0, col_begin = 0, col_end = 0;
  MatGetSize(a, &m, &n);
  MatGetLocalSize(a, &local_rows, &local_cols);
  MatGetOwnershipRangeColumn(a, &col_begin, &col_end);
  RowBlock rows = rows_by_get_row(a);
  const auto in_block = [&](std::int64_t c) { return (c >= col_begin && c < col_end) != ghost; };
  // This rank's candidate: a row with an entry in the block and a free column of the block.
  std::int64_t row = -1, from = -1, to = -1;
  for (std::int64_t i = 0; i < rows.local_rows() && row < 0; ++i) {
    const auto first = rows.col.begin() + rows.row_ptr[i], last = rows.col.begin() + rows.row_ptr[i + 1];
    const auto entry = std::find_if(first, last, in_block);
    if (entry == last) continue;
    for (std::int64_t c = 0; c < n; ++c)
      if (in_block(c) && !std::binary_search(first, last, c)) {
        row = i, from = entry - rows.col.begin(), to = c;
        break;
      }
  }
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  int mover = row >= 0 ? rank : -1;
  MPI_Allreduce(MPI_IN_PLACE, &mover, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  moved = move_entry && mover >= 0;
  if (rank == mover && moved) rows.col[from] = to;
  if (shift_columns) {
    int size = 1;
    MPI_Comm_size(PETSC_COMM_WORLD, &size);
    if (rank == 0) ++local_cols;
    if (rank == size - 1) --local_cols;
  }
  Mat b = nullptr;
  MatCreate(PETSC_COMM_WORLD, &b);
  MatSetSizes(b, local_rows, local_cols, m, n);
  MatSetType(b, type);
  MatSetUp(b);
  MatSetOption(b, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE);
  for (std::int64_t i = 0; i < rows.local_rows(); ++i)
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
      MatSetValue(b, rows.row_begin + i, rows.col[k], rows.values[k], INSERT_VALUES);
  MatAssemblyBegin(b, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(b, MAT_FINAL_ASSEMBLY);
  return b;
}

/// A matrix of `a`'s type, sizes and entries, except that on the last rank that has a suitable
/// row, one entry of it moves to another column of the same block (owned columns, or ghost
/// columns when `ghost`): the entry counts of both blocks stay, so only a comparison of columns
/// notices. `moved` says whether some rank moved one.
Mat with_moved_entry(Mat a, bool ghost, bool& moved) { return copy_of_entries(a, ghost, true, false, moved); }

/// `a`'s entries again, with every rank's rows but other column ownership ranges: rank 0 owns
/// one column more and the last rank one fewer (where it owns any). `shifted` says whether the
/// ranges changed; only then is the pattern another (the split into blocks moves).
Mat with_other_column_ranges(Mat a, bool& shifted) {
  bool unused = false;
  int size = 1;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  PetscInt col_begin = 0, col_end = 0;
  MatGetOwnershipRangeColumn(a, &col_begin, &col_end);
  int last_has_columns = 0;
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == size - 1) last_has_columns = col_end > col_begin ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &last_has_columns, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  shifted = size > 1 && last_has_columns;
  return copy_of_entries(a, false, false, shifted, unused);
}

/// The refresh compares columns, not only counts: a moved entry on one rank (owned or ghost
/// columns) is refused on every rank, and the matrix is left as it was.
void check_moved_entries(const tessera::dist::Communicator& comm, Mat a, const tessera::dist::DistMatrix& read,
                         const std::string& where) {
  for (const bool ghost : {false, true}) {
    bool moved = false;
    Mat b = with_moved_entry(a, ghost, moved);
    tessera::dist::DistMatrix m = read;
    const bool refreshed = tessera::petsc::refresh_values_if_same_pattern(comm, b, m);
    const std::string what = where + (ghost ? ": an entry moved among ghost columns" : ": an entry moved among owned columns");
    expect(refreshed == !moved, what + (moved ? " was not refused" : ", none moved, was refused"));
    expect(!moved || same_dist_matrix(m, read), what + ": the refused refresh touched the matrix");
    MatDestroy(&b);
  }
  // The same entries over other column ranges: PETSc's diagonal block counts its columns from
  // another first column, so even blocks that look alike are another pattern.
  bool shifted = false;
  Mat b = with_other_column_ranges(a, shifted);
  tessera::dist::DistMatrix m = read;
  expect(tessera::petsc::refresh_values_if_same_pattern(comm, b, m) == !shifted,
         where + (shifted ? ": other column ranges not refused" : ": the same column ranges refused"));
  expect(!shifted || same_dist_matrix(m, read), where + ": a refresh refused for its column ranges touched the matrix");
  MatDestroy(&b);
}

bool same_arrays(const tessera::petsc::PetscCsrArrays& got, const RowBlock& want) {
  const std::int64_t rows = want.row_end - want.row_begin;
  if (got.rows != rows || !got.row_ptr) return false;
  for (std::int64_t i = 0; i <= rows; ++i)
    if (got.row_ptr[i] != want.row_ptr[i]) return false;
  for (std::int64_t k = 0; k < want.nnz(); ++k)
    if (got.col_idx[k] != want.col[k] || got.values[k] != want.values[k]) return false;
  return true;
}

// On a rank with every row: the arrays, PETSc's own on one rank where the rows are read in
// place (seqaij, mpiaij, derived); on any other rank an InputError.
void check_whole_matrix(Mat a, bool in_place, const std::string& where) {
  PetscInt m = 0, n = 0, begin = 0, end = 0;
  MatGetSize(a, &m, &n);
  MatGetOwnershipRange(a, &begin, &end);
  int size = 1;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const bool owns_all = begin == 0 && end == m;
  try {
    const tessera::petsc::WholeMatrixArrays whole(a);
    expect(owns_all, where + ": whole-matrix arrays on a rank without every row");
    expect(whole.arrays().cols == n, where + ": whole-matrix columns");
    expect(same_arrays(whole.arrays(), rows_by_get_row(a)), where + ": whole-matrix arrays differ from MatGetRow");
    if (size == 1) expect(whole.borrowed() == in_place, where + (in_place ? ": copied, not borrowed" : ": borrowed"));
  } catch (const tessera::InputError& e) {
    expect(!owns_all, where + ": whole-matrix arrays refused: " + e.what());
  }
}

void check_type(MatType type, bool in_place, const Shape& shape, unsigned seed) {
  const std::string where = std::string(type) + " " + shape.name;
  Mat a = random_matrix(type, shape, seed);
  expect(static_cast<bool>(tessera::petsc::StoredAijRows(a)) == in_place,
         where + ": read in place " + (in_place ? "expected" : "not expected"));
  const RowBlock want = rows_by_get_row(a);
  const RowBlock got = tessera::petsc::read_owned_rows(a);
  expect(same_rows(got, want), where + ": read_owned_rows differs from MatGetRow");
  expect(got.global_rows == shape.rows && got.global_cols == shape.rows, where + ": global sizes");
  check_whole_matrix(a, in_place, where);
  const tessera::dist::Communicator comm(PETSC_COMM_WORLD);
  const tessera::dist::DistMatrix read = check_dist_matrix(comm, a, where);
  check_moved_entries(comm, a, read, where);

  // Same pattern, new values: every value read, in row order.
  MatScale(a, -3.0);
  const RowBlock scaled = rows_by_get_row(a);
  check_whole_matrix(a, in_place, where + " scaled");
  tessera::dist::DistMatrix refreshed = read;
  expect(tessera::petsc::refresh_values_if_same_pattern(comm, a, refreshed), where + ": refresh refused the same pattern");
  expect(same_dist_matrix(refreshed, assembled_by_get_row(comm, a)), where + ": refreshed values differ from MatGetRow's");
  tessera::HostArray<double> values;
  const bool same = tessera::petsc::read_values_if_same_pattern(a, got, values);
  expect(same, where + ": same pattern not recognised");
  expect(same && std::vector<double>(values.begin(), values.end()) == std::vector<double>(scaled.values.begin(), scaled.values.end()),
         where + ": re-read values differ from MatGetRow");

  // A new entry in the first owned row of the last rank with rows: only that rank sees a change.
  PetscInt begin = 0, end = 0;
  MatGetOwnershipRange(a, &begin, &end);
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  int last_with_rows = end > begin ? rank : -1;
  MPI_Allreduce(MPI_IN_PLACE, &last_with_rows, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  bool changed = false;
  if (rank == last_with_rows) {
    const RowBlock& r = got;
    std::set<std::int64_t> present(r.col.begin() + r.row_ptr[0], r.col.begin() + r.row_ptr[1]);
    for (PetscInt c = 0; c < shape.rows && !changed; ++c)
      if (!present.count(c)) {
        MatSetValue(a, begin, c, 1.0, INSERT_VALUES);
        changed = true;
      }
  }
  MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY);
  tessera::HostArray<double> untouched{42.0};
  const bool still_same = tessera::petsc::read_values_if_same_pattern(a, got, untouched);
  expect(still_same == !changed, where + (changed ? ": a new entry not noticed" : ": unchanged rows reported changed"));
  expect(!changed || (untouched.size() == 1 && untouched[0] == 42.0), where + ": values touched on a changed pattern");
  expect(same_rows(tessera::petsc::read_owned_rows(a), rows_by_get_row(a)), where + ": read after the new entry");
  // One rank's new entry: every rank refuses the refresh and keeps its values.
  int changed_somewhere = changed ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &changed_somewhere, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  tessera::dist::DistMatrix kept = refreshed;
  MatScale(a, 0.5);
  expect(tessera::petsc::refresh_values_if_same_pattern(comm, a, kept) == !changed_somewhere,
         where + (changed_somewhere ? ": a new entry on some rank not refused" : ": unchanged pattern refused"));
  expect(!changed_somewhere || same_dist_matrix(kept, refreshed), where + ": a refused refresh touched the matrix");
  check_dist_matrix(comm, a, where + " after the new entry");
  check_zeroed_rows(comm, a, where);
  MatDestroy(&a);
}

}  // namespace

int main(int argc, char** argv) {
  if (PetscInitialize(&argc, &argv, nullptr, "PCTESSERA's AIJ readers against MatGetRow\n")) return 1;
  int size = 1;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const Shape shapes[] = {
      {"random 517 rows", 517, false, 0.05, 0.1},
      {"uneven 389 rows, empty and ghost-only rows", 389, true, 0.2, 0.3},
      {"1x1", 1, false, 0.0, 0.0},
      {"empty rows only", 40, true, 1.0, 0.0},
      {"0x0", 0, false, 0.0, 0.0},
  };
  const MatType aij = size == 1 ? MATSEQAIJ : MATMPIAIJ;
  const MatType derived = size == 1 ? MATSEQAIJPERM : MATMPIAIJPERM;
  const MatType baij = size == 1 ? MATSEQBAIJ : MATMPIBAIJ;
  unsigned seed = 1;
  for (const Shape& shape : shapes) {
    check_type(aij, true, shape, seed++);
    check_type(MATMPIAIJ, true, shape, seed++);  // on one rank too: the off-diagonal block is empty
    check_type(derived, true, shape, seed++);
    check_type(baij, false, shape, seed++);  // MatGetRow, one row at a time
  }
  int failed = failures;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  std::printf("[rank %d] read_aij: %d checks, %d failed here, %d on all %d ranks\n", PetscGlobalRank, checks, failures,
              failed, size);
  PetscFinalize();
  return failed == 0 ? 0 : 1;
}
