#pragma once
// A matrix to build the preconditioner from, for systems whose kinds of dof follow different
// directions: A without the couplings between different kinds ("separate displacement
// components"). A node's dofs are interleaved, dof = kinds * node + kind (the generators' layout
// and PETSc's block size). A scalar AMG of the result (block size 1, the constant) coarsens each
// kind by its own couplings, where aggregates of whole nodes must coarsen all kinds alike; the
// Krylov method still iterates on A. On a slender frame (frame2d:N:L, L = 30: each displacement
// 900 times stiffer along its beams than across them) that took 27-36 PCG iterations where the
// rigid-body modes on A took 101-230; on stubby beams (L = 1) the rigid-body modes stay better
// (docs/performance.md, sixty-third session).
#include <cstdint>
#include <type_traits>

#include "local/core/host_ranges.hpp"
#include "local/formats/csr.hpp"
#include "local/formats/row_block.hpp"

namespace tessera::amg {

/// InputError unless `kinds` >= 1 divides a square rows x cols matrix into whole nodes.
void require_whole_nodes(std::int64_t rows, std::int64_t cols, int kinds);

namespace detail {
/// keep_same_kind_entries with `kinds` an int or a std::integral_constant (see there).
template <class Kinds, class Offset, class Index, class OutPtr, class OutCols, class OutValues>
void keep_same_kind_entries(std::int64_t rows, std::int64_t row_begin, const Offset* row_ptr, const Index* cols,
                            const double* values, Kinds kinds, OutPtr& out_ptr, OutCols& out_cols,
                            OutValues& out_values) {
  using OutOffset = typename OutPtr::value_type;
  out_ptr.assign(static_cast<std::size_t>(rows + 1), OutOffset{0});
  host::for_ranges(rows, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t kind = (row_begin + i) % kinds;
      std::int64_t kept = 0;
      for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
        kept += static_cast<std::int64_t>(cols[k]) % kinds == kind;
      out_ptr[i + 1] = static_cast<OutOffset>(kept);
    }
  });
  for (std::int64_t i = 0; i < rows; ++i) out_ptr[i + 1] += out_ptr[i];
  out_cols.resize(static_cast<std::size_t>(out_ptr[rows]));
  out_values.resize(static_cast<std::size_t>(out_ptr[rows]));
  host::for_ranges(rows, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t kind = (row_begin + i) % kinds;
      std::int64_t at = out_ptr[i];
      for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
        if (static_cast<std::int64_t>(cols[k]) % kinds == kind) {
          out_cols[at] = static_cast<typename OutCols::value_type>(cols[k]);
          out_values[at++] = values[k];
        }
    }
  });
}
}  // namespace detail

/// The filter on CSR arrays: `rows` rows whose first is global row `row_begin`, global columns.
/// Fills out_ptr (rows + 1 offsets), out_cols and out_values with the entries (i, j) where
/// (row_begin + i) % kinds == j % kinds, in their order. Count, then fill, on the host threads:
/// the same result whatever their number. The callers' containers (RowBlock's, or PETSc-typed
/// arrays for the one-GPU PCTESSERA) and the input's index types may differ. The kinds of plane
/// and solid elasticity, frames and shells (2, 3, 6) get a compile-time divisor: a division an
/// entry made the whole filter 2.4x slower (29 against 12 ms for frame3d:40's 4.78M entries on
/// one thread of this project's development machine).
template <class Offset, class Index, class OutPtr, class OutCols, class OutValues>
void keep_same_kind_entries(std::int64_t rows, std::int64_t row_begin, const Offset* row_ptr, const Index* cols,
                            const double* values, int kinds, OutPtr& out_ptr, OutCols& out_cols,
                            OutValues& out_values) {
  auto run = [&](auto divisor) {
    detail::keep_same_kind_entries(rows, row_begin, row_ptr, cols, values, divisor, out_ptr, out_cols, out_values);
  };
  switch (kinds) {
    case 2: return run(std::integral_constant<std::int64_t, 2>{});
    case 3: return run(std::integral_constant<std::int64_t, 3>{});
    case 6: return run(std::integral_constant<std::int64_t, 6>{});
    default: return run(std::int64_t{kinds});
  }
}

/// `rows` (any rows of a global matrix) keeping entry (i, j) only where i % kinds == j % kinds,
/// both global indices; the diagonal stays. InputError unless kinds >= 1 divides the global size.
RowBlock without_cross_kind_couplings(const RowBlock& rows, int kinds);

/// The same for a whole matrix.
Csr<double> without_cross_kind_couplings(const Csr<double>& a, int kinds);

}  // namespace tessera::amg
