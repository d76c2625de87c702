#pragma once
// LevelOps: the only matrix and vector operations the AMG phases call. The serial reference
// fills them with the host kernels (ref::spgemm, ref::ptap, ref::spmv, ref::transpose); the
// device and distributed backends supply their own (tile SpGEMM/PtAP, tiled SpMV, NCCL dot)
// and every phase above this line stays the same. Kept to the operations actually used.
#include <functional>
#include <vector>

#include "local/formats/csr.hpp"

namespace tessera::amg {

using Vector = std::vector<double>;

struct LevelOps {
  /// C = A * B with the structural pattern (explicit zeros kept): re-setup relies on it.
  std::function<Csr<double>(const Csr<double>& a, const Csr<double>& b)> multiply;
  /// A_c = P^T A P with the structural pattern.
  std::function<Csr<double>(const Csr<double>& a, const Csr<double>& p)> galerkin;
  std::function<Csr<double>(const Csr<double>& a)> transpose;
  /// y = A x (y is sized by the caller).
  std::function<void(const Csr<double>& a, const Vector& x, Vector& y)> apply;
  /// r = b - A x in one pass (the fused residual of the smoothers and the cycle).
  std::function<void(const Csr<double>& a, const Vector& x, const Vector& b, Vector& r)> residual;
  /// Global inner product: the one reduction point (an allreduce when distributed).
  std::function<double(const Vector& x, const Vector& y)> dot;
};

/// The host reference implementation (one process, ref:: kernels).
LevelOps host_reference_ops();

}  // namespace tessera::amg
