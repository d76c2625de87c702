#include "dist/cuda/device_dist_ptap.hpp"

#include <string>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::dist::gpu {

namespace {

/// extended_block(m) with each value the index of its source in [local | non-local].
Csr<double> tagged_extended(const DistMatrix& m) { return extended_block(tagged(m)); }

/// The segmented-sum plan: for C's values in [local | non-local] order, the contributions
/// each one sums, ascending (DistPtap::sum_contributions adds them in index order).
/// `source_of[i]` is contribution i's index into [T's tile values | received values].
void summation_plan(const DistPtap& symbolic, const std::vector<std::int64_t>& source_of,
                    std::vector<std::int64_t>& seg_ptr, std::vector<std::int64_t>& order) {
  const HostArray<std::int64_t>& target = symbolic.contribution_targets();
  DistMatrix c = symbolic.result();
  const std::int64_t entries = c.nnz();
  std::vector<std::int64_t> entry_ptr(static_cast<std::size_t>(entries) + 1, 0);
  for (std::int64_t e : target) ++entry_ptr[e + 1];
  for (std::int64_t e = 0; e < entries; ++e) entry_ptr[e + 1] += entry_ptr[e];
  std::vector<std::int64_t> by_entry(target.size()), at(entry_ptr.begin(), entry_ptr.end() - 1);
  for (std::size_t i = 0; i < target.size(); ++i) by_entry[at[target[i]]++] = source_of[i];

  set_values_in_row_order(c, index_tags(entries));  // block value -> row-order entry
  seg_ptr.assign(1, 0);
  order.clear();
  order.reserve(by_entry.size());
  for (const HostArray<double>* block : {&c.local.values, &c.nonlocal.values})
    for (double v : *block) {
      const auto e = static_cast<std::size_t>(v);
      order.insert(order.end(), by_entry.begin() + entry_ptr[e], by_entry.begin() + entry_ptr[e + 1]);
      seg_ptr.push_back(static_cast<std::int64_t>(order.size()));
    }
}

}  // namespace

DeviceDistPtap::DeviceDistPtap(DeviceContext& ctx, const DistPtap& symbolic, const DistMatrix& a, const DistMatrix& p)
    : ctx_(ctx),
      ap_(ctx, symbolic.ap_product(), a, p),
      a_nnz_(a.nnz()),
      p_nnz_(p.nnz()),
      c_local_nnz_(symbolic.result().local.nnz()),
      c_nonlocal_nnz_(symbolic.result().nonlocal.nnz()),
      p_transposed_(ref::transpose(tagged_extended(p)), ctx.compute()),
      outer_({}, ctx.compute()),
      back_(symbolic.return_pattern()) {
  const cudaStream_t s = ctx.compute();
  const std::int64_t owned_partial = symbolic.owned_partial_entries();
  const std::int64_t t_nnz = owned_partial + back_.send_count();
  multiplies_ = t_nnz > 0;
  std::vector<std::int64_t> tile_of;
  if (multiplies_) {
    outer_.symbolic(p_transposed_.tiles, ap_.product(), t_);
    TESSERA_ASSERT(t_.nnz == t_nnz, "the tile outer product found ", t_.nnz, " entries, the host symbolic phase ", t_nnz);
    tile_of = csr_to_tile_positions(t_, s);  // T's CSR order is the host's contribution order
  }
  send_map_.upload(std::vector<std::int64_t>(tile_of.begin() + owned_partial, tile_of.end()), s);
  send_.allocate(static_cast<std::size_t>(back_.send_count()), s);
  recv_.allocate(static_cast<std::size_t>(back_.recv_count()), s);

  const std::size_t contributions = symbolic.contribution_targets().size();
  TESSERA_ASSERT(static_cast<std::int64_t>(contributions) == owned_partial + back_.recv_count(),
                 "PtAP contributions disagree with the return pattern");
  std::vector<std::int64_t> source_of(contributions);
  for (std::size_t i = 0; i < contributions; ++i)
    source_of[i] = static_cast<std::int64_t>(i) < owned_partial ? tile_of[i] : t_nnz + (static_cast<std::int64_t>(i) - owned_partial);
  std::vector<std::int64_t> seg_ptr, order;
  summation_plan(symbolic, source_of, seg_ptr, order);
  seg_ptr_.upload(seg_ptr, s);
  order_.upload(order, s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
}

void DeviceDistPtap::recompute(DeviceDistMatrix& a, DeviceDistMatrix& p, DeviceDistMatrix& c) {
  require_planned_counts(ctx_.comm(), "DeviceDistPtap::recompute", "A and P", a, p, c,
                         PlannedCounts{a_nnz_, p_nnz_, c_local_nnz_, c_nonlocal_nnz_});
  const cudaStream_t compute = ctx_.compute(), exchange = ctx_.exchange();
  ap_.recompute(matrix_values(a), matrix_values(p));
  p_transposed_.refresh(matrix_values(p), compute);
  if (multiplies_) outer_.numeric(p_transposed_.tiles, ap_.product(), t_);
  const bool exchanges = back_.send_count() > 0 || back_.recv_count() > 0;
  if (exchanges) {
    ctx_.exchange_after_compute();  // T is written on compute
    gather_values(ValueSources().add(t_.values.data(), t_.nnz), send_map_,
                  ValueTargets{send_.data(), back_.send_count(), nullptr}, exchange);
    ctx_.transport().start_exchange(back_, sizeof(double), send_.data(), recv_.data());
    ctx_.transport().finish_exchange();
    ctx_.compute_after_exchange();
  }
  segmented_sum(ValueSources().add(t_.values.data(), t_.nnz).add(recv_.data(), back_.recv_count()), seg_ptr_, order_,
                ValueTargets{c.local.values.data(), c.local.nnz, c.nonlocal.values.data()}, compute);
}

}  // namespace tessera::dist::gpu
