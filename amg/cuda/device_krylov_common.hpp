#pragma once
// What the device Krylov solvers (device_pcg, device_fgmres) share: the device counterparts of
// amg/krylov.hpp's detail::check_system and detail::finish, over a DeviceOperator.
#include <cstdint>

#include "amg/cuda/device_operator.hpp"
#include "amg/krylov.hpp"

namespace tessera::amg::gpu::detail {

/// ||x|| over the operator's rows (collective for a distributed operator).
double device_norm(DeviceOperator& a, const double* x);

/// Checks A square, the options (restart only where `uses_restart`) and finiteness through
/// ||b||^2 and ||x||^2 (a non-finite entry makes them non-finite, so the row is not named);
/// InputError naming `who`, alike on every rank. Returns ||b||.
double check_device_system(const char* who, DeviceOperator& a, const double* b, const double* x,
                           const KrylovOptions& options, bool uses_restart);

/// The true relative residual from x into `result` (r is device scratch of rows() entries), and
/// the message detail::finish writes when none is set.
void finish_device_solve(DeviceOperator& a, const double* b, const double* x, double b_norm, double* r,
                         SolveResult& result);

}  // namespace tessera::amg::gpu::detail
