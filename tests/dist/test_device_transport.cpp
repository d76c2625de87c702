// A device transport against HostTransport: the same halo pattern moved once through MPI on
// host buffers and once through the device transport on device buffers gives the same ghosts;
// allreduce likewise. allgatherv on device buffers (doubles, int32 and int64 items) against the
// block layout it promises (uneven and zero counts, all empty, in place), and its bad offsets
// rejected on every rank.
// Built twice (tests/dist/tests.cmake): with TESSERA_TEST_STAGED_TRANSPORT it tests
// StagedTransport (ranks may share a GPU) and the choice of transport, else NcclTransport
// (a GPU per rank). Label gpu: exit 77 where the ranks lack the GPUs it needs.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <type_traits>

#include "dist/nccl_transport.hpp"
#include "dist/rank_device.hpp"
#include "dist/staged_transport.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist {
namespace {

/// The transport under test on this rank's device, ordered on `stream` (created on it by the caller).
std::unique_ptr<DeviceTransport> transport_under_test(const Communicator& comm, int device, cudaStream_t stream) {
#if defined(TESSERA_TEST_STAGED_TRANSPORT)
  return std::make_unique<StagedTransport>(comm, device, stream);
#else
  return std::make_unique<NcclTransport>(comm, device, stream);
#endif
}

/// A stream on this rank's GPU (made current), destroyed with the scope.
struct RankStream {
  cudaStream_t stream = nullptr;
  int device = -1;
  explicit RankStream(const Communicator& comm) : device(rank_device(comm).index) {
    TESSERA_CUDA_CHECK(cudaSetDevice(device));
    TESSERA_CUDA_CHECK(cudaStreamCreate(&stream));
  }
  ~RankStream() { cudaStreamDestroy(stream); }
};

using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* d = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), std::max<std::size_t>(1, host.size()) * sizeof(T)));
  TESSERA_CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

TEST(DeviceTransport, HaloExchangeAndAllreduceMatchTheHostTransport) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const RankStream rs(comm);  // the stream lives on the rank's device
  const cudaStream_t stream = rs.stream;
  const std::unique_ptr<DeviceTransport> owned_transport = transport_under_test(comm, rs.device, stream);
  DeviceTransport& transport = *owned_transport;
  SCOPED_TRACE(std::string("transport ") + transport.name());

  const Csr<double> a = random_csr(RandomSpec{301, 301, 0.05, 0.1, 0.1, false}, seed);
  const RowPartition p = testing::uneven_partition(comm, a.rows, seed + 1);
  const DistMatrix da = testing::distribute(comm, a, p, p);
  const std::int64_t k = 3;
  std::vector<double> owned(static_cast<std::size_t>(da.local.cols * k));
  for (std::size_t i = 0; i < owned.size(); ++i) owned[i] = static_cast<double>(p.begin(comm.rank()) * k + i);
  std::vector<double> send(static_cast<std::size_t>(da.halo.num_sent() * k));
  da.halo.pack(owned.data(), k, send.data());
  std::vector<double> host_ghosts(static_cast<std::size_t>(da.halo.num_ghosts() * k));
  exchange(comm, da.halo.pattern, k * sizeof(double), send.data(), host_ghosts.data());

  // The sent values arrive by a copy queued on the transport's stream just before: the exchange
  // must read them in stream order, not what the buffer held when it was called.
  double* d_send = device_copy(std::vector<double>(send.size(), -3.0));
  double* d_ghosts = device_copy(std::vector<double>(host_ghosts.size(), -1.0));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(d_send, send.data(), send.size() * sizeof(double), cudaMemcpyHostToDevice, stream));
  transport.start_exchange(da.halo.pattern, k * sizeof(double), d_send, d_ghosts);
  transport.finish_exchange();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> device_ghosts(host_ghosts.size());
  TESSERA_CUDA_CHECK(cudaMemcpy(device_ghosts.data(), d_ghosts, device_ghosts.size() * sizeof(double), cudaMemcpyDeviceToHost));
  EXPECT_EQ(device_ghosts, host_ghosts);
  // Ghost j, column c holds global index ghost_cols[j]*k + c by construction.
  for (std::size_t j = 0; j < da.ghost_cols.size(); ++j) EXPECT_EQ(host_ghosts[j * k], static_cast<double>(da.ghost_cols[j] * k));

  std::vector<double> values{1.0 + comm.rank(), -2.0 * comm.rank()};
  double* d_values = device_copy(values);
  transport.allreduce(d_values, 2, ReduceOp::sum);
  TESSERA_CUDA_CHECK(cudaMemcpy(values.data(), d_values, 2 * sizeof(double), cudaMemcpyDeviceToHost));
  const double ranks = comm.size();
  EXPECT_EQ(values[0], ranks + ranks * (ranks - 1) / 2);
  EXPECT_EQ(values[1], -ranks * (ranks - 1));
  std::vector<std::int64_t> counts{comm.rank() + 5};
  std::int64_t* d_counts = device_copy(counts);
  transport.allreduce(d_counts, 1, ReduceOp::max);
  TESSERA_CUDA_CHECK(cudaMemcpy(counts.data(), d_counts, sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  EXPECT_EQ(counts[0], comm.size() + 4);
  // The solvers' dot: one device double summed over ranks, read on the host (repeated: the
  // pinned slot is reused; the device value is summed in place).
  std::vector<double> one{0.25 * (comm.rank() + 1)};
  double* d_one = device_copy(one);
  EXPECT_EQ(transport.allreduce_sum_to_host(d_one), 0.125 * ranks * (ranks + 1));
  // It returns with its stream drained: the solvers write the next partial sum into the same
  // device double from their compute stream right away.
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess) << "allreduce_sum_to_host left work queued on its stream";
  EXPECT_EQ(transport.allreduce_sum_to_host(d_one), 0.125 * ranks * ranks * (ranks + 1));
  cudaFree(d_one);
  // The recurrences' sums, left on the device (read after the stream, as a kernel would).
  std::vector<double> three{1.0, 0.5 * comm.rank(), -0.25};
  double* d_three = device_copy(three);
  transport.allreduce_sum_on_device(d_three, 3);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  TESSERA_CUDA_CHECK(cudaMemcpy(three.data(), d_three, 3 * sizeof(double), cudaMemcpyDeviceToHost));
  EXPECT_EQ(three, (std::vector<double>{ranks, 0.25 * ranks * (ranks - 1), -0.25 * ranks}));
  for (void* ptr : {static_cast<void*>(d_send), static_cast<void*>(d_ghosts), static_cast<void*>(d_values),
                    static_cast<void*>(d_counts), static_cast<void*>(d_three)})
    cudaFree(ptr);
}

/// Rank r's entry j, distinct per entry and rank: 1000 r + j + 0.5 as a double (exact), 1000 r + j
/// as an int32, and r 2^40 + j as an int64 (its high bytes must move too).
template <class T>
T entry(int rank, std::int64_t j) {
  if constexpr (std::is_same_v<T, double>) return 1000.0 * rank + static_cast<double>(j) + 0.5;
  if constexpr (std::is_same_v<T, std::int32_t>) return static_cast<std::int32_t>(1000 * rank + j);
  if constexpr (std::is_same_v<T, std::int64_t>) return (std::int64_t{rank} << 40) + j;
}

/// What the receive buffer holds before: never an entry.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, double>) return std::nan("");
  return T(-1);
}

/// Gathers each rank's block of counts[rank] items of type T through `transport` (from a separate
/// send buffer, or in place from its slot of recv) and checks every item of the result on the host.
template <class T>
void expect_allgatherv(const Communicator& comm, DeviceTransport& transport, const std::vector<std::int64_t>& counts,
                       bool in_place) {
  std::vector<std::int64_t> offsets{0};
  for (const std::int64_t c : counts) offsets.push_back(offsets.back() + c);
  const int me = comm.rank();
  std::vector<T> mine(static_cast<std::size_t>(counts[me]));
  for (std::size_t j = 0; j < mine.size(); ++j) mine[j] = entry<T>(me, std::int64_t(j));
  std::vector<T> start(static_cast<std::size_t>(offsets.back()), poison<T>());
  if (in_place) std::copy(mine.begin(), mine.end(), start.begin() + offsets[me]);
  T* d_recv = device_copy(start);
  T* d_send = in_place ? d_recv + offsets[me] : device_copy(mine);
  transport.allgatherv(d_send, d_recv, offsets);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(transport.stream()));
  std::vector<T> got(start.size());
  TESSERA_CUDA_CHECK(cudaMemcpy(got.data(), d_recv, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  for (int r = 0; r < comm.size(); ++r)
    for (std::int64_t j = 0; j < counts[r]; ++j)
      ASSERT_EQ(got[offsets[r] + j], entry<T>(r, j)) << "rank " << r << "'s item " << j << " on rank " << me;
  if (!in_place) cudaFree(d_send);
  cudaFree(d_recv);
}

TEST(DeviceTransport, AllgathervOfUnevenAndEmptyBlocks) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const RankStream rs(comm);
  {
    const std::unique_ptr<DeviceTransport> owned_transport = transport_under_test(comm, rs.device, rs.stream);
    DeviceTransport& transport = *owned_transport;
    SCOPED_TRACE(std::string("transport ") + transport.name());
    const std::size_t ranks = static_cast<std::size_t>(comm.size());
    std::mt19937_64 rng(seed);  // the same counts on every rank
    std::vector<std::int64_t> random(ranks), one_rank(ranks, 0), ones(ranks, 1);
    for (std::int64_t& c : random) c = static_cast<std::int64_t>(rng() % 40);
    random[ranks - 1] = 0;  // the last rank sends nothing (on one rank: an empty gather)
    if (ranks > 1) random[0] = 37;
    one_rank[rng() % ranks] = 301;
    const std::vector<std::vector<std::int64_t>> cases{random, one_rank, ones, std::vector<std::int64_t>(ranks, 0)};
    for (std::size_t c = 0; c < cases.size(); ++c)
      for (const bool in_place : {false, true}) {
        SCOPED_TRACE("count pattern " + std::to_string(c) + (in_place ? ", in place" : ""));
        expect_allgatherv<double>(comm, transport, cases[c], in_place);
        expect_allgatherv<std::int32_t>(comm, transport, cases[c], in_place);
        expect_allgatherv<std::int64_t>(comm, transport, cases[c], in_place);
      }
    // Offsets are global data: every rank rejects them alike, before any traffic.
    EXPECT_THROW(transport.allgatherv<double>(nullptr, nullptr, std::vector<std::int64_t>(ranks, 0)), InputError);
    std::vector<std::int64_t> decreasing(ranks + 1, 0);
    decreasing[ranks - 1] = 5;
    EXPECT_THROW(transport.allgatherv<double>(nullptr, nullptr, decreasing), InputError);
  }
}

#if defined(TESSERA_TEST_STAGED_TRANSPORT)
/// Sets TESSERA_DEVICE_TRANSPORT on this rank for the scope ("" unsets it), then restores it.
class TransportVariable {
 public:
  explicit TransportVariable(const std::string& value) {
    if (const char* old = std::getenv(kName)) saved_ = old, had_ = true;
    set(value);
  }
  ~TransportVariable() { set(had_ ? saved_ : ""); }

 private:
  static constexpr const char* kName = "TESSERA_DEVICE_TRANSPORT";
  static void set(const std::string& value) {
    if (value.empty()) unsetenv(kName);
    else setenv(kName, value.c_str(), 1);
  }
  std::string saved_;
  bool had_ = false;
};

TEST(DeviceTransportChoice, NcclForAGpuPerRankStagedForSharedGpusOrWhenAskedAndErrorsOnEveryRank) {
  const Communicator comm;
  const RankDevice own{rank_device(comm).index, false}, shared{own.index, true};
  {
    const TransportVariable unset("");
    EXPECT_EQ(choose_device_transport(comm, own), DeviceTransportKind::nccl);
    EXPECT_EQ(choose_device_transport(comm, shared), DeviceTransportKind::staged);
  }
  {
    const TransportVariable staged("staged");
    EXPECT_EQ(choose_device_transport(comm, own), DeviceTransportKind::staged);
  }
  {
    const TransportVariable nccl("nccl");
    EXPECT_EQ(choose_device_transport(comm, own), DeviceTransportKind::nccl);
    EXPECT_THROW(choose_device_transport(comm, shared), InputError);  // NCCL cannot share a GPU
  }
  {
    // Asked on one rank only: the answer is still the same on every rank.
    const TransportVariable last(comm.rank() == comm.size() - 1 ? "staged" : "");
    EXPECT_EQ(choose_device_transport(comm, own), DeviceTransportKind::staged);
  }
  {
    // A misspelling on one rank is an error on all of them (no rank is left in a collective).
    const TransportVariable bad(comm.rank() == 0 ? "mpi" : "");
    EXPECT_THROW(choose_device_transport(comm, own), InputError);
  }
}
#endif

}  // namespace
}  // namespace tessera::dist
