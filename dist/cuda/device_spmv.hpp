#pragma once
// Distributed products with every vector on the device (built only with CUDA):
//   pack x's sent entries and post the grouped NCCL exchange on the exchange stream,
//   multiply the local block on the compute stream meanwhile, then -- once the ghosts arrived
//   (an event joins the streams) -- add the non-local block's product.
// The same order as the host dist::spmv; only the summation order inside a row differs.
// All calls are ordered on ctx.compute() and return without synchronising, unless `stats` is
// given (then each phase is timed with events and the call waits for its end).
#include <cstdint>

#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/stats.hpp"

namespace tessera::dist::gpu {

/// y = alpha * A x + beta * y; x holds a.owned_cols() entries, y a.owned_rows(). beta == 0
/// never reads y.
void spmv(DeviceContext& ctx, DeviceDistMatrix& a, double alpha, const double* x, double beta, double* y,
          DistStats* stats = nullptr);

/// r = b - A x (the smoothers' and PCG's residual).
void residual(DeviceContext& ctx, DeviceDistMatrix& a, const double* x, const double* b, double* r);

/// Y = A X for k right-hand sides, row-major (X: owned_cols x k, Y: owned_rows x k).
void spmm(DeviceContext& ctx, DeviceDistMatrix& a, const double* x, std::int64_t k, double* y,
          DistStats* stats = nullptr);

}  // namespace tessera::dist::gpu
