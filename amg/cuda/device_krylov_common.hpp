#pragma once
// What the device Krylov solvers (device_pcg, device_fgmres) share: the device counterparts of
// amg/krylov.hpp's detail::solve_in_range and detail::finish, over a DeviceOperator.
#include <cstdint>
#include <functional>

#include "amg/cuda/device_operator.hpp"
#include "amg/krylov.hpp"

namespace tessera::amg::gpu::detail {

/// ||x|| over the operator's rows (collective for a distributed operator).
double device_norm(DeviceOperator& a, const double* x);

/// A device solver without the scaling: `solve(b, x, ||b||)`.
using DeviceInRangeSolve = std::function<SolveResult(const double* b, double* x, double b_norm)>;

/// Checks A square, the options (restart only where `uses_restart`) and finiteness (InputError
/// naming `who`, alike on every rank), then runs `solve` on b and x as given, or scaled into range
/// as amg::detail::solve_in_range does (device buffers for 2^k b and 2^k x, made only then; x
/// written back unscaled). Finiteness from global inner products, so the row is not named: b.b
/// and x.x, and where one is not finite, that of 2^-640 times the vector (b.b of a finite b near
/// 1e200 overflows too; amg::detail::kProbeExponent).
SolveResult solve_device_in_range(const char* who, DeviceOperator& a, const double* b, double* x,
                                  const KrylovOptions& options, bool uses_restart, const DeviceInRangeSolve& solve);

/// The true relative residual from x into `result` (r is device scratch of rows() entries), and
/// the message detail::finish writes when none is set.
void finish_device_solve(DeviceOperator& a, const double* b, const double* x, double b_norm, double* r,
                         SolveResult& result);

}  // namespace tessera::amg::gpu::detail
