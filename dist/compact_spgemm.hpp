#pragma once
// CompactSpgemm: this rank's rows of C = A*B (row-partitioned A and B, B's row partition = A's
// column partition) as one rank-local product, over a compact numbering of the columns of B
// that this rank touches. It is the part every distributed product shares:
//   symbolic: fetch the rows of B behind A's ghost columns (RemoteRows over A's halo plan),
//             number the columns of B's owned and received rows compactly (sorted global
//             order), and build the operands A_ext (A's rows over [owned | ghost] columns, i.e.
//             B's owned rows then the received ones) and B_ext (those rows, compact columns);
//   multiply: A_ext * B_ext with the local kernel: C's owned rows over compact columns;
//   refresh:  new values of A and B (same patterns): re-send B's values only, refill the
//             operands, so the next multiply() reproduces the symbolic pattern.
// A_ext may instead be held by a backend where the products run (dist/extended_operand.hpp: an
// AMG level's copy of A on its GPU): then no host copy is built or refilled, and the holder
// multiplies.
// DistSpgemm assembles the product into a DistMatrix; DistPtap feeds it to its outer product
// as it is, with no owned/ghost split and no copy.
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "dist/dist_matrix.hpp"
#include "dist/extended_operand.hpp"  // ExtendedA, HeldExtendedA
#include "dist/remote_rows.hpp"
#include "dist/stats.hpp"

namespace tessera::dist {

class Communicator;

/// L*(A*B) from LocalSpgemm::chain, and nnz(A*B), which a device backend keeps on the device.
/// `on_device`: L*(A*B) also where a backend holding A_ext made it, if that backend keeps it
/// (HeldExtendedA::chain with a HeldOperand); null otherwise.
struct ChainedProduct {
  Csr<double> product;
  std::int64_t inner_entries = 0;
  std::shared_ptr<HeldOperand> on_device;
};

/// The rank-local products behind the distributed ones: C = A*B keeping the structural
/// pattern (cancelled entries stay), so a numeric recompute reproduces the symbolic pattern.
/// The host default is host::spgemm (ref::spgemm on the rank's threads); the device backend
/// plugs in the tile SpGEMM. chain(L, A, B) = L*(A*B) is DistPtap's pair of products
/// (P^T (A P)): by default two calls of the product; a device backend supplies one that keeps
/// A*B on the GPU (no download and upload of it).
class LocalSpgemm {
 public:
  using Multiply = std::function<Csr<double>(const Csr<double>&, const Csr<double>&)>;
  using Chain = std::function<ChainedProduct(const Csr<double>&, const Csr<double>&, const Csr<double>&)>;

  LocalSpgemm() = default;
  /// Any callable Csr<double>(const Csr<double>&, const Csr<double>&); chain() calls it twice.
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, LocalSpgemm> &&
                                              std::is_invocable_r_v<Csr<double>, F&, const Csr<double>&,
                                                                    const Csr<double>&>>>
  LocalSpgemm(F multiply) : multiply_(std::move(multiply)) {}
  LocalSpgemm(Multiply multiply, Chain chain) : multiply_(std::move(multiply)), chain_(std::move(chain)) {}

  Csr<double> operator()(const Csr<double>& a, const Csr<double>& b) const { return multiply_(a, b); }
  ChainedProduct chain(const Csr<double>& l, const Csr<double>& a, const Csr<double>& b) const;

 private:
  Multiply multiply_;
  Chain chain_;  // empty: two calls of multiply_
};

Csr<double> host_local_spgemm(const Csr<double>& a, const Csr<double>& b);

/// B_ext as `source` says (dist/extended_operand.hpp): B's owned rows, then the received rows,
/// over compact columns; each row sorted, values in B's row order then the received order. The
/// host reference of a backend's own assembly (HeldExtendedA::chain with a HeldOperand), and
/// what CompactSpgemm builds.
Csr<double> compact_extended_rows(const ExtendedBSource& source);

/// When CompactSpgemm makes its host copy of B_ext: at the symbolic phase, or at the first
/// refresh(), for a product whose first multiplication reads B where a backend holds it
/// (multiply_left with a HeldOperand) and that may never be refreshed.
enum class HostBExtended { at_symbolic, at_first_refresh };

class CompactSpgemm {
 public:
  /// Collective: the symbolic phase (remote rows, compact columns, operands). `a_extended` says
  /// where A_ext comes from (dist/extended_operand.hpp). A shared host copy (A*P_tent and A*P on
  /// one AMG level: A is then copied once, not once per product) must have this A's pattern
  /// (InputError on every rank if it differs), and every product that shares it refills its
  /// values from its own A here and in refresh(), before it multiplies. A held one must be
  /// this A's (asserted); its products run by the holder, not by `local`.
  /// With HostBExtended::at_first_refresh, the only product before the first refresh() must be
  /// multiply_left with a HeldOperand (asserted).
  /// `held_b`: B's blocks where a backend made them (its tentative prolongator left P_tent on the
  /// GPU), for the first multiply_with, whose caller may assemble B_ext from them there
  /// (Operands::b_held); then B_ext is not built on the host before a product asks for it, and
  /// `b` must live until then. A host product first (multiply, multiply_left) builds it then.
  CompactSpgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, LocalSpgemm local,
                ExtendedA a_extended = {}, HostBExtended host_b = HostBExtended::at_symbolic,
                std::shared_ptr<HeldOperand> held_b = nullptr);
  /// Collective: new values of A and B with the patterns the symbolic phase saw (checked on
  /// every rank, InputError on all if one differs).
  void refresh(const Communicator& comm, const DistMatrix& a, const DistMatrix& b);
  /// Collective: A_ext * B_ext, C's owned rows over compact columns (entries in row order).
  /// A failure of the local kernel on one rank (device out of memory) throws on every rank.
  /// Every call after the first must reproduce the first's pattern (asserted by entry count).
  Csr<double> multiply(const Communicator& comm);
  /// Collective: L * (A_ext * B_ext) by the local backend's chain, for a left factor over C's
  /// owned rows (L.cols == A's owned rows); checks and records A_ext * B_ext's entries as
  /// multiply() does. `step` names the products in a failure's message.
  Csr<double> multiply_left(const Communicator& comm, const Csr<double>& l, const char* step);
  /// Collective: the same with L and B's owned rows where the backend holding A_ext made them
  /// (`held`, of `b`: the symbolic phase's B; asserted held A_ext). B_ext is not built here. The
  /// product comes back with its copy where the backend made it, if the backend keeps one
  /// (ChainedProduct::on_device).
  ChainedProduct multiply_left(const Communicator& comm, HeldOperand& held, const DistMatrix& b, const char* step);
  /// The operands of A_ext * B_ext for a caller that forms the product itself: A_ext as a host
  /// copy or held by a backend (exactly one of the two is set), and B_ext.
  struct Operands {
    const Csr<double>* a_host;
    HeldExtendedA* a_held;
    /// B_ext on the host; null where B is held (the constructor's held_b, at the first
    /// multiply_with only): then B_ext is `b_source`'s, from the held blocks `b_held`.
    const Csr<double>* b;
    HeldOperand* b_held;
    const ExtendedBSource* b_source;
  };
  /// Collective: multiply()'s product formed by `product`, which keeps it where it ran (a device
  /// backend's next step reads it there) and returns its entries, checked and recorded as
  /// multiply()'s. A failure on one rank throws on every rank; `step` names it in the message.
  /// A held B is handed to the first call only, and dropped after it (`product` may free it).
  std::int64_t multiply_with(const Communicator& comm, const char* step,
                             const std::function<std::int64_t(const Operands&)>& product);

  /// Compact column -> global column of B (and of C), increasing.
  const std::vector<std::int64_t>& compact_to_global() const { return compact_to_global_; }
  /// Entries of A_ext * B_ext at the first multiply() or multiply_left() (-1 before it).
  std::int64_t product_entries() const { return product_entries_; }
  /// Traffic and times of the last symbolic phase or refresh (not of multiply()).
  const DistStats& stats() const { return stats_; }
  /// For device numeric phases (dist/cuda/device_compact_spgemm.hpp): the remote-row plan and
  /// the operands (B_ext's values: B's owned rows in row order, then the received values).
  const RemoteRows& remote_rows() const { return remote_; }
  /// A_ext on the host (not for a held one).
  const Csr<double>& a_extended() const;
  /// Whether A_ext is a host copy (false: held by a backend), and A's entries on this rank.
  bool a_extended_on_host() const { return a_ext_ != nullptr; }
  std::int64_t a_entries() const { return a_entries_; }
  /// A_ext as this product got it, to share with the next product of this A. A host copy is
  /// shared, not owned: whoever holds it may overwrite its values, which is why every sharer
  /// refills them before multiplying.
  ExtendedA shared_a_extended() const { return {a_ext_, held_a_}; }
  /// B_ext on the host (after the symbolic phase, or after the first refresh: see HostBExtended).
  const Csr<double>& b_extended() const;

 private:
  void fill_b_values(const DistMatrix& b);
  // B_ext on the host now, for a host product before the first refresh where B was held.
  void make_b_extended_for_held_b();
  template <class Chain>
  ChainedProduct chained(const Communicator& comm, const char* step, Chain&& chain);

  LocalSpgemm local_;
  RemoteRows remote_;
  std::vector<std::int64_t> compact_to_global_;
  std::shared_ptr<Csr<double>> a_ext_;  // A's rows; columns: B's owned rows, then received rows
  std::shared_ptr<HeldExtendedA> held_a_;  // or A_ext held by a backend (then a_ext_ is null)
  std::int64_t a_entries_ = 0;  // A's entries on this rank at the symbolic phase
  Csr<double> b_ext_;  // B's owned rows, then received rows; compact columns
  bool b_ext_made_ = false;  // see HostBExtended
  std::shared_ptr<HeldOperand> held_b_;  // see the constructor's held_b; dropped once read
  const DistMatrix* b_of_held_ = nullptr;  // the constructor's B while B_ext waits for held_b_
  std::int64_t b_entries_ = 0;  // B's entries on this rank at the symbolic phase
  std::int64_t product_entries_ = -1;
  DistStats stats_;
};

}  // namespace tessera::dist
