#include "amg/petsc/petsc_operator.hpp"

#include <petsc/private/petscimpl.h>  // PetscObjectStateGet

#include <algorithm>
#include <atomic>

#include "amg/petsc/petsc_boundary.hpp"
#include "amg/petsc/stored_aij_rows.hpp"
#include "local/core/host_ranges.hpp"

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
  if (built_ && nonzero_state == nonzero_state_) {
    HostArray<double> values;
    const std::int64_t same = read_values_if_same_pattern(a, rows_, values) ? 1 : 0;
    // Every rank takes the same branch: the refresh below is collective-free, the rebuild is not.
    if (comm.allreduce(same, dist::ReduceOp::min) == 1) {
      dist::set_values_in_row_order(matrix_, values);
      rows_.values.swap(values);
      change = Change::values;
    }
  }
  if (change == Change::pattern) {
    rows_ = read_owned_rows(a);
    matrix_ = assemble(comm, a, rows_);
    built_ = true;
  }
  state_ = state;
  nonzero_state_ = nonzero_state;
  return change;
}

}  // namespace tessera::petsc
