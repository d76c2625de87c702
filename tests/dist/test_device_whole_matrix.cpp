// A distributed matrix gathered whole onto every rank's GPU (dist::gpu::gather_whole) against the
// matrix it was cut from: the same offsets, columns and values, bit for bit, on every rank.
// Random square matrices from 0 x 0 up, with empty rows and columns, on balanced, uneven (an
// empty rank) and nnz-balanced partitions; a rectangular one with its own column partition; a
// block-diagonal one (no ghosts); Poisson and elasticity generated per rank; new values on the
// same pattern gathered alone into the first gather's matrix. The stream-ordered pool is filled
// with 0xff bytes before each gather, so an entry the gather fails to write reads as garbage, not
// as a lucky zero. Label gpu: runs where every rank sees a GPU, maybe shared.
#include <cstdint>
#include <string>

#include "dist/cuda/device_whole_matrix.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/gen/generators.hpp"
#include "support/poison_device_pool.hpp"

namespace tessera::dist {
namespace {

using tessera::testing::RandomSpec;
using tessera::testing::random_csr;

/// `da` (cut from `whole`) gathered on the GPUs equals `whole` on every rank.
void expect_whole(gpu::DeviceContext& ctx, const DistMatrix& da, const Csr<double>& whole) {
  const gpu::DeviceDistMatrix device(da, ctx.compute());
  tessera::testing::poison_device_pool(std::size_t{1} << 20, ctx.compute());
  const tessera::cuda::DeviceCsr<double> gathered = gpu::gather_whole(ctx, device);
  EXPECT_EQ(gathered.rows, whole.rows);
  EXPECT_EQ(gathered.cols, whole.cols);
  EXPECT_EQ(gathered.nnz, whole.nnz());
  EXPECT_EQ(tessera::cuda::download(gathered, ctx.compute()), whole) << "on rank " << ctx.comm().rank();
}

TEST(DeviceWholeMatrix, RandomSquareOnEveryPartition) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::uint64_t i = 0;
  for (std::int64_t n : {0, 1, 9, 37, 203}) {
    const Csr<double> a = random_csr(RandomSpec{n, n, 0.08, 0.15, 0.1, true}, seed + i++);
    for (const auto& part : testing::test_partitions(comm, a, seed + i++)) {
      SCOPED_TRACE(part.name + ", n = " + std::to_string(n));
      expect_whole(ctx, testing::distribute(comm, a, part.partition, part.partition), a);
    }
  }
}

TEST(DeviceWholeMatrix, RectangularWithItsOwnColumnPartition) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> p = random_csr(RandomSpec{150, 43, 0.1, 0.1, 0.1, false}, seed);
  const RowPartition cols = testing::uneven_partition(comm, p.cols, seed + 1);
  for (const auto& part : testing::test_partitions(comm, p, seed + 2)) {
    SCOPED_TRACE(part.name);
    expect_whole(ctx, testing::distribute(comm, p, part.partition, cols), p);
  }
}

TEST(DeviceWholeMatrix, BlockDiagonalHasNoGhosts) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 8 * comm.size() * 3 + 5;
  const RowPartition p = testing::uneven_partition(comm, n, seed);
  const Csr<double> a = testing::block_diagonal_part(random_csr(RandomSpec{n, n, 0.3, 0.1, 0, false}, seed + 1), p);
  const DistMatrix da = testing::distribute(comm, a, p, p);
  EXPECT_EQ(da.halo.num_ghosts(), 0);  // not ASSERT: the gather is collective
  expect_whole(ctx, da, a);
}

// A re-setup's new values on the same pattern: only the values are written and gathered again,
// into the matrix the first gather made, and they are the new whole matrix's.
TEST(DeviceWholeMatrix, NewValuesGatheredIntoTheSamePattern) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  const std::uint64_t seed = testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  Csr<double> a = random_csr(RandomSpec{203, 203, 0.08, 0.15, 0.1, false}, seed);
  const RowPartition p = testing::uneven_partition(comm, a.rows, seed + 1);
  DistMatrix da = testing::distribute(comm, a, p, p);
  gpu::DeviceDistMatrix device(da, ctx.compute());
  // finish() hands the matrix over; the gather still knows the layout, for the values.
  gpu::WholeMatrixGather first(comm, device);
  first.prepare(ctx);
  tessera::cuda::DeviceCsr<double> whole = first.finish(ctx);
  for (double& v : a.values) v = 3.0 * v - 1.0;
  for (double& v : da.local.values) v = 3.0 * v - 1.0;
  for (double& v : da.nonlocal.values) v = 3.0 * v - 1.0;
  device.refresh_values(ctx.compute());
  whole.values.fill_bytes(0xff, ctx.compute());  // every value must be written again
  first.write_values(ctx, whole);
  first.gather_values(ctx, whole);
  EXPECT_EQ(tessera::cuda::download(whole, ctx.compute()), a) << "on rank " << comm.rank();
  // A matrix of another entry count is refused on every rank.
  tessera::cuda::DeviceCsr<double> other;
  other.rows = whole.rows;
  other.nnz = whole.nnz + 1;
  EXPECT_THROW(first.write_values(ctx, other), InputError);
}

TEST(DeviceWholeMatrix, PoissonAndElasticityGeneratedPerRank) {
  const Communicator comm;
  gpu::DeviceContext ctx(comm);
  for (const char* spec_text : {"poisson3d:9", "poisson3d27:7", "elasticity3d:3"}) {
    SCOPED_TRACE(spec_text);
    const gen::ProblemSpec spec = gen::parse_spec(spec_text);
    const RowPartition p = RowPartition::balanced_rows(gen::num_rows(spec), comm.size());
    const DistMatrix da = assemble(comm, gen::generate_rows(spec, p.begin(comm.rank()), p.end(comm.rank())), p);
    expect_whole(ctx, da, gen::generate(spec));
  }
}

}  // namespace
}  // namespace tessera::dist
