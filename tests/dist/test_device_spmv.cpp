// Distributed device products (halo exchange through NCCL and, within a node, the peer route;
// local block overlapped) against the host
// dist::spmv / dist::spmm on the same DistMatrix: random matrices over balanced, uneven (one
// rank owns no rows) and nnz-balanced partitions, a block-diagonal matrix (no rank has a
// ghost), a rectangular operator, generated Poisson, elasticity (3-dof nodes, wide rows) and an
// R-MAT power-law graph (unsymmetric, hub rows and empty rows); outputs poisoned with NaN
// before every product.
// Label gpu: runs where every rank sees a GPU, maybe shared (exit 77 otherwise).
#include <algorithm>
#include <cmath>
#include <limits>

#include "dist/cuda/device_spmv.hpp"
#include "dist/spmv.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/gen/generators.hpp"

namespace tessera::dist {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

using tessera::testing::random_values;

std::vector<double> slice(const std::vector<double>& v, std::int64_t begin, std::int64_t end, std::int64_t k) {
  return std::vector<double>(v.begin() + begin * k, v.begin() + end * k);
}

DeviceBuffer<double> to_device(const std::vector<double>& v, cudaStream_t s) {
  DeviceBuffer<double> d;
  d.upload(v, s);
  return d;
}

/// An output buffer of n entries, every byte 0xff (NaN): a product that skips or reads an
/// output it should overwrite leaves a NaN behind.
DeviceBuffer<double> poisoned(std::int64_t n, cudaStream_t s) {
  DeviceBuffer<double> d(static_cast<std::size_t>(n), s);
  d.fill_bytes(0xff, s);
  return d;
}

/// The host reference on this rank: dist::spmv (k == 1) or dist::spmm; leaves the ghosts of x
/// (which the error bound needs) in `ghosts`.
std::vector<double> host_product(const Communicator& comm, const DistMatrix& da, const std::vector<double>& x_owned,
                                 std::int64_t k, std::vector<double>& ghosts) {
  if (k == 1) {
    DistVector x{x_owned, {}};
    std::vector<double> y;
    spmv(comm, da, x, y);
    ghosts = x.ghosts;
    return y;
  }
  DistMultiVector x{k, x_owned, {}}, y;
  spmm(comm, da, x, y);
  ghosts = x.ghosts;
  return y.owned;
}

/// Each output of row i, column j: |got - want| <= (len_i + 3) * u * (|alpha| * sum_p |a_ip x_pj| + extra_ij),
/// u = eps/2 (the drivers' bound; `extra` holds |beta * y0| or |b| where the product adds it).
struct Expected {
  std::vector<double> want;
  double alpha = 1;
  std::vector<double> extra;  // empty: none
};

void expect_close(const DistMatrix& da, const std::vector<double>& x_owned, const std::vector<double>& ghosts,
                  std::int64_t k, const std::vector<double>& got, const Expected& e) {
  ASSERT_EQ(got.size(), e.want.size());
  ASSERT_EQ(static_cast<std::int64_t>(got.size()), da.owned_rows() * k);
  const double u = std::numeric_limits<double>::epsilon() / 2;
  for (std::int64_t i = 0; i < da.owned_rows(); ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      double magnitude = 0;
      for (std::int64_t p = da.local.row_ptr[i]; p < da.local.row_ptr[i + 1]; ++p)
        magnitude += std::fabs(da.local.values[p] * x_owned[da.local.col_idx[p] * k + j]);
      for (std::int64_t p = da.nonlocal.row_ptr[i]; p < da.nonlocal.row_ptr[i + 1]; ++p)
        magnitude += std::fabs(da.nonlocal.values[p] * ghosts[da.nonlocal.col_idx[p] * k + j]);
      const std::size_t at = static_cast<std::size_t>(i * k + j);
      const double scale = std::fabs(e.alpha) * magnitude + (e.extra.empty() ? 0.0 : std::fabs(e.extra[at]));
      const double len = static_cast<double>(da.local.row_length(i) + da.nonlocal.row_length(i));
      ASSERT_LE(std::fabs(got[at] - e.want[at]), (len + 3) * u * scale)
          << "rank " << da.rank << ", owned row " << i << ", column " << j << ": device " << got[at] << " vs host "
          << e.want[at];
    }
}

/// Y = A X (k == 1 through spmv with alpha 1, beta 0) on the device vs the host, with
/// statistics checked against the plan.
void check_product(const Communicator& comm, gpu::DeviceContext& ctx, const DistMatrix& da, gpu::DeviceDistMatrix& dev,
                   std::int64_t k, std::uint64_t seed) {
  SCOPED_TRACE("k = " + std::to_string(k));
  const std::vector<double> x_all = random_values(da.global_cols() * k, seed);
  const std::vector<double> x = slice(x_all, da.col_begin(), da.col_begin() + da.local.cols, k);
  std::vector<double> ghosts;
  const std::vector<double> want = host_product(comm, da, x, k, ghosts);
  const cudaStream_t s = ctx.compute();
  DeviceBuffer<double> dx = to_device(x, s), dy = poisoned(da.owned_rows() * k, s);
  DistStats stats;
  if (k == 1)
    gpu::spmv(ctx, dev, 1.0, dx.data(), 0.0, dy.data(), &stats);
  else
    gpu::spmm(ctx, dev, dx.data(), k, dy.data(), &stats);
  expect_close(da, x, ghosts, k, dy.download(s), Expected{want, 1.0, {}});
  EXPECT_EQ(stats.rows, da.owned_rows());
  EXPECT_EQ(stats.nnz, da.nnz());
  EXPECT_EQ(stats.halo_bytes, da.halo.num_ghosts() * k * 8);
  EXPECT_GE(stats.exchange_seconds, 0.0);
  EXPECT_GE(stats.compute_seconds, 0.0);
}

/// y = alpha A x + beta y0 on the device vs alpha * (host A x) + beta * y0.
void check_alpha_beta(const Communicator& comm, gpu::DeviceContext& ctx, const DistMatrix& da,
                      gpu::DeviceDistMatrix& dev, double alpha, double beta, std::uint64_t seed) {
  SCOPED_TRACE("alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta));
  const std::vector<double> x_all = random_values(da.global_cols(), seed);
  const std::vector<double> x = slice(x_all, da.col_begin(), da.col_begin() + da.local.cols, 1);
  const std::vector<double> y0 = random_values(da.owned_rows(), seed + comm.rank() + 1);
  std::vector<double> ghosts;
  const std::vector<double> ax = host_product(comm, da, x, 1, ghosts);
  Expected e{ax, alpha, {}};
  for (std::size_t i = 0; i < ax.size(); ++i) {
    e.want[i] = alpha * ax[i] + (beta == 0 ? 0.0 : beta * y0[i]);
    e.extra.push_back(beta * y0[i]);
  }
  const cudaStream_t s = ctx.compute();
  DeviceBuffer<double> dx = to_device(x, s);
  DeviceBuffer<double> dy = beta == 0 ? poisoned(da.owned_rows(), s) : to_device(y0, s);
  gpu::spmv(ctx, dev, alpha, dx.data(), beta, dy.data());
  expect_close(da, x, ghosts, 1, dy.download(s), e);
}

/// r = b - A x on the device vs b - (host A x).
void check_residual(const Communicator& comm, gpu::DeviceContext& ctx, const DistMatrix& da,
                    gpu::DeviceDistMatrix& dev, std::uint64_t seed) {
  SCOPED_TRACE("residual");
  const std::vector<double> x_all = random_values(da.global_cols(), seed);
  const std::vector<double> x = slice(x_all, da.col_begin(), da.col_begin() + da.local.cols, 1);
  const std::vector<double> b = random_values(da.owned_rows(), seed + comm.rank() + 7);
  std::vector<double> ghosts;
  const std::vector<double> ax = host_product(comm, da, x, 1, ghosts);
  Expected e{ax, 1.0, b};
  for (std::size_t i = 0; i < ax.size(); ++i) e.want[i] = b[i] - ax[i];
  const cudaStream_t s = ctx.compute();
  DeviceBuffer<double> dx = to_device(x, s), db = to_device(b, s), dr = poisoned(da.owned_rows(), s);
  gpu::residual(ctx, dev, dx.data(), db.data(), dr.data());
  expect_close(da, x, ghosts, 1, dr.download(s), e);
}

/// Every product on one device matrix; k goes up and down so the exchange buffers grow and
/// the SpMM plans are remade between calls.
/// Through each halo route the ranks' GPUs allow (NCCL always; peer within one node).
void check_all_products(const Communicator& comm, gpu::DeviceContext& ctx, const DistMatrix& da, std::uint64_t seed,
                        bool square) {
  std::vector<gpu::HaloRoute> routes{gpu::HaloRoute::nccl};
  if (ctx.peer_route_available()) routes.push_back(gpu::HaloRoute::peer);
  for (gpu::HaloRoute route : routes) {
    SCOPED_TRACE(std::string("halo route ") + gpu::halo_route_name(route));
    ctx.set_halo_route(route);
    gpu::DeviceDistMatrix dev(da, ctx.compute());
    EXPECT_EQ(dev.owned_rows(), da.owned_rows());
    EXPECT_EQ(dev.num_ghosts(), da.halo.num_ghosts());
    std::uint64_t s = seed;
    for (std::int64_t k : {1, 3, 8, 3, 1}) check_product(comm, ctx, da, dev, k, s++);
    check_alpha_beta(comm, ctx, da, dev, -0.75, 1.25, s++);
    check_alpha_beta(comm, ctx, da, dev, 2.0, 0.0, s++);
    if (square) check_residual(comm, ctx, da, dev, s++);
  }
}

TEST(DeviceDistSpmv, MatchesTheHostProductsOnEveryPartition) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uint64_t i = 0;
  for (std::int64_t n : {0, 1, 9, 37, 203}) {
    const Csr<double> a = random_csr(RandomSpec{n, n, 0.08, 0.15, 0.1, true}, seed + i++);
    for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(part.name + ", n = " + std::to_string(n));
      const DistMatrix da = testing::distribute(comm, a, part.partition, part.partition);
      check_all_products(comm, ctx, da, seed + 100 * i++, true);
    }
  }
}

TEST(DeviceDistSpmv, RectangularWithItsOwnColumnPartition) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_csr(RandomSpec{150, 43, 0.1, 0.1, 0.1, false}, seed);
  const RowPartition cols = testing::uneven_partition(comm, a.cols, seed + 1);
  for (const auto& part : testing::test_partitions(comm, a, seed + 2)) {
    SCOPED_TRACE(part.name);
    check_all_products(comm, ctx, testing::distribute(comm, a, part.partition, cols), seed + 3, false);
  }
}

// Square A whose columns are split unlike its rows: the local blocks are rectangular, so the
// residual takes its copy-then-subtract path instead of the fused kernel.
TEST(DeviceDistSpmv, SquareWithADifferentColumnPartition) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_csr(RandomSpec{131, 131, 0.07, 0.1, 0.05, true}, seed);
  const RowPartition rows = RowPartition::balanced_rows(a.rows, comm.size());
  const RowPartition cols = testing::uneven_partition(comm, a.cols, seed + 1);
  check_all_products(comm, ctx, testing::distribute(comm, a, rows, cols), seed + 2, true);
}

TEST(DeviceDistSpmv, BlockDiagonalNeedsNoExchange) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * comm.size() * 3 + 5;
  const RowPartition p = testing::uneven_partition(comm, n, seed);
  const Csr<double> full = random_csr(RandomSpec{n, n, 0.3, 0.1, 0, false}, seed + 1);
  const DistMatrix da = testing::distribute(comm, testing::block_diagonal_part(full, p), p, p);
  EXPECT_EQ(da.halo.num_ghosts(), 0);  // not ASSERTs: the products are collective
  EXPECT_EQ(da.halo.num_sent(), 0);
  check_all_products(comm, ctx, da, seed + 2, true);
}

// Each rank generates only its rows. rmat:10:8 (1024 rows, unsymmetric: the products need no
// symmetry) puts hubs of hundreds of entries next to empty rows, unlike the stencils.
TEST(DeviceDistSpmv, GeneratedProblemsPerRank) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const char* spec_text : {"poisson3d:9", "poisson2d:13", "elasticity3d:5", "rmat:10:8"}) {
    SCOPED_TRACE(spec_text);
    const gen::ProblemSpec spec = gen::parse_spec(spec_text);
    const RowPartition p = RowPartition::balanced_rows(gen::num_rows(spec), comm.size());
    const DistMatrix da = assemble(comm, gen::generate_rows(spec, p.begin(comm.rank()), p.end(comm.rank())), p);
    check_all_products(comm, ctx, da, seed, true);
  }
}

TEST(DeviceDistSpmv, RefreshedValuesAreUsed) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> a = random_csr(RandomSpec{97, 97, 0.1, 0.1, 0, false}, seed);
  DistMatrix da = testing::distribute(comm, a, testing::uneven_partition(comm, a.rows, seed + 1),
                                      testing::uneven_partition(comm, a.rows, seed + 1));
  gpu::DeviceDistMatrix dev(da, ctx.compute());
  HostArray<double> values = values_in_row_order(da);
  for (double& x : values) x = -3 * x + 0.5;
  set_values_in_row_order(da, values);
  dev.refresh_values(ctx.compute());
  check_product(comm, ctx, da, dev, 1, seed + 2);
  check_product(comm, ctx, da, dev, 3, seed + 3);
}

TEST(DeviceDistSpmv, BadColumnCountsAreInputErrors) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const RowPartition p = RowPartition::balanced_rows(40, comm.size());
  const DistMatrix da = testing::distribute(comm, random_csr(RandomSpec{40, 40, 0.2, 0, 0, false}, 5), p, p);
  gpu::DeviceDistMatrix dev(da, ctx.compute());
  DeviceBuffer<double> x(static_cast<std::size_t>(std::max<std::int64_t>(1, da.local.cols * 129)), ctx.compute());
  DeviceBuffer<double> y(static_cast<std::size_t>(std::max<std::int64_t>(1, da.owned_rows() * 129)), ctx.compute());
  EXPECT_THROW(gpu::spmm(ctx, dev, x.data(), 0, y.data()), InputError);
  EXPECT_THROW(gpu::spmm(ctx, dev, x.data(), -2, y.data()), InputError);
  EXPECT_THROW(gpu::spmm(ctx, dev, x.data(), 129, y.data()), InputError);
}

TEST(DeviceDistReductions, DotAndNormMatchTheHost) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::int64_t n : {0, 1, 301, 100003}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<double> x_all = random_values(n, seed + n), y_all = random_values(n, seed + n + 1);
    const RowPartition p = testing::uneven_partition(comm, n, seed + 2);
    const int me = comm.rank();
    const std::vector<double> x = slice(x_all, p.begin(me), p.end(me), 1), y = slice(y_all, p.begin(me), p.end(me), 1);
    DeviceBuffer<double> dx = to_device(x, ctx.compute()), dy = to_device(y, ctx.compute());
    const std::int64_t mine = static_cast<std::int64_t>(x.size());
    double magnitude = 0, squares = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      magnitude += std::fabs(x_all[i] * y_all[i]);
      squares += x_all[i] * x_all[i];
    }
    // Two summation orders of n products: 2 * gamma_{n+2} * sum |x_i y_i|.
    const double u = std::numeric_limits<double>::epsilon() / 2, m = static_cast<double>(n + 2);
    const double got = ctx.dot(mine, dx.data(), dy.data());
    EXPECT_LE(std::fabs(got - dot(comm, x, y)), 2 * m * u / (1 - m * u) * magnitude);
    const double norm = ctx.norm2(mine, dx.data());
    EXPECT_LE(std::fabs(norm - norm2(comm, x)), 2 * m * u / (1 - m * u) * std::sqrt(squares) + 4 * u * std::sqrt(squares));
    EXPECT_EQ(comm.allreduce(got, ReduceOp::min), comm.allreduce(got, ReduceOp::max))
        << "every rank must receive the same reduced value";
  }
}

// The batched dots of classical Gram-Schmidt (DeviceContext::dots_into): the local sums of each
// vector are DeviceDot's, so each global value is ctx.dot's up to the order the allreduce adds
// the ranks' sums in (exactly it on one rank); every rank receives the same values; the padding
// between the vectors is not read; results poisoned first.
TEST(DeviceDistReductions, BatchedDotsMatchSingleDots) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::int64_t n : {0, 1, 301, 100003}) {
    for (const int count : {1, 9}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", count " + std::to_string(count));
      const RowPartition p = testing::uneven_partition(comm, n, seed + 2);
      const int me = comm.rank();
      const std::int64_t mine = p.end(me) - p.begin(me), stride = mine + 2;
      const std::vector<double> w_all = random_values(n, seed + n);
      const std::vector<double> w = slice(w_all, p.begin(me), p.end(me), 1);
      std::vector<double> v(static_cast<std::size_t>(stride * count), std::numeric_limits<double>::quiet_NaN());
      std::vector<double> magnitude(static_cast<std::size_t>(count), 0.0);
      for (int i = 0; i < count; ++i) {
        const std::vector<double> vi_all = random_values(n, seed + n + 1 + i);
        std::copy(vi_all.begin() + p.begin(me), vi_all.begin() + p.end(me), v.begin() + i * stride);
        for (std::int64_t j = 0; j < n; ++j) magnitude[i] += std::fabs(vi_all[j] * w_all[j]);
      }
      DeviceBuffer<double> dv = to_device(v, ctx.compute()), dw = to_device(w, ctx.compute());
      DeviceBuffer<double> results = poisoned(count, ctx.compute());
      ctx.dots_into(mine, dv.data(), stride, count, dw.data(), results.data());
      const std::vector<double> got = results.download(ctx.compute());
      const double u = std::numeric_limits<double>::epsilon() / 2, m = static_cast<double>(n + comm.size());
      for (int i = 0; i < count; ++i) {
        const double single = ctx.dot(mine, dv.data() + i * stride, dw.data());
        if (comm.size() == 1)
          EXPECT_EQ(got[i], single) << "vector " << i;
        else
          EXPECT_LE(std::fabs(got[i] - single), 2 * m * u / (1 - m * u) * magnitude[i]) << "vector " << i;
        EXPECT_EQ(comm.allreduce(got[i], ReduceOp::min), comm.allreduce(got[i], ReduceOp::max))
            << "every rank must receive the same reduced value";
      }
    }
  }
}

}  // namespace
}  // namespace tessera::dist
