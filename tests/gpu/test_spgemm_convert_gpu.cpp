// Device CSR<->tile conversions (also of the transpose, and the CSR-to-tile position map)
// against the host conversions (exact), and the cuSPARSE SpGEMM baseline (each algorithm)
// against the host reference. Every call that allocates its outputs runs on a poisoned device
// pool (0xff bytes), so an entry a conversion fails to write cannot pass as a zero by luck.
#include <gtest/gtest.h>

#include "local/cuda/cusparse_spgemm.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/formats/convert.hpp"
#include "local/gen/generators.hpp"
#include "local/reference/kernels.hpp"
#include "support/poison_device_pool.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using testing::RandomSpec;
using testing::random_csr;

// Well above the outputs of any one call here (the largest, cuSPARSE's C, has some 14,000 entries).
constexpr std::size_t kPoisonBytes = std::size_t{4} << 20;

template <class T>
bool same_tiles(const TileMatrix<T>& x, const TileMatrix<T>& y) {
  return x.rows == y.rows && x.cols == y.cols && x.tile_row_ptr == y.tile_row_ptr && x.tile_col == y.tile_col &&
         x.bitmap == y.bitmap && x.value_offset == y.value_offset && x.values == y.values;
}

TEST(TileConvertGpu, MatchesHostConversionExactly) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t shapes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {7, 9}, {8, 8}, {9, 17}, {63, 65}, {100, 3}, {3, 300}};
  int i = 0;
  for (auto& s : shapes) {
    for (double density : {0.0, 0.05, 0.5, 1.0}) {
      SCOPED_TRACE(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " density " + std::to_string(density));
      const Csr<double> a = random_csr(RandomSpec{s[0], s[1], density, 0.2, 0.2, i % 2 == 0}, seed + i);
      ++i;
      const TileMatrix<double> host = to_tiles(a);
      testing::poison_device_pool(kPoisonBytes);
      const auto device = cuda::to_tiles(cuda::upload(a));
      EXPECT_EQ(device.num_tiles, host.num_tiles());
      EXPECT_TRUE(same_tiles(cuda::download(device), host));
      testing::poison_device_pool(kPoisonBytes);
      EXPECT_EQ(cuda::download(cuda::to_csr(cuda::upload(host))), a);
      const auto half = convert_values<Half>(a);
      testing::poison_device_pool(kPoisonBytes);
      EXPECT_EQ(cuda::download(cuda::to_csr(cuda::to_tiles(cuda::upload(half)))), half);
    }
  }
  const Csr<double> rmat = gen::generate(gen::parse_spec("rmat:10:8"));
  testing::poison_device_pool(kPoisonBytes);
  EXPECT_TRUE(same_tiles(cuda::download(cuda::to_tiles(cuda::upload(rmat))), to_tiles(rmat)));
}

/// The host's map from CSR order to tile storage: to_csr of `t` with each value its position.
std::vector<std::int64_t> host_csr_positions(TileMatrix<double> t) {
  for (std::size_t k = 0; k < t.values.size(); ++k) t.values[k] = static_cast<double>(k);
  const Csr<double> c = to_csr(t);
  return std::vector<std::int64_t>(c.values.begin(), c.values.end());
}

// The value maps' conversions (dist/cuda/value_maps.hpp): the tiles of a^T made without the
// transpose, and each CSR entry's tile value position, against the host's, exactly.
TEST(TileConvertGpu, TransposedTilesAndCsrPositionsMatchTheHost) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t shapes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {7, 9}, {8, 8}, {9, 17}, {63, 65}, {100, 3}, {3, 300}};
  std::vector<std::pair<std::string, Csr<double>>> cases;
  std::uint64_t i = 0;
  for (auto& s : shapes)
    for (double density : {0.0, 0.05, 0.5, 1.0}) {
      cases.emplace_back(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " density " + std::to_string(density),
                         random_csr(RandomSpec{s[0], s[1], density, 0.2, 0.2, i % 2 == 0}, seed + i));
      ++i;
    }
  for (const char* spec : {"rmat:10:8", "poisson3d:9", "elasticity3d:3"})
    cases.emplace_back(spec, gen::generate(gen::parse_spec(spec)));
  for (const auto& [name, a] : cases) {
    SCOPED_TRACE(name);
    testing::poison_device_pool(kPoisonBytes);
    const auto device_a = cuda::upload(a);
    EXPECT_TRUE(same_tiles(cuda::download(cuda::to_tiles_transposed(device_a)), to_tiles(ref::transpose(a))));
    const TileMatrix<double> tiles = to_tiles(a);
    testing::poison_device_pool(kPoisonBytes);
    EXPECT_EQ(cuda::csr_positions(cuda::upload(tiles)).download(), host_csr_positions(tiles));
  }
}

TEST(CusparseSpgemmGpu, EveryAlgorithmMatchesReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto a = random_csr(RandomSpec{300, 200, 0.04, 0.1, 0.1}, seed);
  const auto b = random_csr(RandomSpec{200, 250, 0.04, 0.1, 0.1}, seed + 1);
  const Csr<double> ref_c = ref::spgemm(a, b);
  testing::poison_device_pool(kPoisonBytes);
  const auto da = cuda::to_int32_offsets(cuda::upload(a)), db = cuda::to_int32_offsets(cuda::upload(b));
  for (auto alg : {cuda::CusparseSpgemmAlg::alg1, cuda::CusparseSpgemmAlg::alg2, cuda::CusparseSpgemmAlg::alg3}) {
    SCOPED_TRACE(cuda::to_string(alg));
    testing::poison_device_pool(kPoisonBytes);
    auto run = cuda::cusparse_spgemm(da, db, cuda::CusparseSpgemmOptions{alg});
    ASSERT_EQ(run.status, cuda::CusparseSpgemmStatus::success) << run.message;
    EXPECT_GT(run.milliseconds, 0);
    EXPECT_GT(run.peak_bytes, 0);
    const Csr<double> c = cuda::download(run.c);
    ASSERT_EQ(c.row_ptr, ref_c.row_ptr);
    ASSERT_EQ(c.col_idx, ref_c.col_idx);
    for (std::int64_t e = 0; e < c.nnz(); ++e) EXPECT_NEAR(c.values[e], ref_c.values[e], 1e-12 * (1 + std::abs(ref_c.values[e])));
  }
}

}  // namespace
}  // namespace tessera
