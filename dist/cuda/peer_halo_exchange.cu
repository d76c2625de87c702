#include "dist/cuda/peer_halo_exchange.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda/atomic>
#include <map>
#include <string>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {

namespace {

constexpr int kThreads = 256;
constexpr double kDefaultTimeoutSeconds = 600;

/// TESSERA_PEER_TIMEOUT_S (seconds, 0 = never), else the default; in nanoseconds.
unsigned long long timeout_nanoseconds() {
  double seconds = kDefaultTimeoutSeconds;
  if (const char* env = std::getenv("TESSERA_PEER_TIMEOUT_S"); env && *env) {
    char* end = nullptr;
    seconds = std::strtod(env, &end);
    TESSERA_REQUIRE_INPUT(end && *end == '\0' && seconds >= 0, "TESSERA_PEER_TIMEOUT_S='", env,
                          "': give a number of seconds (0: wait forever)");
  }
  return static_cast<unsigned long long>(seconds * 1e9);
}

/// The region of each rank: arrival flags (one per rank, written by that source), ready flags
/// (one per rank, written by that destination), padded to 256 bytes, then the ghost values.
std::size_t flag_bytes(int ranks) {
  const std::size_t bytes = 2 * static_cast<std::size_t>(ranks) * sizeof(unsigned long long);
  return (bytes + 255) / 256 * 256;
}

using SystemFlag = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system>;

__device__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void post(unsigned long long* flag, unsigned long long round) {
  SystemFlag(*flag).store(round, ::cuda::memory_order_release);
}

/// Spins until *flag >= round; past `timeout_ns` (0: never) the kernel traps, after a message
/// when `report` (one block reports, not every block that waits).
__device__ void wait_until(unsigned long long* flag, unsigned long long round, int peer, const char* what,
                           unsigned long long timeout_ns, bool report) {
  SystemFlag f(*flag);
  if (f.load(::cuda::memory_order_acquire) >= round) return;
  const unsigned long long start = global_nanoseconds();
  while (f.load(::cuda::memory_order_acquire) < round) {
    if (timeout_ns && global_nanoseconds() - start > timeout_ns) {
      if (report)
        printf("tessera: peer halo exchange: waited %llu s for rank %d's %s flag of round %llu (a rank failed, "
               "or the ranks ran their products in different orders; TESSERA_PEER_TIMEOUT_S sets the limit)\n",
               timeout_ns / 1000000000ull, peer, what, round);
      __trap();
    }
  }
}

struct RoundArgs {
  const std::int64_t* send_local;
  const double* x;
  std::int64_t k, items;
  const int* item_destination;
  const std::int64_t* item_target;
  const PeerDestination* destinations;
  int num_destinations;
  const PeerSource* sources;
  int num_sources;
  unsigned long long* arrived;   // this rank's flags, by source rank
  unsigned long long* ready;     // this rank's flags, by destination rank
  unsigned long long* counters;  // {last round, blocks done in this round}
  unsigned long long timeout_ns;
};

// One round (see the header). Block 0 posts readiness to the sources before it waits for
// anything (so every rank's posts are made whatever its other blocks do), and only block 0:
// a source's kernel ends once it saw the post, and a later post from another block could land
// after the region was retired. Thread 0 of every block waits for the destinations' posts;
// the last block to finish its stores publishes the arrivals and waits for its own.
__global__ void __launch_bounds__(kThreads) peer_round_kernel(RoundArgs a) {
  __shared__ unsigned long long round;
  if (threadIdx.x == 0) {
    round = a.counters[0] + 1;  // the previous round's kernel wrote it; read before this block counts itself done
    if (blockIdx.x == 0)
      for (int s = 0; s < a.num_sources; ++s) post(a.sources[s].ready, round);
    for (int d = 0; d < a.num_destinations; ++d)
      wait_until(&a.ready[a.destinations[d].rank], round, a.destinations[d].rank, "ready", a.timeout_ns,
                 blockIdx.x == 0);
  }
  __syncthreads();
  const std::int64_t total = a.items * a.k;
  for (std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * kThreads) {
    const std::int64_t item = i / a.k, col = i - item * a.k;
    double* ghosts = a.destinations[a.item_destination[item]].ghosts;
    ghosts[a.item_target[item] * a.k + col] = a.x[a.send_local[item] * a.k + col];
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  // The block's stores (ordered before thread 0 by the barrier) are released at system scope
  // before the block counts itself done; the last block acquires every count, so its arrival
  // flags are seen after every block's values.
  ::cuda::atomic_thread_fence(::cuda::memory_order_release, ::cuda::thread_scope_system);
  if (atomicAdd(&a.counters[1], 1ull) != gridDim.x - 1) return;
  ::cuda::atomic_thread_fence(::cuda::memory_order_acquire, ::cuda::thread_scope_system);
  a.counters[1] = 0;
  for (int d = 0; d < a.num_destinations; ++d) post(a.destinations[d].arrival, round);
  for (int s = 0; s < a.num_sources; ++s)
    wait_until(&a.arrived[a.sources[s].rank], round, a.sources[s].rank, "arrival", a.timeout_ns, true);
  a.counters[0] = round;
}

}  // namespace

RetiredPeerRegions::~RetiredPeerRegions() {
  if (regions_.empty()) return;
  cudaDeviceSynchronize();
  for (const auto& [region, bytes] : regions_) {
    cudaFree(region);
    tessera::cuda::DeviceMemory::add(-static_cast<std::int64_t>(bytes));
  }
}

void RetiredPeerRegions::retire(void* region, std::size_t bytes) { regions_.emplace_back(region, bytes); }

void RetiredPeerRegions::free_all(const Communicator& comm) {
  comm.barrier();  // every rank has closed its mappings of the regions retired before this point
  for (const auto& [region, bytes] : regions_) {
    TESSERA_CUDA_CHECK(cudaFree(region));
    tessera::cuda::DeviceMemory::add(-static_cast<std::int64_t>(bytes));
  }
  regions_.clear();
}

PeerHaloExchange::PeerHaloExchange(const Communicator& comm, const ExchangePattern& pattern, std::int64_t k_capacity,
                                   RetiredPeerRegions& retired)
    : retired_(&retired), k_capacity_(k_capacity), items_(pattern.send_count()) {
  TESSERA_REQUIRE_INPUT(k_capacity >= 1, "peer halo exchange: k_capacity must be at least 1, got ", k_capacity);
  try {
    retired.free_all(comm);
    call_collectively(comm, "peer halo exchange: allocating the ghost buffer", [&] {
      int device = 0;
      TESSERA_CUDA_CHECK(cudaGetDevice(&device));
      TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
      timeout_ns_ = timeout_nanoseconds();
      allocate_region(comm.size(), pattern.recv_count());
    });
    map_neighbours(comm, pattern);
  } catch (...) {
    release();
    throw;
  }
}

PeerHaloExchange::~PeerHaloExchange() { release(); }

void PeerHaloExchange::allocate_region(int ranks, std::int64_t ghosts) {
  const std::size_t flags = flag_bytes(ranks);
  const std::size_t bytes = flags + static_cast<std::size_t>(ghosts * k_capacity_) * sizeof(double);
  // cudaMalloc, not the stream-ordered pool: legacy CUDA IPC exports cudaMalloc allocations.
  const cudaError_t status = cudaMalloc(&region_, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    region_ = nullptr;
    throw DeviceError(detail::concat("peer halo exchange: cudaMalloc of ", bytes,
                                     " bytes for the ghost buffer failed: ", cudaGetErrorString(status)));
  }
  region_bytes_ = bytes;
  tessera::cuda::DeviceMemory::add(static_cast<std::int64_t>(bytes));
  // Zeroed flags mean round 0; the neighbours map the region only after this completes.
  TESSERA_CUDA_CHECK(cudaMemset(region_, 0, bytes));
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  arrived_ = static_cast<unsigned long long*>(region_);
  ready_ = arrived_ + ranks;
  ghosts_ = reinterpret_cast<double*>(static_cast<char*>(region_) + flags);
}

void PeerHaloExchange::map_neighbours(const Communicator& comm, const ExchangePattern& p) {
  const int ranks = comm.size(), me = comm.rank();
  cudaIpcMemHandle_t mine{};
  call_collectively(comm, "peer halo exchange: exporting the ghost buffer",
                    [&] { TESSERA_CUDA_CHECK(cudaIpcGetMemHandle(&mine, region_)); });
  std::vector<cudaIpcMemHandle_t> handles(static_cast<std::size_t>(ranks));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, handles.data(), sizeof mine, MPI_BYTE, comm.mpi());

  // Each rank tells every source how many items it expects and where they land in its ghosts.
  std::vector<std::int64_t> expects(static_cast<std::size_t>(ranks), 0), slot(static_cast<std::size_t>(ranks), -1);
  for (std::size_t i = 0; i < p.recv_ranks.size(); ++i) {
    expects[p.recv_ranks[i]] = p.recv_offsets[i + 1] - p.recv_offsets[i];
    slot[p.recv_ranks[i]] = p.recv_offsets[i];
  }
  const std::vector<std::int64_t> expected_from_me = comm.alltoall(expects);
  const std::vector<std::int64_t> my_slot = comm.alltoall(slot);
  std::vector<std::int64_t> sending(static_cast<std::size_t>(ranks), 0);
  for (std::size_t i = 0; i < p.send_ranks.size(); ++i) sending[p.send_ranks[i]] += p.send_offsets[i + 1] - p.send_offsets[i];
  std::string error;
  for (int r = 0; r < ranks && error.empty(); ++r)
    if (sending[r] != expected_from_me[r])
      error = detail::concat("peer halo exchange: rank ", me, " sends ", sending[r], " items to rank ", r,
                             ", which expects ", expected_from_me[r]);
  throw_if_any_rank_failed(comm, error);

  std::vector<int> item_destination(static_cast<std::size_t>(items_));
  std::vector<std::int64_t> item_target(static_cast<std::size_t>(items_));
  for (std::size_t i = 0; i < p.send_ranks.size(); ++i) {
    if (p.send_offsets[i + 1] == p.send_offsets[i]) continue;
    const int link = static_cast<int>(destinations_.size());
    for (std::int64_t j = p.send_offsets[i]; j < p.send_offsets[i + 1]; ++j) {
      item_destination[j] = link;
      item_target[j] = my_slot[p.send_ranks[i]] + (j - p.send_offsets[i]);
    }
    destinations_.push_back({nullptr, nullptr, p.send_ranks[i]});
  }
  for (std::size_t i = 0; i < p.recv_ranks.size(); ++i)
    if (p.recv_offsets[i + 1] > p.recv_offsets[i]) sources_.push_back({nullptr, p.recv_ranks[i]});

  call_collectively(comm, "peer halo exchange: mapping the neighbours' ghost buffers", [&] {
    std::map<int, char*> opened;
    auto region_of = [&](int r) {
      auto it = opened.find(r);
      if (it != opened.end()) return it->second;
      void* base = nullptr;
      TESSERA_CUDA_CHECK(cudaIpcOpenMemHandle(&base, handles[r], cudaIpcMemLazyEnablePeerAccess));
      mapped_.push_back(base);
      return opened[r] = static_cast<char*>(base);
    };
    for (PeerDestination& d : destinations_) {
      char* base = region_of(d.rank);
      d.arrival = reinterpret_cast<unsigned long long*>(base) + me;  // its arrival flag for us
      d.ghosts = reinterpret_cast<double*>(base + flag_bytes(ranks));
    }
    for (PeerSource& s : sources_) s.ready = reinterpret_cast<unsigned long long*>(region_of(s.rank)) + ranks + me;
    destinations_dev_.upload(destinations_);
    sources_dev_.upload(sources_);
    item_destination_.upload(item_destination);
    item_target_.upload(item_target);
    counters_.allocate(2);
    counters_.fill_bytes(0);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  });
}

void PeerHaloExchange::exchange(const std::int64_t* send_local, const double* x, std::int64_t k, cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(k >= 1 && k <= k_capacity_, "peer halo exchange: k = ", k, " outside [1, ", k_capacity_, "]");
  if (!has_neighbours()) return;
  const std::int64_t total = items_ * k;
  const int blocks = static_cast<int>(std::clamp<std::int64_t>((total + kThreads - 1) / kThreads, 1, 2 * sm_count_));
  const RoundArgs args{send_local, x, k, items_, item_destination_.data(), item_target_.data(),
                       destinations_dev_.data(), static_cast<int>(destinations_.size()),
                       sources_dev_.data(), static_cast<int>(sources_.size()),
                       arrived_, ready_, counters_.data(), timeout_ns_};
  peer_round_kernel<<<blocks, kThreads, 0, stream>>>(args);
  TESSERA_CHECK_LAUNCH();
}

std::int64_t PeerHaloExchange::bytes() const {
  return static_cast<std::int64_t>(region_bytes_ + destinations_dev_.bytes() + sources_dev_.bytes() +
                                   item_destination_.bytes() + item_target_.bytes() + counters_.bytes());
}

void PeerHaloExchange::release() {
  // The last round must be over before the mappings go; a device-wide wait, as the stream may
  // be gone already (errors here are not actionable).
  if (!mapped_.empty() || region_) cudaDeviceSynchronize();
  for (void* base : mapped_) cudaIpcCloseMemHandle(base);
  mapped_.clear();
  if (region_ && retired_) retired_->retire(region_, region_bytes_);
  region_ = nullptr;
  region_bytes_ = 0;
}

}  // namespace tessera::dist::gpu
