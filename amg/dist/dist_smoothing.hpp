#pragma once
// The distributed prolongator smoothing's merge, P = P_tent - omega D^-1 (A P_tent), block by
// block from A P_tent's owned rows over the product's compact columns (dist::CompactSpgemm's
// output, never assembled), and its replay for a re-setup:
//   smoothed_blocks   the merge (a row of P = the union of a row of P_tent and one of A P_tent,
//                     amg/prolongator_smoothing.hpp's merge_smoothed_row); optionally records
//                     where each value of P comes from (SmoothedValueMap);
//   replay_smoothing  new values of A P_tent, P_tent, D or omega, the same patterns: P's values
//                     from the record, without merging columns again, bit for bit the merge's.
// The record is what a refresh of P on other memory (a device) would run: per value of P, two
// gathers and one multiply-add. P's columns (SmoothedColumns) are numbered by the same steps
// where the merge runs on a device (amg/cuda/dist_device_smoothing.hpp), so both give one P.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "amg/dist/device_operator_slot.hpp"
#include "amg/hierarchy.hpp"
#include "dist/dist_matrix.hpp"
#include "dist/extended_operand.hpp"
#include "local/core/host_array.hpp"

namespace tessera::dist {
class Communicator;
class CompactSpgemm;
}

namespace tessera::amg {

/// Where each value of a smoothed P comes from, kept in the pieces of rows the merge wrote (one
/// a thread: joining them would copy the record once more). For P's owned row i in piece r,
/// the value of its local entry j is smoothed_value(P_tent's values, local_tent[n], A P_tent's
/// values, local_ap[n], -omega * inv_diag[i]), n = j - P.local.row_ptr[rows_begin] (likewise
/// for the non-local block); P_tent's values are numbered [local | non-local], -1 is "none".
struct SmoothedValueMap {
  struct Piece {
    std::int64_t rows_begin = 0, rows_end = 0;
    std::vector<std::int64_t> local_tent, local_ap, nonlocal_tent, nonlocal_ap;
  };
  std::vector<Piece> pieces;
  std::int64_t tent_entries = 0, ap_entries = 0, p_entries = 0;  // the counts the record was made for
};

/// P's columns over A P_tent's compact columns `global_of` (increasing): the compact range
/// [first_owned, end_owned) of P's owned columns, P's ghosts (P_tent's and the outside compact
/// columns some entry uses), and compact column -> P's column (owned ones: the local column;
/// used outside ones: the ghost index; the others 0, never read). Both maps are monotone, so a
/// row merged in compact order stays sorted in each block.
struct SmoothedColumns {
  std::int32_t first_owned = 0, end_owned = 0;
  std::vector<std::int64_t> ghost_cols;
  std::vector<std::int32_t> to_p;
};

/// The owned range alone (what finding the used outside columns needs).
SmoothedColumns owned_compact_range(const dist::DistMatrix& p_tent, const std::vector<std::int64_t>& global_of);

/// Collective: `columns`' ghosts and map, from the outside compact columns flagged in `used`
/// (one flag a compact column; flags on owned ones are ignored). InputError on every rank if
/// P's owned and ghost columns would pass the int32 local column index.
void number_smoothed_columns(const dist::Communicator& comm, const dist::DistMatrix& p_tent,
                             const std::vector<std::int64_t>& global_of, const std::vector<char>& used,
                             SmoothedColumns& columns);

/// P without entries yet: P_tent's partitions and rank, the ghosts moved out of `columns`.
dist::DistMatrix smoothed_shell(const dist::DistMatrix& p_tent, SmoothedColumns& columns);

/// Collective. P from P_tent and A P_tent's owned rows `ap` over the product's compact columns
/// `global_of` (increasing: each row of `ap` is [outside columns left of the owned range | owned
/// | outside right]). P's non-local block is over the union of P_tent's ghosts and the outside
/// columns some entry of `ap` uses. Each value is the serial smooth_prolongator's, so the
/// result equals the merge in global column order bit for bit. No halo plan (the caller builds
/// it once, for a new pattern). With `record`, fills it for P.
dist::DistMatrix smoothed_blocks(const dist::Communicator& comm, const dist::DistMatrix& p_tent, const Csr<double>& ap,
                                 const std::vector<std::int64_t>& global_of, const Vector& inv_diag, double omega,
                                 SmoothedValueMap* record = nullptr);

/// A level's first smoothed P, and P^T where the backend that made P made it too
/// (ref::transpose(dist::extended_block(p)): the Galerkin product's left factor, which
/// dist::DistPtap otherwise transposes on the host). `held`: P and P^T left where the backend
/// made them, for the Galerkin product's first products (dist::HeldOperand); may be null.
/// `keep_for_solve`: where the backend kept P's blocks and R's owned block (the top of P^T) on
/// the device for the solve, it puts them into the level's slots once the level's P (with its
/// halo plan) and R are final; may be empty.
struct SmoothedProlongator {
  dist::DistMatrix p;
  std::optional<Csr<double>> p_transposed;
  std::shared_ptr<dist::HeldOperand> held;
  /// Collective. `p` and `r` at the addresses the slots' copies will point at (the level's).
  std::function<void(const dist::Communicator& comm, const dist::DistMatrix& p, const dist::DistMatrix& r,
                     DeviceOperatorSlot& device_p, DeviceOperatorSlot& device_r)>
      keep_for_solve;
};

/// Collective: a level's P at its first setup, from the product A P_tent (`a_times_p_tent`, its
/// symbolic phase made): multiplied by the product's backend, merged on the host
/// (smoothed_blocks); no P^T. DistSetupBackend::smoothing's default; no halo plan.
SmoothedProlongator dist_smoothed_prolongator(const dist::Communicator& comm, dist::CompactSpgemm& a_times_p_tent,
                                              const dist::DistMatrix& p_tent, const Vector& inv_diag, double omega);

/// Not collective. P's values from `map` (made by smoothed_blocks for P's pattern) and new
/// values of P_tent, A P_tent, inv_diag and omega: equal to a new smoothed_blocks bit for bit.
/// Operands of other counts than the map's are a logic error (asserted): the re-setup keeps
/// every pattern.
void replay_smoothing(const SmoothedValueMap& map, const dist::DistMatrix& p_tent, const Csr<double>& ap,
                      const Vector& inv_diag, double omega, dist::DistMatrix& p);

}  // namespace tessera::amg
