#pragma once
// The left operand of a distributed product's rank-local SpGEMM: A_ext, A's owned rows over
// [owned | ghost] columns (dist::extended_block), whose columns index B's owned rows and then the
// rows received from other ranks (dist/compact_spgemm.hpp). A product gets it in one of three ways:
//   - it copies A on the host (extended_block) and the local backend uploads the copy with each
//     product: the default, and the only way on the host backend;
//   - it shares another product's host copy of the same A (an AMG level's A*P_tent and A*P);
//   - a backend holds A_ext where the products run and multiplies by it itself (HeldExtendedA):
//     an AMG level's copy of A on its GPU, so A is neither copied on the host nor uploaded.
#include <memory>

#include "dist/dist_matrix.hpp"

namespace tessera::dist {

struct ChainedProduct;  // L*(A*B) and nnz(A*B) (dist/compact_spgemm.hpp)

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
};

/// How a product gets A_ext (see the file comment): both null, it copies A; `host`, another
/// product's copy of this A (pattern checked, values refilled before each multiply); `held`, the
/// backend's (then `host` must be null).
struct ExtendedA {
  std::shared_ptr<Csr<double>> host;
  std::shared_ptr<HeldExtendedA> held;
};

}  // namespace tessera::dist
