#include "dist/cuda/device_dist_spgemm.hpp"

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {

DeviceDistSpgemm::DeviceDistSpgemm(DeviceContext& ctx, const DistSpgemm& symbolic, const DistMatrix& a,
                                   const DistMatrix& b)
    : ctx_(ctx),
      a_nnz_(a.nnz()),
      b_nnz_(b.nnz()),
      c_local_nnz_(symbolic.result().local.nnz()),
      c_nonlocal_nnz_(symbolic.result().nonlocal.nnz()),
      product_(ctx, symbolic.compact(), a, b) {
  if (!product_.multiplies()) return;
  const cudaStream_t s = ctx.compute();
  // C's values are the product's in row order (DistSpgemm::recompute): tag them to find each
  // block value's product entry, then that entry's tile position.
  const std::vector<std::int64_t> tile_of = csr_to_tile_positions(product_.product(), s);
  DistMatrix c = symbolic.result();
  TESSERA_ASSERT(static_cast<std::int64_t>(tile_of.size()) == c.nnz(), "the device product holds ", tile_of.size(),
                 " entries, C ", c.nnz());
  set_values_in_row_order(c, index_tags(c.nnz()));
  std::vector<std::int64_t> map;
  map.reserve(static_cast<std::size_t>(c.nnz()));
  for (double v : c.local.values) map.push_back(tile_of[static_cast<std::size_t>(v)]);
  for (double v : c.nonlocal.values) map.push_back(tile_of[static_cast<std::size_t>(v)]);
  c_map_.upload(map, s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
}

void DeviceDistSpgemm::recompute(DeviceDistMatrix& a, DeviceDistMatrix& b, DeviceDistMatrix& c) {
  require_planned_counts(ctx_.comm(), "DeviceDistSpgemm::recompute", "A and B", a, b, c,
                         PlannedCounts{a_nnz_, b_nnz_, c_local_nnz_, c_nonlocal_nnz_});
  product_.recompute(matrix_values(a), matrix_values(b));
  if (!product_.multiplies()) return;
  const tessera::cuda::DeviceTileMatrix<double>& p = product_.product();
  gather_values(ValueSources().add(p.values.data(), p.nnz), c_map_,
                ValueTargets{c.local.values.data(), c.local.nnz, c.nonlocal.values.data()}, ctx_.compute());
}

}  // namespace tessera::dist::gpu
