#include "dist/cuda/device_compact_spgemm.hpp"

#include "dist/communicator.hpp"
#include "dist/cuda/device_extended_block.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {

namespace {

/// A_ext exactly as CompactSpgemm built it, each value the index of its source in A: made on the
/// device from a held copy ([owned | ghost] columns like every A_ext, by definition) or shared
/// with the product that made it there, else tagged on the host. When the symbolic phase did not
/// keep A_ext on the host, only its entry count can be checked.
std::shared_ptr<TiledOperand> a_ext_operand(const CompactSpgemm& symbolic, const DistMatrix& a, HeldOperand* held,
                                            cudaStream_t stream) {
  const auto refuse = [&](std::int64_t entries) {
    TESSERA_REQUIRE_INPUT(false, "device product: rank ", a.rank, "'s A (", entries,
                          " entries) is not the matrix the symbolic phase saw (", symbolic.a_entries(), ")");
  };
  if (held) {
    const std::int64_t entries = held->matrix->local.nnz + held->matrix->nonlocal.nnz;
    if (entries != symbolic.a_entries()) refuse(entries);
    if (!held->ext)
      held->ext = std::make_shared<TiledOperand>(tagged_extended_block(*held->matrix, stream),
                                                 TiledOperand::Orientation::as_is, stream);
    return held->ext;
  }
  Csr<double> ext = extended_block(tagged(a));
  const bool same = symbolic.a_extended_on_host()
                        ? ext.row_ptr == symbolic.a_extended().row_ptr && ext.col_idx == symbolic.a_extended().col_idx
                        : ext.nnz() == symbolic.a_entries();
  if (!same) refuse(ext.nnz());
  return std::make_shared<TiledOperand>(ext, stream);
}

/// B_ext with sources [B's local | B's non-local | received values]: B's owned rows in row
/// order (CompactSpgemm::fill_b_values), then RemoteRows' values in arrival order.
Csr<double> tagged_b_ext(const CompactSpgemm& symbolic, const DistMatrix& b) {
  Csr<double> ext = symbolic.b_extended();
  HostArray<double> values = values_in_row_order(tagged(b));
  const std::int64_t received = symbolic.remote_rows().entry_pattern().recv_count();
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(values.size()) + received == ext.nnz(), "device product: rank ",
                        b.rank, "'s B holds ", values.size(), " entries, the symbolic phase saw ", ext.nnz() - received);
  const HostArray<double> remote = index_tags(received, b.nnz());
  values.insert(values.end(), remote.begin(), remote.end());
  ext.values = std::move(values);
  return ext;
}

/// B's value index of every entry RemoteRows sends, in send order.
std::vector<std::int64_t> send_sources(const CompactSpgemm& symbolic, const DistMatrix& b) {
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

DeviceCompactSpgemm::DeviceCompactSpgemm(DeviceContext& ctx, const CompactSpgemm& symbolic, const DistMatrix& a,
                                         const DistMatrix& b, HeldOperand* held_a)
    : ctx_(ctx),
      entries_(symbolic.remote_rows().entry_pattern()),
      a_ext_(a_ext_operand(symbolic, a, held_a, ctx.compute())),
      b_ext_(tagged_b_ext(symbolic, b), ctx.compute()),
      multiplies_(symbolic.product_entries() > 0),
      product_({}, ctx.compute()) {
  TESSERA_ASSERT(symbolic.product_entries() >= 0, "DeviceCompactSpgemm: the host product has not multiplied yet");
  const cudaStream_t s = ctx.compute();
  send_map_.upload(send_sources(symbolic, b), s);
  send_.allocate(static_cast<std::size_t>(entries_.send_count()), s);
  recv_.allocate(static_cast<std::size_t>(entries_.recv_count()), s);
  if (multiplies_) {
    product_.symbolic(a_ext_->tiles, b_ext_.tiles, c_);
    TESSERA_ASSERT(c_.nnz == symbolic.product_entries(), "the tile SpGEMM found ", c_.nnz,
                   " entries of the local product, the host symbolic phase ", symbolic.product_entries());
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // the exchange stream uses the buffers next
}

void DeviceCompactSpgemm::recompute(const ValueSources& a_values, const ValueSources& b_values) {
  const cudaStream_t compute = ctx_.compute(), exchange = ctx_.exchange();
  const bool exchanges = entries_.send_count() > 0 || entries_.recv_count() > 0;
  if (exchanges) {
    // B's values were written on compute; the last recompute read recv_ there too.
    ctx_.exchange_after_compute();
    gather_values(b_values, send_map_, ValueTargets{send_.data(), entries_.send_count(), nullptr}, exchange);
    ctx_.transport().start_exchange(entries_, sizeof(double), send_.data(), recv_.data());
    ctx_.transport().finish_exchange();
  }
  a_ext_->refresh(a_values, compute);  // overlaps the exchange
  if (exchanges) ctx_.compute_after_exchange();
  ValueSources b_all = b_values;
  b_ext_.refresh(b_all.add(recv_.data(), entries_.recv_count()), compute);
  if (multiplies_) product_.numeric(a_ext_->tiles, b_ext_.tiles, c_);
}

}  // namespace tessera::dist::gpu
