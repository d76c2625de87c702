#include "dist/cuda/device_dist_spgemm.hpp"

#include <string>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {

namespace {

/// A_ext exactly as DistSpgemm built it, each value the index of its source in A.
Csr<double> tagged_a_ext(const DistSpgemm& symbolic, const DistMatrix& a) {
  Csr<double> ext = extended_block(tagged(a));
  const Csr<double>& seen = symbolic.a_extended();
  TESSERA_REQUIRE_INPUT(ext.row_ptr == seen.row_ptr && ext.col_idx == seen.col_idx, "DeviceDistSpgemm: rank ", a.rank,
                        "'s A (", a.nnz(), " entries) is not the matrix the symbolic phase saw (", seen.nnz(), ")");
  return ext;
}

/// B_ext with sources [B's local | B's non-local | received values]: B's owned rows in row
/// order (DistSpgemm::fill_b_values), then RemoteRows' values in arrival order.
Csr<double> tagged_b_ext(const DistSpgemm& symbolic, const DistMatrix& b) {
  Csr<double> ext = symbolic.b_extended();
  std::vector<double> values = values_in_row_order(tagged(b));
  const std::int64_t received = symbolic.remote_rows().entry_pattern().recv_count();
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(values.size()) + received == ext.nnz(), "DeviceDistSpgemm: rank ",
                        b.rank, "'s B holds ", values.size(), " entries, the symbolic phase saw ", ext.nnz() - received);
  const std::vector<double> remote = index_tags(received, b.nnz());
  values.insert(values.end(), remote.begin(), remote.end());
  ext.values = std::move(values);
  return ext;
}

/// B's value index of every entry RemoteRows sends, in send order.
std::vector<std::int64_t> send_sources(const DistSpgemm& symbolic, const DistMatrix& b) {
  const RowBlock rows = owned_row_block(tagged(b));
  std::vector<std::int64_t> map;
  for (std::int64_t row : symbolic.remote_rows().send_rows())
    for (std::int64_t k = rows.row_ptr[row]; k < rows.row_ptr[row + 1]; ++k)
      map.push_back(static_cast<std::int64_t>(rows.values[k]));
  TESSERA_ASSERT(static_cast<std::int64_t>(map.size()) == symbolic.remote_rows().entry_pattern().send_count(),
                 "the remote-row send list disagrees with its entry pattern");
  return map;
}

}  // namespace

DeviceDistSpgemm::DeviceDistSpgemm(DeviceContext& ctx, const DistSpgemm& symbolic, const DistMatrix& a,
                                   const DistMatrix& b)
    : ctx_(ctx),
      a_nnz_(a.nnz()),
      b_nnz_(b.nnz()),
      c_local_nnz_(symbolic.result().local.nnz()),
      c_nonlocal_nnz_(symbolic.result().nonlocal.nnz()),
      entries_(symbolic.remote_rows().entry_pattern()),
      a_ext_(tagged_a_ext(symbolic, a), ctx.compute()),
      b_ext_(tagged_b_ext(symbolic, b), ctx.compute()),
      multiplies_(symbolic.result().nnz() > 0),
      product_({}, ctx.compute()) {
  const cudaStream_t s = ctx.compute();
  send_map_.upload(send_sources(symbolic, b), s);
  send_.allocate(static_cast<std::size_t>(entries_.send_count()), s);
  recv_.allocate(static_cast<std::size_t>(entries_.recv_count()), s);
  if (!multiplies_) {
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // the exchange stream uses the buffers next
    return;
  }
  product_.symbolic(a_ext_.tiles, b_ext_.tiles, c_ext_);
  TESSERA_ASSERT(c_ext_.nnz == symbolic.result().nnz(), "the tile SpGEMM found ", c_ext_.nnz,
                 " entries of C, the host symbolic phase ", symbolic.result().nnz());
  // C's values are the product's in row order (DistSpgemm::recompute): tag them to find each
  // block value's product entry, then that entry's tile position.
  const std::vector<std::int64_t> tile_of = csr_to_tile_positions(c_ext_, s);
  DistMatrix c = symbolic.result();
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
  recompute(matrix_values(a), matrix_values(b), ValueTargets{c.local.values.data(), c.local.nnz, c.nonlocal.values.data()});
}

void DeviceDistSpgemm::recompute(const ValueSources& a_values, const ValueSources& b_values,
                                 const ValueTargets& c_values) {
  const cudaStream_t compute = ctx_.compute(), exchange = ctx_.exchange();
  const bool exchanges = entries_.send_count() > 0 || entries_.recv_count() > 0;
  if (exchanges) {
    // B's values were written on compute; the last recompute read recv_ there too.
    ctx_.exchange_after_compute();
    gather_values(b_values, send_map_, ValueTargets{send_.data(), entries_.send_count(), nullptr}, exchange);
    ctx_.transport().start_exchange(entries_, sizeof(double), send_.data(), recv_.data());
    ctx_.transport().finish_exchange();
  }
  a_ext_.refresh(a_values, compute);  // overlaps the exchange
  if (exchanges) ctx_.compute_after_exchange();
  ValueSources b_all = b_values;
  b_ext_.refresh(b_all.add(recv_.data(), entries_.recv_count()), compute);
  if (!multiplies_) return;
  product_.numeric(a_ext_.tiles, b_ext_.tiles, c_ext_);
  gather_values(ValueSources().add(c_ext_.values.data(), c_ext_.nnz), c_map_, c_values, compute);
}

}  // namespace tessera::dist::gpu
