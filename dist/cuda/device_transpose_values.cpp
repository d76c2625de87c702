// Host code only: the device refresh of R = P^T's values (gathers and one NCCL exchange).
#include "dist/cuda/device_transpose_values.hpp"

#include <vector>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {

namespace {

/// The host map numbers P's non-local values from 0; the device reads P as [local | non-local].
std::vector<std::int64_t> shifted(const HostArray<std::int64_t>& sources, std::int64_t by) {
  std::vector<std::int64_t> out(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) out[i] = sources[i] + by;
  return out;
}

/// received item i -> R.nonlocal value target[i], inverted: R.nonlocal value k <- received item.
std::vector<std::int64_t> inverted(const HostArray<std::int64_t>& target) {
  std::vector<std::int64_t> source(target.size(), -1);
  for (std::size_t i = 0; i < target.size(); ++i) {
    TESSERA_ASSERT(target[i] >= 0 && static_cast<std::size_t>(target[i]) < target.size() && source[target[i]] < 0,
                   "transpose value map: received items are not one per entry of R's non-local block");
    source[target[i]] = static_cast<std::int64_t>(i);
  }
  return source;
}

}  // namespace

DeviceTransposeValues::DeviceTransposeValues(DeviceContext& ctx, const TransposeValueMap& map)
    : ctx_(ctx),
      pattern_(map.pattern),
      p_local_entries_(map.p_local_entries),
      p_entries_(map.p_local_entries + map.p_nonlocal_entries) {
  const cudaStream_t s = ctx.compute();
  local_source_.upload(std::vector<std::int64_t>(map.local_source.begin(), map.local_source.end()), s);
  send_source_.upload(shifted(map.send_source, map.p_local_entries), s);
  nonlocal_source_.upload(inverted(map.received_target), s);
  send_.allocate(static_cast<std::size_t>(pattern_.send_count()), s);
  recv_.allocate(static_cast<std::size_t>(pattern_.recv_count()), s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // the exchange stream uses the buffers next
}

void DeviceTransposeValues::refresh(const ValueSources& p_values, const ValueTargets& r) {
  TESSERA_ASSERT(p_values.size() == p_entries_ && r.first_size == r_local_entries(),
                 "DeviceTransposeValues: operands of other sizes than the map's");
  const cudaStream_t compute = ctx_.compute();
  const bool exchanges = pattern_.send_count() > 0 || pattern_.recv_count() > 0;
  if (exchanges) {
    ctx_.exchange_after_compute();  // P's values were written on compute
    gather_values(p_values, send_source_, ValueTargets{send_.data(), pattern_.send_count(), nullptr}, ctx_.exchange());
    ctx_.transport().start_exchange(pattern_, sizeof(double), send_.data(), recv_.data());
    ctx_.transport().finish_exchange();
  }
  gather_values(p_values, local_source_, ValueTargets{r.first, r_local_entries(), nullptr}, compute);  // overlaps it
  if (exchanges) ctx_.compute_after_exchange();
  gather_values(ValueSources().add(recv_.data(), pattern_.recv_count()), nonlocal_source_,
                ValueTargets{r.second, r_nonlocal_entries(), nullptr}, compute);
}

}  // namespace tessera::dist::gpu
