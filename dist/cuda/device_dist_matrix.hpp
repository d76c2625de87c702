#pragma once
// DeviceDistMatrix: a DistMatrix's rank-local parts on the rank's GPU (built only with CUDA).
// Both blocks as DeviceCsr (the local one with its SpMV plan, the non-local one with the list of
// its non-empty rows, the only rows its products touch), the halo plan's send indices, and the
// send/ghost work buffers of the exchange (grown on demand for k right-hand sides). The host
// DistMatrix stays the source of truth for the plan (pattern and neighbour lists are host data).
//
// Lifetime: every buffer here is allocated and freed stream-ordered on the DeviceContext's
// compute stream (the exchange buffers are used on its exchange stream), so the DeviceContext
// whose streams made it must outlive it, and so must the host DistMatrix it points to.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "dist/cuda/peer_halo_exchange.hpp"
#include "dist/dist_matrix.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/row_subset_product.hpp"
#include "local/cuda/spmm.hpp"
#include "local/cuda/spmv_plan.hpp"

namespace tessera::dist::gpu {

struct DeviceDistMatrix {
  /// Uploads `a`'s blocks and plan on `stream`; keeps a pointer to `a` (which must outlive it).
  DeviceDistMatrix(const DistMatrix& a, cudaStream_t stream);
  /// The same from `a`'s two blocks already on the device (a device setup made them: their host
  /// copies were downloaded from them), so nothing but the plan is uploaded. Blocks of another
  /// shape or entry count than `a`'s are a logic error (asserted).
  DeviceDistMatrix(const DistMatrix& a, tessera::cuda::DeviceCsr<double>&& local_block,
                   tessera::cuda::DeviceCsr<double>&& nonlocal_block, cudaStream_t stream);

  const DistMatrix* host = nullptr;
  tessera::cuda::DeviceCsr<double> local, nonlocal;
  tessera::cuda::SpmvPlan local_plan;
  tessera::cuda::SpmmPlan local_spmm_plan;  // for the last k > 1 (k == 0: none yet)
  tessera::cuda::RowSubset boundary_rows;   // the rows with ghost columns

  tessera::cuda::DeviceBuffer<std::int64_t> send_local;  // owned index of each sent item
  tessera::cuda::DeviceBuffer<double> send, ghosts;        // NCCL route's exchange buffers (items x k)
  /// The peer route's exchange (its own mapped ghost buffer), made by the first product that
  /// uses the route and remade for a larger k.
  std::unique_ptr<PeerHaloExchange> peer_halo;
  /// Bumped whenever send/ghosts or peer_halo are reallocated (a product with a larger k): a CUDA graph that
  /// captured products on this matrix holds their old addresses and must be captured again.
  std::uint64_t exchange_generation = 0;

  std::int64_t owned_rows() const { return local.rows; }
  std::int64_t owned_cols() const { return local.cols; }
  std::int64_t num_ghosts() const { return nonlocal.cols; }
  /// Re-uploads the values of both blocks after a numeric refresh of the host matrix.
  void refresh_values(cudaStream_t stream);
};

/// The entries a device numeric refresh (DeviceDistSpgemm, DeviceDistPtap) was planned for on
/// this rank by its symbolic phase: operands A and B (or P), and C's two blocks.
struct PlannedCounts {
  std::int64_t a = 0, b = 0, c_local = 0, c_nonlocal = 0;
};

/// Throws the same InputError on every rank when some rank's operands or C hold other counts
/// than `planned` (`who` names the caller, `operands` the pair, e.g. "A and P"). Collective: a
/// refresh calls it before its NCCL exchanges, where a rank throwing alone would leave the
/// others waiting.
void require_planned_counts(const Communicator& comm, const char* who, const char* operands,
                            const DeviceDistMatrix& a, const DeviceDistMatrix& b, const DeviceDistMatrix& c,
                            const PlannedCounts& planned);

}  // namespace tessera::dist::gpu
