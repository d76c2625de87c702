#pragma once
// The transport seam of the distributed layer. A plan (halo, remote rows, PtAP contributions)
// is data: an ExchangePattern saying how many items go to and come from each neighbour. A
// Transport moves the bytes: HostTransport over MPI for host buffers (the reference backend),
// NcclTransport for device buffers. Ops written against Transport run unchanged on both.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::dist {

enum class ReduceOp { sum, max, min };

/// Point-to-point traffic of one exchange, in items (an item is `item_bytes` long).
/// Items sent to send_ranks[i] are [send_offsets[i], send_offsets[i+1]) of the send buffer;
/// items received from recv_ranks[i] land at [recv_offsets[i], recv_offsets[i+1]).
struct ExchangePattern {
  std::vector<int> send_ranks;
  std::vector<std::int64_t> send_offsets{0};
  std::vector<int> recv_ranks;
  std::vector<std::int64_t> recv_offsets{0};

  std::int64_t send_count() const { return send_offsets.back(); }
  std::int64_t recv_count() const { return recv_offsets.back(); }

  /// The same traffic in the other direction (what goes back from ghosts to owners).
  ExchangePattern reversed() const;

  /// Item-level pattern -> sub-item pattern: item j of the send buffer becomes send_sizes[j]
  /// sub-items (e.g. rows -> row entries). Sizes are listed in buffer order.
  ExchangePattern expanded(const std::vector<std::int64_t>& send_sizes,
                           const std::vector<std::int64_t>& recv_sizes) const;
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Starts one exchange; at most one is in flight per transport. Buffers must stay valid
  /// until finish_exchange returns.
  virtual void start_exchange(const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
                              void* recv) = 0;
  /// Completes the exchange started last (the receive buffer is then filled).
  virtual void finish_exchange() = 0;
  virtual void allreduce(double* data, std::int64_t count, ReduceOp op) = 0;
  virtual void allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) = 0;
};

}  // namespace tessera::dist
