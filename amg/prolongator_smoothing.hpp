#pragma once
// Prolongator smoothing: P = (I - omega D^-1 A) P_tent, omega = 4 / (3 lambda_max(D^-1 A)),
// the damping that minimises the energy of the smoothed basis functions for the Jacobi
// polynomial (Vanek, Mandel, Brezina 1996; GAMG and ML use the same). The product A P_tent
// goes through LevelOps::multiply (the tile SpGEMM on the device); the update is one sparse
// merge, P's pattern being pattern(A P_tent) ∪ pattern(P_tent), fixed for a fixed pattern of A.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "amg/level_ops.hpp"
#include "local/formats/csr.hpp"

namespace tessera::amg {

/// Damping for a safe lambda_max estimate (> 0).
double prolongator_damping(double lambda_max);

/// The merge under write_smoothed_row: the union of a sorted row of P_tent (tent_col, tent_n)
/// and a sorted row of A P_tent (ap_col[0..ap_n)), column by column in increasing order, as
/// emit(column, s, t) with s the column's index in the P_tent row and t in the A P_tent row
/// (-1 where it is absent). Also what records where each value of P comes from
/// (amg/dist/dist_smoothing.hpp), so the record and the values cannot disagree.
template <class Col, class ApCol, class Emit>
void merge_smoothed_row(const Col* tent_col, std::int64_t tent_n, ApCol ap_col, std::int64_t ap_n, Emit&& emit) {
  constexpr Col kEnd = std::numeric_limits<Col>::max();
  std::int64_t s = 0, t = 0;
  while (s < tent_n || t < ap_n) {
    const Col cs = s < tent_n ? tent_col[s] : kEnd, ct = t < ap_n ? ap_col[t] : kEnd;
    const Col c = std::min(cs, ct);
    const std::int64_t from_tent = cs == c ? s++ : -1, from_ap = ct == c ? t++ : -1;
    emit(c, from_tent, from_ap);
  }
}

/// One value of P: P_tent's value (if any) plus scale times A P_tent's (if any), in that order.
inline double smoothed_value(const double* tent_val, std::int64_t s, const double* ap_val, std::int64_t t,
                             double scale) {
  double v = 0.0;
  if (s >= 0) v += tent_val[s];
  if (t >= 0) v += scale * ap_val[t];
  return v;
}

/// One row of P: merges the sorted row of P_tent with the sorted row of A P_tent scaled by
/// `scale` = -omega / a_ii into (cols, values), which have room for tent_n + ap_n entries;
/// returns the entries written. The serial setup (local int32 columns) and the distributed one
/// (global int64 columns) both use it, so they agree bit for bit. `ap_col` is a pointer, or
/// anything indexable whose ap_col[t] is column t of the row (the distributed setup reads
/// A P_tent's compact columns through a renumbering, without a copy).
template <class Col, class ApCol = const Col*>
std::int64_t write_smoothed_row(const Col* tent_col, const double* tent_val, std::int64_t tent_n, ApCol ap_col,
                                const double* ap_val, std::int64_t ap_n, double scale, Col* cols, double* values) {
  std::int64_t n = 0;
  merge_smoothed_row(tent_col, tent_n, ap_col, ap_n, [&](Col c, std::int64_t s, std::int64_t t) {
    cols[n] = c;
    values[n++] = smoothed_value(tent_val, s, ap_val, t, scale);
  });
  return n;
}

/// write_smoothed_row, appended to (cols, values).
template <class Col, class ApCol = const Col*>
void append_smoothed_row(const Col* tent_col, const double* tent_val, std::int64_t tent_n, ApCol ap_col,
                         const double* ap_val, std::int64_t ap_n, double scale, HostArray<Col>& cols,
                         HostArray<double>& values) {
  const std::size_t at = cols.size(), room = static_cast<std::size_t>(tent_n + ap_n);
  cols.resize(at + room);
  values.resize(at + room);
  const auto n = static_cast<std::size_t>(
      write_smoothed_row(tent_col, tent_val, tent_n, ap_col, ap_val, ap_n, scale, cols.data() + at, values.data() + at));
  cols.resize(at + n);
  values.resize(at + n);
}

Csr<double> smooth_prolongator(const Csr<double>& a, const Vector& inv_diag, const Csr<double>& p_tent, double omega,
                               const LevelOps& ops);

}  // namespace tessera::amg
