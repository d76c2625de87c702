#pragma once
// The left operand of a distributed product's rank-local SpGEMM: A_ext, A's owned rows over
// [owned | ghost] columns (dist::extended_block), whose columns index B's owned rows and then the
// rows received from other ranks (dist/compact_spgemm.hpp). A product gets it in one of three ways:
//   - it copies A on the host (extended_block) and the local backend uploads the copy with each
//     product: the default, and the only way on the host backend;
//   - it shares another product's host copy of the same A (an AMG level's A*P_tent and A*P);
//   - a backend holds A_ext where the products run and multiplies by it itself (HeldExtendedA):
//     an AMG level's copy of A on its GPU, so A is neither copied on the host nor uploaded.
// Such a holder may also be handed the right operand B and the left factor L = B^T where the
// same backend made them (HeldOperand: the GPU smoothing's merge leaves P and P^T on the device),
// for the one product that reads them first (DistPtap's first outer product): then B_ext's
// owned rows are assembled there from B's blocks (ExtendedBSource says how), and neither B_ext
// nor L is built on the host or uploaded for it.
#include <cstdint>
#include <memory>
#include <vector>

#include "dist/dist_matrix.hpp"

namespace tessera::dist {

struct ChainedProduct;  // L*(A*B) and nnz(A*B) (dist/compact_spgemm.hpp)
class RemoteRows;       // dist/remote_rows.hpp

/// How B_ext (the right operand of the rank-local product, dist/compact_spgemm.hpp) is made from
/// B: B's owned rows, then `remote`'s rows, each column (global, ghosts through b.ghost_cols)
/// renumbered to its index in `compact_to_global` (increasing, holding every column they use).
/// compact_extended_rows (dist/compact_spgemm.hpp) is its host reference.
struct ExtendedBSource {
  const DistMatrix& b;
  const RemoteRows& remote;
  const std::vector<std::int64_t>& compact_to_global;
};

/// B's two blocks and L = ref::transpose(extended_block(B)) where a backend made them, for its
/// own HeldExtendedA's chain (which knows the concrete type); the product that reads them may
/// free them. Opaque here.
class HeldOperand {
 public:
  virtual ~HeldOperand() = default;
};

/// A_ext held by a backend. Products call it inside dist::call_collectively (a failure on one
/// rank throws on all). Its holder keeps its values those of source() (a product's refresh does
/// not touch them), and both products keep the structural pattern, as LocalSpgemm does.
class HeldExtendedA {
 public:
  virtual ~HeldExtendedA() = default;
  /// The matrix whose extended block this is (a product checks that it is its own A).
  virtual const DistMatrix& source() const = 0;
  /// A_ext * B.
  virtual Csr<double> times(const Csr<double>& b) = 0;
  /// L * (A_ext * B), with nnz(A_ext * B).
  virtual ChainedProduct chain(const Csr<double>& l, const Csr<double>& b) = 0;
  /// The same with L and B's owned rows from `held` (made by this holder's backend, which may
  /// free them) and B_ext made as `source` says; equal to chain(L, compact_extended_rows(source))
  /// bit for bit. The holder may keep the product where it made it (ChainedProduct::on_device).
  virtual ChainedProduct chain(HeldOperand& held, const ExtendedBSource& source) = 0;
};

/// How a product gets A_ext (see the file comment): both null, it copies A; `host`, another
/// product's copy of this A (pattern checked, values refilled before each multiply); `held`, the
/// backend's (then `host` must be null).
struct ExtendedA {
  std::shared_ptr<Csr<double>> host;
  std::shared_ptr<HeldExtendedA> held;
};

}  // namespace tessera::dist
