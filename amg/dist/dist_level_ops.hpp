#pragma once
// The serial phases that only need y = A x, r = b - A x and dot products (the smoothers, the
// Krylov solvers) run unchanged on a distributed operator through a LevelOps bound to it:
// apply/residual are dist::spmv (halo exchange overlapping the local block), dot is an
// allreduce. LevelOps is typed on Csr, so the bound operator is identified by its local
// block: the Csr those calls receive must be `a.local` itself (checked), nothing else.
// The products (multiply, galerkin, transpose) are not bound: the distributed setup calls
// DistSpgemm / DistPtap / dist::transpose directly, to keep their symbolic phases.
#include <functional>
#include <string>
#include <vector>

#include "amg/dist/device_operator_slot.hpp"
#include "amg/level_ops.hpp"
#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"

namespace tessera::amg {

/// `comm` and `a` must outlive the returned ops (and `a` must not move).
LevelOps dist_level_ops(const dist::Communicator& comm, const dist::DistMatrix& a);

/// Collective. Square operator on one partition, finite values, a positive diagonal in every
/// owned row; otherwise the same InputError (the lowest failing rank's, naming the global row)
/// on every rank. `what` names the matrix.
void check_dist_operator(const dist::Communicator& comm, const dist::DistMatrix& a, const std::string& what);

/// How the distributed setup checks a level's operator (DistSetupBackend::check_operator):
/// check_dist_operator's contract, words and InputError on every rank. The GPU's
/// (amg::gpu::device_operator_check) tests the rows on the level's device copy, made in
/// `device_a` if it is empty, where the level's first device phase would make it.
using DistOperatorCheck = std::function<void(const dist::Communicator& comm, const dist::DistMatrix& a,
                                             const std::string& what, DeviceOperatorSlot& device_a)>;

/// The host's: check_dist_operator (the slot untouched).
void host_operator_check(const dist::Communicator& comm, const dist::DistMatrix& a, const std::string& what,
                         DeviceOperatorSlot& device_a);

/// a_ii of the owned rows (0 where a row has no diagonal entry).
std::vector<double> owned_diagonal(const dist::DistMatrix& a);

/// 1 / a_ii of the owned rows (inf where a row has no diagonal entry): the smoothers' and the
/// prolongator's diagonal.
std::vector<double> owned_inverse_diagonal(const dist::DistMatrix& a);

/// How the distributed setup makes a level's 1 / a_ii (DistSetupBackend::inverse_diagonal), on an
/// operator its check passed: owned_inverse_diagonal's values, bit for bit. The GPU's
/// (amg::gpu::device_inverse_diagonal_step) divides on the level's device copy, made in
/// `device_a` if it is empty, and downloads the result. Collective.
using DistInverseDiagonal = std::function<std::vector<double>(const dist::Communicator& comm,
                                                              const dist::DistMatrix& a, DeviceOperatorSlot& device_a)>;

/// The host's: owned_inverse_diagonal (the slot untouched).
std::vector<double> host_inverse_diagonal(const dist::Communicator& comm, const dist::DistMatrix& a,
                                          DeviceOperatorSlot& device_a);

/// l1-Jacobi's 1 / d_l1,i of the owned rows, summed over the owned block's row, then the ghost
/// block's: the order of dist::extended_block(a)'s row, so the sums equal l1_inverse_diagonal's
/// on that copy bit for bit, without making it.
std::vector<double> owned_l1_inverse_diagonal(const dist::DistMatrix& a);

/// Collective. True when `a` and `b` have the same partitions and the same pattern on every rank.
bool same_dist_pattern(const dist::Communicator& comm, const dist::DistMatrix& a, const dist::DistMatrix& b);

}  // namespace tessera::amg
