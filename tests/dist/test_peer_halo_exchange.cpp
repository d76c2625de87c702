// The peer halo route (CUDA IPC mappings and device flags, dist/cuda/peer_halo_exchange.hpp)
// against the NCCL route on the same products: bitwise the same results, because both deliver
// the same ghosts to the same kernels. The products are chained (each one's input is the
// previous output) and alternate between matrices, so a round that overwrote ghosts still being
// read, or read them before they arrived, changes the chain's end. Patterns: random over uneven
// partitions (a rank without rows), Poisson, and a one-directional coupling (every rank
// receives only from the next one, sends only to the previous one: no reply would order the
// rounds without the protocol's ready flags); SpMM with growing k (the mapping is remade);
// replays of a captured CUDA graph. Label gpu.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dist/cuda/device_spmv.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/gen/generators.hpp"

namespace tessera::dist {
namespace {

using gpu::HaloRoute;
using tessera::cuda::DeviceBuffer;
using tessera::testing::RandomSpec;
using tessera::testing::random_csr;
using tessera::testing::random_values;

/// Rows couple to themselves and to the row `shift` ahead, so with balanced partitions rank r
/// needs ghosts from rank r + 1 only (and rank r + 1 never needs any from r).
Csr<double> forward_coupling(std::int64_t n, std::int64_t shift) {
  Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    a.col_idx.push_back(static_cast<std::int32_t>(i));
    a.values.push_back(1.5);
    if (i + shift < n) {
      a.col_idx.push_back(static_cast<std::int32_t>(i + shift));
      a.values.push_back(-0.25 - 1e-3 * static_cast<double>(i % 7));
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

/// A + 2 I (entries of `a` in [-1, 1]): with a dominant diagonal, powers of it never vanish, so
/// a chain of products keeps every entry alive (a sparse random matrix can be nilpotent).
Csr<double> plus_two_identity(const Csr<double>& a) {
  Csr<double> b;
  b.rows = a.rows;
  b.cols = a.cols;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    bool placed = i >= a.cols;  // no diagonal entry in a row past the last column
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const std::int64_t j = a.col_idx[p];
      if (!placed && j >= i) {
        b.col_idx.push_back(static_cast<std::int32_t>(i));
        b.values.push_back(2.0 + (j == i ? a.values[p] : 0.0));
        placed = true;
        if (j == i) continue;
      }
      b.col_idx.push_back(a.col_idx[p]);
      b.values.push_back(a.values[p]);
    }
    if (!placed) {
      b.col_idx.push_back(static_cast<std::int32_t>(i));
      b.values.push_back(2.0);
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col_idx.size()));
  }
  return b;
}

/// alpha keeping y = alpha A x bounded: 1 / (1 + the largest absolute row sum over all ranks).
double damping(const Communicator& comm, const DistMatrix& a) {
  double largest = 0;
  for (std::int64_t i = 0; i < a.owned_rows(); ++i) {
    double sum = 0;
    for (std::int64_t p = a.local.row_ptr[i]; p < a.local.row_ptr[i + 1]; ++p) sum += std::fabs(a.local.values[p]);
    for (std::int64_t p = a.nonlocal.row_ptr[i]; p < a.nonlocal.row_ptr[i + 1]; ++p)
      sum += std::fabs(a.nonlocal.values[p]);
    largest = std::max(largest, sum);
  }
  return 1.0 / (1.0 + comm.allreduce(largest, ReduceOp::max));
}

/// A chain of square products on one rank's vector: x <- alpha_m A_m x for m = 0, 1, ..., steps
/// times in turn. Square operators on one partition, so every output is the next input.
struct Chain {
  std::vector<gpu::DeviceDistMatrix*> ops;
  std::vector<double> alphas;
  DeviceBuffer<double> x, y;

  void queue(gpu::DeviceContext& ctx, int steps) {
    for (int s = 0; s < steps; ++s)
      for (std::size_t m = 0; m < ops.size(); ++m) {
        gpu::spmv(ctx, *ops[m], alphas[m], x.data(), 0.0, y.data());
        std::swap(x, y);
      }
  }
};

/// The chain's end through `route`, from the same start.
std::vector<double> run_chain(gpu::DeviceContext& ctx, HaloRoute route, const std::vector<DistMatrix>& mats,
                              std::vector<gpu::DeviceDistMatrix>& devs, const std::vector<double>& start, int steps) {
  ctx.set_halo_route(route);
  Chain chain;
  for (std::size_t m = 0; m < mats.size(); ++m) {
    chain.ops.push_back(&devs[m]);
    chain.alphas.push_back(damping(ctx.comm(), mats[m]));
  }
  chain.x.upload(start, ctx.compute());
  chain.y.allocate(start.size(), ctx.compute());
  chain.queue(ctx, steps);
  return chain.x.download(ctx.compute());
}

/// Several square matrices on one partition, chained through both routes. Every rank runs every
/// product and every collective (no early return on a mismatch, which would leave the others
/// waiting). The matrices must avoid the nnz-split SpMV (skewed rows), whose atomics make its
/// summation order, and so the last bits, vary from run to run whatever the route.
void expect_routes_agree(const Communicator& comm, gpu::DeviceContext& ctx, const std::vector<DistMatrix>& mats,
                         std::uint64_t seed) {
  std::vector<gpu::DeviceDistMatrix> devs;
  devs.reserve(mats.size());
  for (const DistMatrix& m : mats) devs.emplace_back(m, ctx.compute());
  const std::vector<double> start = random_values(mats[0].owned_rows(), seed + comm.rank());
  const int steps = 40;
  const std::vector<double> by_nccl = run_chain(ctx, HaloRoute::nccl, mats, devs, start, steps);
  const std::vector<double> by_peer = run_chain(ctx, HaloRoute::peer, mats, devs, start, steps);
  std::int64_t differ = by_nccl.size() == by_peer.size() ? 0 : 1, first = -1;
  for (std::size_t i = 0; differ == 0 && i < by_nccl.size(); ++i)
    if (by_nccl[i] != by_peer[i]) differ = 1, first = static_cast<std::int64_t>(i);
  EXPECT_EQ(differ, 0) << "rank " << comm.rank() << ", first differing owned entry " << first;
  EXPECT_EQ(comm.allreduce(differ, ReduceOp::sum), 0) << "ranks whose chain ends differ";
  // A chain that decayed to zeros would agree trivially: every operator here has a dominant
  // diagonal, so every rank with rows must still hold nonzeros.
  double largest = 0;
  for (double v : by_peer) largest = std::max(largest, std::fabs(v));
  if (!by_peer.empty()) EXPECT_GT(largest, 1e-200) << "rank " << comm.rank() << ": the chain decayed to zero";
}

DistMatrix distribute_square(const Communicator& comm, const Csr<double>& a, const RowPartition& p) {
  return testing::distribute(comm, a, p, p);
}

class PeerHaloRoute : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<gpu::DeviceContext>(comm_);
    // The GPU machines these tests run on hold their GPUs in one node with peer access. Where
    // that is not so, the route must be refused (checked), and the test fails: it cannot test
    // the route there, and a skip would read as a pass.
    if (!ctx_->peer_route_available()) {
      EXPECT_THROW(ctx_->set_halo_route(HaloRoute::peer), InputError);
      GTEST_FAIL() << "the ranks' GPUs cannot map each other's memory here: the peer route is untestable";
    }
  }
  Communicator comm_;
  std::unique_ptr<gpu::DeviceContext> ctx_;
};

TEST_F(PeerHaloRoute, ChainedRandomProductsMatchTheNcclRouteBitwise) {
  const std::uint64_t seed = testing::shared_seed(comm_);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::int64_t n : {1, 37, 203, 1000}) {
    const Csr<double> a = plus_two_identity(random_csr(RandomSpec{n, n, 0.05, 0.2, 0.1, false}, seed + n));
    const Csr<double> b = plus_two_identity(random_csr(RandomSpec{n, n, 0.03, 0.1, 0.0, false}, seed + n + 1));
    for (const auto& part : testing::test_partitions(comm_, a, seed + n + 2)) {
      SCOPED_TRACE(part.name + ", n = " + std::to_string(n));
      expect_routes_agree(comm_, *ctx_, {distribute_square(comm_, a, part.partition),
                                         distribute_square(comm_, b, part.partition)},
                          seed + n + 3);
    }
  }
}

TEST_F(PeerHaloRoute, OneDirectionalCouplingAndPoisson) {
  const std::uint64_t seed = testing::shared_seed(comm_);
  const std::int64_t n = 64 * comm_.size() + 13;
  const RowPartition p = RowPartition::balanced_rows(n, comm_.size());
  const gen::ProblemSpec spec = gen::parse_spec("poisson3d:11");
  const RowPartition pp = RowPartition::balanced_rows(gen::num_rows(spec), comm_.size());
  {
    SCOPED_TRACE("forward coupling");
    const DistMatrix far = distribute_square(comm_, forward_coupling(n, 40), p);
    const DistMatrix near = distribute_square(comm_, forward_coupling(n, 17), p);
    if (comm_.rank() == comm_.size() - 1) EXPECT_EQ(far.halo.num_ghosts(), 0) << "the last rank needs nothing";
    if (comm_.rank() == 0) EXPECT_EQ(far.halo.num_sent(), 0) << "the first rank sends nothing";
    expect_routes_agree(comm_, *ctx_, {far, near}, seed);
  }
  {
    SCOPED_TRACE("poisson3d:11");
    const DistMatrix da = assemble(comm_, gen::generate_rows(spec, pp.begin(comm_.rank()), pp.end(comm_.rank())), pp);
    expect_routes_agree(comm_, *ctx_, {da}, seed + 1);
  }
}

TEST_F(PeerHaloRoute, SpmmWithGrowingColumnCountsMatchesTheNcclRoute) {
  const std::uint64_t seed = testing::shared_seed(comm_);
  const Csr<double> a = random_csr(RandomSpec{301, 301, 0.04, 0.1, 0.1, false}, seed);
  const DistMatrix da = distribute_square(comm_, a, testing::uneven_partition(comm_, a.rows, seed + 1));
  gpu::DeviceDistMatrix dev(da, ctx_->compute());
  const cudaStream_t s = ctx_->compute();
  for (std::int64_t k : {1, 4, 2, 7, 1}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    DeviceBuffer<double> x, y_nccl(static_cast<std::size_t>(da.owned_rows() * k), s),
        y_peer(static_cast<std::size_t>(da.owned_rows() * k), s);
    x.upload(random_values(da.local.cols * k, seed + k + comm_.rank()), s);
    y_peer.fill_bytes(0xff, s);
    ctx_->set_halo_route(HaloRoute::nccl);
    gpu::spmm(*ctx_, dev, x.data(), k, y_nccl.data());
    ctx_->set_halo_route(HaloRoute::peer);
    gpu::spmm(*ctx_, dev, x.data(), k, y_peer.data());
    const std::int64_t same = y_nccl.download(s) == y_peer.download(s) ? 1 : 0;
    EXPECT_EQ(comm_.allreduce(same, ReduceOp::min), 1) << "some rank's Y differs between the routes";
    EXPECT_GE(dev.peer_halo->k_capacity(), k);
  }
}

TEST_F(PeerHaloRoute, CapturedGraphReplaysMatchEagerProducts) {
  const std::uint64_t seed = testing::shared_seed(comm_);
  const Csr<double> a = plus_two_identity(random_csr(RandomSpec{517, 517, 0.02, 0.1, 0.1, false}, seed));
  const RowPartition p = testing::uneven_partition(comm_, a.rows, seed + 1);
  const std::vector<DistMatrix> mats{distribute_square(comm_, a, p),
                                     distribute_square(comm_, forward_coupling(a.rows, 70), p)};
  std::vector<gpu::DeviceDistMatrix> devs;
  devs.reserve(mats.size());
  for (const DistMatrix& m : mats) devs.emplace_back(m, ctx_->compute());
  const std::vector<double> start = random_values(mats[0].owned_rows(), seed + 2 + comm_.rank());
  const int steps_per_graph = 5, replays = 4;
  const std::vector<double> eager = run_chain(*ctx_, HaloRoute::nccl, mats, devs, start, steps_per_graph * replays);

  ctx_->set_halo_route(HaloRoute::peer);
  Chain chain;
  for (std::size_t m = 0; m < mats.size(); ++m) {
    chain.ops.push_back(&devs[m]);
    chain.alphas.push_back(damping(comm_, mats[m]));
  }
  chain.x.upload(start, ctx_->compute());
  chain.y.allocate(start.size(), ctx_->compute());
  // One eager step maps the buffers (not allowed inside a capture), then the chain restarts
  // from `start`. Each step is two products, two swaps of x and y: the captured products read
  // and write the same buffers on every replay, and the result is in chain.x.
  chain.queue(*ctx_, 1);
  chain.x.upload(start, ctx_->compute());
  const cudaStream_t s = ctx_->compute();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  TESSERA_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  chain.queue(*ctx_, steps_per_graph);
  TESSERA_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  TESSERA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < replays; ++r) TESSERA_CUDA_CHECK(cudaGraphLaunch(exec, s));
  const std::vector<double> replayed = chain.x.download(s);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  const std::int64_t same = eager == replayed ? 1 : 0;
  EXPECT_EQ(comm_.allreduce(same, ReduceOp::min), 1) << "some rank's replayed chain differs from the eager one";
}

TEST(PeerHaloRouteNames, ParseAndRefuse) {
  EXPECT_EQ(gpu::parse_halo_route("nccl"), HaloRoute::nccl);
  EXPECT_EQ(gpu::parse_halo_route("peer"), HaloRoute::peer);
  EXPECT_STREQ(gpu::halo_route_name(HaloRoute::peer), "peer");
  EXPECT_THROW(gpu::parse_halo_route("nvshmem"), InputError);
}

}  // namespace
}  // namespace tessera::dist
