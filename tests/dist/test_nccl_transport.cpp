// NcclTransport against HostTransport: the same halo pattern moved once through MPI on host
// buffers and once through NCCL on device buffers gives the same ghosts; allreduce likewise.
// Label gpu: runs only where every rank sees a CUDA device (exit 77 otherwise).
#include <cuda_runtime_api.h>

#include "dist/nccl_transport.hpp"
#include "dist_test_util.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist {
namespace {

using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* d = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), std::max<std::size_t>(1, host.size()) * sizeof(T)));
  TESSERA_CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

TEST(NcclTransport, HaloExchangeAndAllreduceMatchTheHostTransport) {
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  cudaStream_t stream = nullptr;
  TESSERA_CUDA_CHECK(cudaSetDevice(node_local_device(comm)));  // the stream lives on the rank's device
  TESSERA_CUDA_CHECK(cudaStreamCreate(&stream));
  NcclTransport transport(comm, stream);

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

  double* d_send = device_copy(send);
  double* d_ghosts = device_copy(std::vector<double>(host_ghosts.size(), -1.0));
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
  for (void* ptr : {static_cast<void*>(d_send), static_cast<void*>(d_ghosts), static_cast<void*>(d_values),
                    static_cast<void*>(d_counts)})
    cudaFree(ptr);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace tessera::dist
