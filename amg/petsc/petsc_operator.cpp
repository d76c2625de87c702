#include "amg/petsc/petsc_operator.hpp"

#include <petsc/private/petscimpl.h>  // PetscObjectStateGet

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "amg/petsc/petsc_boundary.hpp"
#include "amg/petsc/stored_aij_rows.hpp"
#include "dist/collective_call.hpp"
#include "local/core/host_array.hpp"
#include "local/core/host_ranges.hpp"
#include "local/formats/csr_arrays.hpp"

namespace tessera::petsc {

namespace {

// One row at a time through MatGetRow/MatRestoreRow, as PETSc requires.
template <class Visit>
void for_each_owned_row(Mat a, Visit visit) {
  PetscInt begin = 0, end = 0;
  TESSERA_PETSC_THROW(MatGetOwnershipRange(a, &begin, &end));
  for (PetscInt i = begin; i < end; ++i) {
    PetscInt n = 0;
    const PetscInt* cols = nullptr;
    const PetscScalar* vals = nullptr;
    TESSERA_PETSC_THROW(MatGetRow(a, i, &n, &cols, &vals));
    visit(i - begin, n, cols, vals);
    TESSERA_PETSC_THROW(MatRestoreRow(a, i, &n, &cols, &vals));
  }
}

std::vector<std::int64_t> to_offsets(const PetscInt* ranges, int ranks) {
  return std::vector<std::int64_t>(ranges, ranges + ranks + 1);
}

// Whether read_dist_matrix copies this rank's storage block by block: seqaij or mpiaij storage
// read in place, with values that are doubles already.
bool copies_blocks(const StoredAijRows& stored) {
  if constexpr (std::is_same_v<PetscScalar, double>) return static_cast<bool>(stored);
  return false;
}

// One seqaij block's own arrays (PetscScalar is double: copies_blocks).
CsrArrays<PetscInt, PetscInt> arrays_of(const BorrowedSeqAij& block, std::int64_t cols) {
  return {block.rows(), cols, block.row_ptr(), block.cols(), reinterpret_cast<const double*>(block.values())};
}

// Collective. PETSc's blocks of `a` as a DistMatrix (every rank copies_blocks).
dist::DistMatrix dist_matrix_of_blocks(const dist::Communicator& comm, Mat a, const StoredAijRows& stored) {
  PetscInt owned_cols = 0;
  TESSERA_PETSC_THROW(MatGetLocalSize(a, nullptr, &owned_cols));
  Csr<double> local, nonlocal;
  std::vector<std::int64_t> ghosts;
  // to_csr validates as it copies: a broken block is an InputError on every rank, not one.
  dist::call_collectively(comm, "PCTESSERA: reading A", [&] {
    local = to_csr(arrays_of(stored.diagonal_block(), owned_cols), "PETSc's diagonal block");
    const BorrowedSeqAij* off = stored.off_diagonal_block();
    nonlocal = off ? to_csr(arrays_of(*off, stored.ghost_count()), "PETSc's off-diagonal block")
                   : Csr<double>::empty(local.rows, 0);
    ghosts.assign(stored.garray(), stored.garray() + stored.ghost_count());
  });
  return dist::assemble_blocks(comm, std::move(local), std::move(nonlocal), std::move(ghosts), row_partition(comm, a),
                               col_partition(comm, a));
}

// Whether PETSc's blocks still hold `m`'s pattern: the diagonal block's offsets and columns
// are the local block's, the off-diagonal block's offsets are the non-local block's and its
// columns name the same global columns (garray may have changed with them, or kept ghosts that
// m dropped). Local, on the rank's threads.
bool same_blocks(const StoredAijRows& stored, const dist::DistMatrix& m) {
  const BorrowedSeqAij& diag = stored.diagonal_block();
  const BorrowedSeqAij* off = stored.off_diagonal_block();
  const std::int64_t rows = m.owned_rows();
  if (diag.rows() != rows || diag.row_ptr()[rows] != m.local.nnz() ||
      (off ? off->row_ptr()[rows] : 0) != m.nonlocal.nnz())
    return false;
  std::atomic<bool> differs{false};
  const auto differ_where = [&](std::int64_t n, auto&& entry_differs) {
    host::for_ranges(n, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t k = begin; k < end && !differs.load(std::memory_order_relaxed); ++k)
        if (entry_differs(k)) differs.store(true, std::memory_order_relaxed);
    });
  };
  differ_where(rows + 1, [&](std::int64_t i) {
    return diag.row_ptr()[i] != m.local.row_ptr[i] || (off && off->row_ptr()[i] != m.nonlocal.row_ptr[i]);
  });
  differ_where(m.local.nnz(), [&](std::int64_t k) { return diag.cols()[k] != m.local.col_idx[k]; });
  if (off) {
    const PetscInt ghosts = stored.ghost_count();
    differ_where(m.nonlocal.nnz(), [&](std::int64_t k) {
      const PetscInt g = off->cols()[k];
      return g < 0 || g >= ghosts || stored.garray()[g] != m.ghost_cols[m.nonlocal.col_idx[k]];
    });
  }
  return !differs.load();
}

}  // namespace

RowBlock read_owned_rows(Mat a) {
  RowBlock rows;
  PetscInt m = 0, n = 0, begin = 0, end = 0;
  TESSERA_PETSC_THROW(MatGetSize(a, &m, &n));
  TESSERA_PETSC_THROW(MatGetOwnershipRange(a, &begin, &end));
  rows.global_rows = m;
  rows.global_cols = n;
  rows.row_begin = begin;
  rows.row_end = end;
  const StoredAijRows stored(a);
  if (stored) {
    const std::int64_t n_rows = stored.rows();
    rows.row_ptr.resize(static_cast<std::size_t>(n_rows) + 1);
    host::for_ranges(n_rows + 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) rows.row_ptr[i] = stored.row_start(i);
    });
    rows.col.resize(static_cast<std::size_t>(stored.entries()));
    rows.values.resize(rows.col.size());
    host::for_ranges(n_rows, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        std::int64_t k = rows.row_ptr[i];
        stored.row(i, [&](std::int64_t col, PetscScalar value) {
          rows.col[k] = col;
          rows.values[k++] = to_double(value);
        });
      }
    });
    return rows;
  }
  rows.row_ptr.assign(1, 0);
  rows.row_ptr.reserve(static_cast<std::size_t>(end - begin) + 1);
  for_each_owned_row(a, [&](PetscInt, PetscInt len, const PetscInt* cols, const PetscScalar* vals) {
    for (PetscInt k = 0; k < len; ++k) {
      rows.col.push_back(cols[k]);
      rows.values.push_back(to_double(vals[k]));
    }
    rows.row_ptr.push_back(static_cast<std::int64_t>(rows.col.size()));
  });
  return rows;
}

bool read_values_if_same_pattern(Mat a, const RowBlock& pattern, HostArray<double>& values) {
  PetscInt begin = 0, end = 0;
  TESSERA_PETSC_THROW(MatGetOwnershipRange(a, &begin, &end));
  if (begin != pattern.row_begin || end != pattern.row_end) return false;
  HostArray<double> fresh(pattern.col.size());  // every entry written unless the pattern differs
  const StoredAijRows stored(a);
  if (stored) {
    const std::int64_t n_rows = stored.rows();
    if (n_rows != pattern.local_rows() || stored.entries() != static_cast<std::int64_t>(pattern.col.size())) return false;
    std::atomic<bool> differs{false};
    host::for_ranges(n_rows, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e && !differs.load(std::memory_order_relaxed); ++i) {
        std::int64_t k = pattern.row_ptr[i];
        if (stored.row_start(i + 1) - stored.row_start(i) != pattern.row_ptr[i + 1] - k) {
          differs.store(true, std::memory_order_relaxed);
          break;
        }
        stored.row(i, [&](std::int64_t col, PetscScalar value) {
          if (col != pattern.col[k]) differs.store(true, std::memory_order_relaxed);
          fresh[k++] = to_double(value);
        });
      }
    });
    if (differs.load()) return false;
    values.swap(fresh);
    return true;
  }
  bool same = true;
  for_each_owned_row(a, [&](PetscInt r, PetscInt len, const PetscInt* cols, const PetscScalar* vals) {
    const std::int64_t first = pattern.row_ptr[r];
    if (!same || len != pattern.row_ptr[r + 1] - first ||
        !std::equal(cols, cols + len, pattern.col.begin() + first)) {
      same = false;
      return;
    }
    for (PetscInt k = 0; k < len; ++k) fresh[first + k] = to_double(vals[k]);
  });
  if (same) values.swap(fresh);
  return same;
}

dist::RowPartition row_partition(const dist::Communicator& comm, Mat a) {
  const PetscInt* ranges = nullptr;
  PetscInt m = 0, n = 0;
  TESSERA_PETSC_THROW(MatGetOwnershipRanges(a, &ranges));
  TESSERA_PETSC_THROW(MatGetSize(a, &m, &n));
  return dist::RowPartition::from_offsets(comm, m, to_offsets(ranges, comm.size()), dist::Alignment::any);
}

dist::RowPartition col_partition(const dist::Communicator& comm, Mat a) {
  const PetscInt* ranges = nullptr;
  PetscInt m = 0, n = 0;
  TESSERA_PETSC_THROW(MatGetOwnershipRangesColumn(a, &ranges));
  TESSERA_PETSC_THROW(MatGetSize(a, &m, &n));
  return dist::RowPartition::from_offsets(comm, n, to_offsets(ranges, comm.size()), dist::Alignment::any);
}

dist::DistMatrix assemble(const dist::Communicator& comm, Mat a, const RowBlock& rows) {
  return dist::assemble(comm, rows, row_partition(comm, a), col_partition(comm, a));
}

dist::DistMatrix read_dist_matrix(const dist::Communicator& comm, Mat a) {
  const StoredAijRows stored(a);
  // Both ways are collective, differently: every rank takes the same one.
  if (comm.allreduce(std::int64_t{copies_blocks(stored)}, dist::ReduceOp::min) == 1)
    return dist_matrix_of_blocks(comm, a, stored);
  return assemble(comm, a, read_owned_rows(a));
}

bool refresh_values_if_same_pattern(const dist::Communicator& comm, Mat a, dist::DistMatrix& m) {
  PetscInt begin = 0, col_begin = 0, col_end = 0;
  TESSERA_PETSC_THROW(MatGetOwnershipRange(a, &begin, nullptr));
  TESSERA_PETSC_THROW(MatGetOwnershipRangeColumn(a, &col_begin, &col_end));
  const StoredAijRows stored(a);
  const bool in_place = copies_blocks(stored);
  HostArray<double> row_order_values;  // read row by row (other storage)
  // The diagonal block's columns count from the first owned column: its range must be m's too.
  bool same = begin == m.row_begin() && col_begin == m.col_begin() && col_end - col_begin == m.local.cols;
  if (same && in_place)
    same = same_blocks(stored, m);
  else if (same)  // rare storage: compare in row order, through a RowBlock of m's pattern
    same = read_values_if_same_pattern(a, dist::owned_row_block(m), row_order_values);
  if (comm.allreduce(std::int64_t{same}, dist::ReduceOp::min) == 0) return false;
  if (in_place) {
    copy_on_threads(arrays_of(stored.diagonal_block(), 0).values, m.local.values.size(), m.local.values.data());
    if (const BorrowedSeqAij* off = stored.off_diagonal_block())
      copy_on_threads(arrays_of(*off, 0).values, m.nonlocal.values.size(), m.nonlocal.values.data());
  } else {
    dist::set_values_in_row_order(m, row_order_values);
  }
  return true;
}

void write_aij(const dist::DistMatrix& c, Mat out, bool preallocate) {
  const RowBlock rows = dist::owned_row_block(c);
  const std::int64_t m = rows.local_rows();
  if (preallocate) {
    std::vector<PetscInt> diag(static_cast<std::size_t>(m)), offdiag(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
      diag[i] = static_cast<PetscInt>(c.local.row_length(i));
      offdiag[i] = static_cast<PetscInt>(c.nonlocal.row_length(i));
    }
    // Only the call matching out's type acts; the other is a no-op by PETSc's design.
    TESSERA_PETSC_THROW(MatSeqAIJSetPreallocation(out, 0, diag.data()));
    TESSERA_PETSC_THROW(MatMPIAIJSetPreallocation(out, 0, diag.data(), 0, offdiag.data()));
    TESSERA_PETSC_THROW(MatSetOption(out, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  }
  std::vector<PetscInt> cols;
  std::vector<PetscScalar> vals;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t first = rows.row_ptr[i], last = rows.row_ptr[i + 1];
    cols.assign(rows.col.begin() + first, rows.col.begin() + last);
    vals.assign(rows.values.begin() + first, rows.values.begin() + last);
    const PetscInt row = static_cast<PetscInt>(rows.row_begin + i);
    TESSERA_PETSC_THROW(MatSetValues(out, 1, &row, static_cast<PetscInt>(cols.size()), cols.data(), vals.data(),
                                     INSERT_VALUES));
  }
  TESSERA_PETSC_THROW(MatAssemblyBegin(out, MAT_FINAL_ASSEMBLY));
  TESSERA_PETSC_THROW(MatAssemblyEnd(out, MAT_FINAL_ASSEMBLY));
}

MatrixMirror::Change MatrixMirror::sync(const dist::Communicator& comm, Mat a) {
  PetscObjectState state = 0, nonzero_state = 0;
  TESSERA_PETSC_THROW(PetscObjectStateGet(reinterpret_cast<PetscObject>(a), &state));
  TESSERA_PETSC_THROW(MatGetNonzeroState(a, &nonzero_state));
  if (built_ && state == state_) return Change::none;
  Change change = Change::pattern;
  // PETSc agrees the nonzero state over the matrix's ranks at assembly: every rank takes the same
  // branch into the collectives below.
  if (built_ && nonzero_state == nonzero_state_ && refresh_values_if_same_pattern(comm, a, matrix_))
    change = Change::values;
  if (change == Change::pattern) {
    matrix_ = read_dist_matrix(comm, a);
    built_ = true;
  }
  state_ = state;
  nonzero_state_ = nonzero_state;
  return change;
}

}  // namespace tessera::petsc
