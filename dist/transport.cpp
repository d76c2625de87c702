#include "dist/transport.hpp"

#include "local/core/error.hpp"

namespace tessera::dist {

ExchangePattern ExchangePattern::reversed() const {
  return ExchangePattern{recv_ranks, recv_offsets, send_ranks, send_offsets};
}

namespace {
// Regroups per-item sizes into per-neighbour offsets of sub-items.
std::vector<std::int64_t> expand_offsets(const std::vector<std::int64_t>& item_offsets,
                                         const std::vector<std::int64_t>& sizes) {
  TESSERA_ASSERT(static_cast<std::int64_t>(sizes.size()) == item_offsets.back(), "expected ", item_offsets.back(),
                 " item sizes, got ", sizes.size());
  std::vector<std::int64_t> out(item_offsets.size(), 0);
  for (std::size_t n = 0; n + 1 < item_offsets.size(); ++n) {
    std::int64_t total = 0;
    for (std::int64_t j = item_offsets[n]; j < item_offsets[n + 1]; ++j) total += sizes[j];
    out[n + 1] = out[n] + total;
  }
  return out;
}
}  // namespace

ExchangePattern ExchangePattern::expanded(const std::vector<std::int64_t>& send_sizes,
                                          const std::vector<std::int64_t>& recv_sizes) const {
  return ExchangePattern{send_ranks, expand_offsets(send_offsets, send_sizes), recv_ranks,
                         expand_offsets(recv_offsets, recv_sizes)};
}

}  // namespace tessera::dist
