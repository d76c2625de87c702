#pragma once
// PeerHaloExchange: the halo exchange of one matrix between the GPUs of one node without NCCL
// (built only with CUDA; HaloRoute::peer). Each rank's ghost buffer is a CUDA IPC allocation
// that its sources map, and one kernel per product, on the exchange stream:
//   1. tells each source that its next round may land here (the previous round was consumed:
//      the kernel is ordered after the previous product's non-local block),
//   2. waits until each destination has said the same,
//   3. stores the sent entries of x straight into the destinations' ghost buffers,
//   4. raises an arrival flag in each destination (after a system-scope fence), and
//   5. waits for the arrival flags of its own sources.
// Flags are monotone 64-bit round numbers kept in device memory and counted by the kernel, so a
// captured CUDA graph replays the same kernel round after round. One launch replaces the pack
// kernel and NCCL's group of send/recv kernels: what is left is NVLink latency and the flag
// round trips (measured in docs/performance.md against the NCCL route, side by side).
// Step 1 makes the protocol safe for unsymmetric patterns: a source never overwrites ghosts
// that a non-local block may still read.
// A wait longer than TESSERA_PEER_TIMEOUT_S seconds (default 600; 0 = wait forever) prints
// which flag it waited for and traps, so a dead rank or products called in different orders
// fail the program instead of hanging it.
// Freeing: CUDA leaves it undefined to free an exported allocation that another process still
// maps, so a rank never frees its region when its exchange goes: the region is retired into
// the DeviceContext's RetiredPeerRegions and freed at the next collective construction of an
// exchange, after a barrier (every rank has dropped its mappings by then: ranks create and
// destroy matrices in the same program order, as for every collective).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "dist/transport.hpp"
#include "local/cuda/device_buffer.hpp"

namespace tessera::dist {
class Communicator;
}

namespace tessera::dist::gpu {

/// A neighbour this rank stores into: its mapped ghost buffer and its arrival flag for us.
struct PeerDestination {
  double* ghosts = nullptr;
  unsigned long long* arrival = nullptr;
  int rank = 0;
};

/// A neighbour that stores into this rank: its "you may send" flag for us, mapped.
struct PeerSource {
  unsigned long long* ready = nullptr;
  int rank = 0;
};

/// Exported regions whose exchange is gone, kept until every rank has unmapped them.
class RetiredPeerRegions {
 public:
  RetiredPeerRegions() = default;
  ~RetiredPeerRegions();  // frees what is left: the context (and its GPU work) is ending
  RetiredPeerRegions(const RetiredPeerRegions&) = delete;
  RetiredPeerRegions& operator=(const RetiredPeerRegions&) = delete;
  void retire(void* region, std::size_t bytes);
  /// Collective: a barrier, then frees every region retired before it.
  void free_all(const Communicator& comm);

 private:
  std::vector<std::pair<void*, std::size_t>> regions_;
};

class PeerHaloExchange {
 public:
  /// Collective over `comm` (every rank, also ranks without neighbours; the current device is
  /// the rank's GPU). Frees `retired`'s regions, allocates this rank's ghost buffer for
  /// `k_capacity` doubles a ghost and maps the buffers of its neighbours; its own region goes to
  /// `retired` (which must outlive it) when it is destroyed. `pattern` is the matrix's halo
  /// pattern; an inconsistent one (counts that the neighbours do not mirror) is an InputError on
  /// every rank.
  PeerHaloExchange(const Communicator& comm, const ExchangePattern& pattern, std::int64_t k_capacity,
                   RetiredPeerRegions& retired);
  ~PeerHaloExchange();
  PeerHaloExchange(const PeerHaloExchange&) = delete;
  PeerHaloExchange& operator=(const PeerHaloExchange&) = delete;

  /// Enqueues one round on `stream`: when the stream passes it, ghosts() holds every source's
  /// entries (items x k, row-major) and x's sent entries (owned index send_local[i], k doubles
  /// each) are in the destinations. Every rank with neighbours must call it once per product,
  /// with the same k (<= k_capacity()), in the same order of matrices.
  void exchange(const std::int64_t* send_local, const double* x, std::int64_t k, cudaStream_t stream);

  const double* ghosts() const { return ghosts_; }
  std::int64_t k_capacity() const { return k_capacity_; }
  bool has_neighbours() const { return !destinations_.empty() || !sources_.empty(); }
  /// Device memory this rank holds for the exchange (its mapped buffer and the link tables).
  std::int64_t bytes() const;

 private:
  void allocate_region(int ranks, std::int64_t ghosts);
  void map_neighbours(const Communicator& comm, const ExchangePattern& pattern);
  void release();

  RetiredPeerRegions* retired_ = nullptr;
  std::int64_t k_capacity_ = 1;
  std::int64_t items_ = 0;                 // entries sent per column
  int sm_count_ = 1;
  unsigned long long timeout_ns_ = 0;      // 0: wait forever
  void* region_ = nullptr;                 // cudaMalloc'd, exported: flags, then ghosts
  std::size_t region_bytes_ = 0;
  unsigned long long* arrived_ = nullptr;  // region: arrival flag written by each source rank
  unsigned long long* ready_ = nullptr;    // region: ready flag written by each destination rank
  double* ghosts_ = nullptr;               // region: the ghost values, in ghost order
  std::vector<void*> mapped_;              // neighbours' regions opened here
  std::vector<PeerDestination> destinations_;
  std::vector<PeerSource> sources_;
  tessera::cuda::DeviceBuffer<PeerDestination> destinations_dev_;
  tessera::cuda::DeviceBuffer<PeerSource> sources_dev_;
  tessera::cuda::DeviceBuffer<int> item_destination_;           // link index of each sent item
  tessera::cuda::DeviceBuffer<std::int64_t> item_target_;       // its ghost slot there
  tessera::cuda::DeviceBuffer<unsigned long long> counters_;    // {round, blocks done}
};

}  // namespace tessera::dist::gpu
