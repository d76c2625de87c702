#pragma once
// Distributed products with every vector on the device (built only with CUDA):
//   exchange x's sent entries on the exchange stream (the context's halo route: a pack kernel
//   and grouped NCCL send/recv, or one peer kernel storing into the neighbours' ghost buffers),
//   multiply the local block on the compute stream meanwhile, then -- once the ghosts arrived
//   (an event joins the streams) -- add the non-local block's product.
// The same order as the host dist::spmv; only the summation order inside a row differs, and
// both routes deliver the same ghosts, so results do not depend on the route.
// Every product is collective over ctx.comm() (every rank calls it, in the same order; the
// first one with the peer route also maps the neighbours' buffers). All calls are ordered on
// ctx.compute() and return without synchronising, unless `stats` is given (then each phase is
// timed with events and the call waits for its end).
#include <cstdint>

#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/stats.hpp"
#include "local/cuda/device_buffer.hpp"

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

/// out[i, :] = x[index[i], :] for `items` rows of k doubles (the halo pack; also the local
/// gather of ghost values from a vector every rank holds whole).
void gather_rows(std::int64_t items, std::int64_t k, const std::int64_t* index, const double* x, double* out,
                 cudaStream_t stream);

/// y = alpha * A x + beta * y where this rank holds all of x (`x_whole`, indexed by A's global
/// columns, e.g. the solution of replicated coarse levels): the ghost values are gathered from
/// x_whole on the GPU instead of exchanged, and the local block reads x_whole at A's first
/// owned column. Rank-local, no communication; every call ordered on `stream` (the gathered
/// ghosts are one buffer, reused by each call).
class ReplicatedInputSpmv {
 public:
  /// Uploads A's ghost column list; keeps a reference to `a` (which must outlive it).
  ReplicatedInputSpmv(DeviceDistMatrix& a, cudaStream_t stream);
  void apply(double alpha, const double* x_whole, double beta, double* y);
  std::int64_t bytes() const { return std::int64_t(ghost_cols_.bytes() + ghosts_.bytes()); }

 private:
  DeviceDistMatrix& a_;
  cudaStream_t stream_;
  std::int64_t first_col_ = 0;                             // A's first owned global column
  tessera::cuda::DeviceBuffer<std::int64_t> ghost_cols_;  // global column of each ghost
  tessera::cuda::DeviceBuffer<double> ghosts_;            // their values, gathered per product
};

}  // namespace tessera::dist::gpu
