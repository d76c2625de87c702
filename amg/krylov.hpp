#pragma once
// Krylov solvers around a preconditioner: PCG for SPD operators, flexible right-preconditioned
// restarted GMRES (FGMRES, Saad 1993) for non-symmetric ones. Both stop on
// ||b - A x|| <= rtol ||b||; the residual reported is recomputed from x at the end, never the
// recurrence. Breakdowns end the solve with a status and a message, never NaN or a hang:
//   PCG: p^T A p <= 0 (A not positive definite), r^T z <= 0 (preconditioner not SPD),
//   a non-finite scalar, stagnation (no new smallest residual for `stagnation_window`
//   iterations, e.g. an inconsistent singular system), and the iteration limit. Both solvers
//   stop where rtol is below the system's attainable accuracy (detail::FailedConfirmations).
// A b whose b.b leaves double's range (entries near 1e200 or 1e-200) is solved scaled by an
// exact power of two (detail::rhs_scale_exponent); inside the range nothing is scaled.
#include <functional>
#include <string>
#include <vector>

#include "amg/level_ops.hpp"
#include "local/formats/csr.hpp"

namespace tessera::amg {

/// z = M^-1 r.
using Preconditioner = std::function<void(const Vector& r, Vector& z)>;

/// How GMRES's Arnoldi step orthogonalises (fgmres_iteration.hpp), PETSc's three classical
/// choices (-ksp_gmres_cgs_refinement_type refine_always | refine_ifneeded | refine_never) and
/// its modified one:
///   classical_twice       two batched projections an iteration: orthogonal to working precision;
///   classical_if_needed   one, and the second only where the first cancelled most of w (the
///                         test of Daniel, Gragg, Kaufman and Stewart; fgmres_iteration.hpp).
///                         Under AMG it fires at almost every step: A M^-1 v_k lies mostly in
///                         the basis's span (docs/performance.md, thirty-second session);
///   classical_once        one: orthogonality lost in proportion to the basis's conditioning;
///   modified              k + 1 dependent reductions at iteration k (the reference CGS2 replaced).
enum class GramSchmidt { classical_twice, classical_if_needed, classical_once, modified };

/// The driver's names: "cgs2", "cgs-ifneeded", "cgs", "mgs"; parse_gram_schmidt throws
/// InputError for any other.
const char* to_string(GramSchmidt how);
GramSchmidt parse_gram_schmidt(const std::string& name);

struct KrylovOptions {
  double rtol = 1e-8;
  int max_iterations = 500;
  int restart = 30;            // GMRES
  GramSchmidt gram_schmidt = GramSchmidt::classical_twice;  // GMRES
  /// Iterations without a new smallest residual before giving up. Generous: CG minimises the
  /// A-norm of the error, and on ill-conditioned SPD matrices (bcsstk13) its residual can
  /// wander above its minimum for well over 50 iterations and still converge.
  int stagnation_window = 200;
  bool history = false;        // record the residual norm of every iteration
};

enum class SolveStatus {
  converged,
  max_iterations,
  indefinite_operator,
  indefinite_preconditioner,
  stagnation,
  breakdown,
  accuracy_limit  // rtol below what double precision attains on this A (detail::FailedConfirmations)
};

const char* to_string(SolveStatus s);

struct SolveResult {
  SolveStatus status = SolveStatus::max_iterations;
  int iterations = 0;
  double relative_residual = 0;    // ||b - A x|| / ||b||, recomputed from x
  std::string message;             // why it stopped, with the numbers
  std::vector<double> history;     // relative residual per iteration (recurrence), if asked
  int second_passes = 0;           // FGMRES: Arnoldi steps whose Gram-Schmidt projected twice
  bool converged() const { return status == SolveStatus::converged; }
};

/// Solves A x = b from the initial guess in x (sized to A's rows).
SolveResult pcg(const Csr<double>& a, const Vector& b, Vector& x, const Preconditioner& m, const KrylovOptions& options,
                const LevelOps& ops = host_reference_ops());

SolveResult fgmres(const Csr<double>& a, const Vector& b, Vector& x, const Preconditioner& m,
                   const KrylovOptions& options, const LevelOps& ops = host_reference_ops());

namespace detail {
/// ||b|| = sqrt(b.b) overflows where b's entries are near 1e200 and vanishes near 1e-200 (b taken
/// for 0). A x = b is linear and the preconditioner a fixed linear operator, so such a b is solved
/// as A y = 2^k b from y = 2^k x, then x = 2^-k y: multiplying by a power of two is exact (where
/// no value leaves the normal range), so the solve takes the unscaled one's steps bit for bit, and
/// rtol, the residuals and the history are relative (scale invariant). k = 0 (b as given, nothing
/// scaled) while b.b lies in [2^-512, 2^512]: ||b|| within 2^+-256 leaves room for b.b over any n,
/// r.r at any rtol and the products with A and M. Outside, k brings ||2^k b|| to [1/2, 1), clamped
/// to [-1022, 1022] (2^k and 2^-k normal). The messages' scalars (p^T A p, r^T z) are the scaled
/// system's. `bb` is b.b as computed (Inf, 0 or subnormal outside the range); `scaled_bb(t)` is
/// (2^t b).(2^t b), the global inner product. Returns k (0 for b = 0). InputError naming `who`
/// where b has a non-finite entry (the device solvers learn it here).
int rhs_scale_exponent(const char* who, double bb, const std::function<double(int)>& scaled_bb);

/// t for which (2^-t v).(2^-t v) is finite exactly where every entry of v is (|v_i| < 2^1024 gives
/// squares below 2^768, for up to 2^63 entries): how a solve tells a v near 1e200 from a
/// non-finite one with a global inner product.
inline constexpr int kProbeExponent = 640;

/// InputError naming `who` unless `probe` (rhs_scale_exponent's (2^-kProbeExponent y).(...) of
/// y = 2^k x) is finite: the initial x, so far from b's scale that 2^k x overflows.
void require_scaled_guess(const char* who, double probe, int k);

/// After a scaled solve: where `probe` (of x = 2^-k y) is not finite, x left double's range (a
/// solution beyond 1.8e308): `result` becomes a breakdown that says so.
void check_unscaled_solution(double probe, int k, SolveResult& result);

/// The solve `solve(b, x, ||b||)` (krylov.hpp's solvers without the scaling) after the checks of
/// sizes, options and finiteness (InputError), on b and x as given, or scaled as
/// rhs_scale_exponent says (x written back unscaled). Collective where `ops` is.
using InRangeSolve = std::function<SolveResult(const Vector& b, Vector& x, double b_norm)>;
SolveResult solve_in_range(const Csr<double>& a, const Vector& b, Vector& x, const KrylovOptions& options,
                           const LevelOps& ops, const InRangeSolve& solve);

/// Recomputed ||b - A x|| / ||b|| into `result`, and its message when it is not yet set.
void finish(const Csr<double>& a, const Vector& b, const Vector& x, double b_norm, const LevelOps& ops,
            SolveResult& result);
/// finish's message ("<status> after <n> iterations, true relative residual <r>") when none is
/// set; the device solvers' finish writes the same.
void set_final_message(SolveResult& result);

/// "<what> = <value> at iteration <it>", the value in %.3e (a breakdown's scalar may be 1e-300).
std::string value_at(int it, const char* what, double value);

/// PCG's stagnation message: no new smallest residual in `window` iterations, the smallest.
std::string stagnation_message(int window, double smallest);

/// PCG's recurrence residual drifts from the true one, b - A x, by rounding. When the recurrence
/// reaches rtol and the true residual does not (a failed confirmation), PCG restarts from the
/// true residual (p = M^-1 r) and records it here. Once a failed confirmation has not halved the
/// smallest true residual before it, rtol is below what double precision attains on this system
/// (A x is rounded by about eps ||A|| ||x||, which an ill-conditioned A makes larger than
/// rtol ||b||): PCG stops with accuracy_limit instead of iterating on rounding noise. On bcsstk19
/// (cond ~1e11) with an exact preconditioner the recurrence fell to 2e-17 at iteration 2 while
/// b - A x stayed near 1e-7, and the iterations that followed drove the true residual to 19 in 200
/// more. Where a solve does not converge after failed confirmations, it returns the iterate of
/// the smallest of them if the last one's true residual is larger. FGMRES applies the same rule
/// to the cycles whose least-squares residual reached rtol (fgmres_iteration.hpp).
struct FailedConfirmations {
  int count = 0;
  double smallest = 0;  // true relative residual, valid once count > 0
  bool halved = true;   // whether the last one at least halved the smallest before it

  /// Records the true relative residual of a failed confirmation; true where it is the new
  /// smallest (the caller keeps that iterate).
  bool record(double residual);
  /// The accuracy_limit message, after a record() that did not halve: `estimate` names the
  /// solver's own residual ("recurrence residual", "least-squares residual").
  std::string limit_message(const char* estimate, double rtol, double last) const;
};
}  // namespace detail

}  // namespace tessera::amg
