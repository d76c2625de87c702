// PCTESSERA's readers of a PETSc operator (amg/petsc/petsc_operator.hpp) against MatGetRow, the
// reference: the rows read in place from PETSc's arrays (stored_aij_rows.hpp: seqaij, mpiaij
// and types derived from them) and the row-by-row fallback (baij) must give the same columns and
// bitwise the same values, on random matrices whose row and column ownership ranges differ,
// with empty rows, rows with only ghost columns, ranks owning no rows, and 1x1 and empty
// matrices. Then the re-setup reader: the same pattern gives the new values, a changed pattern
// (on one rank) false there. And the one-GPU hierarchy's reader (whole_matrix_arrays.hpp): on a
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

  // Same pattern, new values: every value read, in row order.
  MatScale(a, -3.0);
  const RowBlock scaled = rows_by_get_row(a);
  check_whole_matrix(a, in_place, where + " scaled");
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
