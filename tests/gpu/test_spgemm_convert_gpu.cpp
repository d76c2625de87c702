// Device CSR<->tile conversions (also of the transpose, and the CSR-to-tile position map)
// against the host conversions (exact), and the cuSPARSE SpGEMM baseline (each algorithm, fp64
// and fp32) against the host reference: random odd shapes with empty rows and columns (fresh
// seeds), Poisson, elasticity and power-law products, 1x1, 0x0, zero inner dimensions and
// operands without entries, and mismatched shapes (an InputError). Every call that allocates its
// outputs runs on a poisoned device pool (0xff bytes), so an entry a conversion fails to write
// cannot pass as a zero by luck.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "local/cuda/cusparse_spgemm.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/formats/convert.hpp"
#include "local/gen/generators.hpp"
#include "local/reference/kernels.hpp"
#include "support/poison_device_pool.hpp"
#include "spgemm_test_support.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using testing::RandomSpec;
using testing::random_csr;

// Well above the outputs of any one conversion here; cuSPARSE's calls add what they allocate.
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
  // Generated rows both ways: rmat:10:8's hubs span more tiles than a warp has lanes (as the
  // 3x300 shapes above do; the device conversions take 32 tiles of a row at a time), and
  // elasticity3d:4 is made of full 3x3 blocks.
  for (const char* spec : {"rmat:10:8", "elasticity3d:4"}) {
    SCOPED_TRACE(spec);
    const Csr<double> a = gen::generate(gen::parse_spec(spec));
    testing::poison_device_pool(kPoisonBytes);
    EXPECT_TRUE(same_tiles(cuda::download(cuda::to_tiles(cuda::upload(a))), to_tiles(a)));
    testing::poison_device_pool(kPoisonBytes);
    EXPECT_EQ(cuda::download(cuda::to_csr(cuda::upload(to_tiles(a)))), a);
  }
}

/// `a` with each row's entries in another order (reversed, then its first two swapped), as a CSR
/// from an assembly that did not sort may hold them.
Csr<double> rows_out_of_order(Csr<double> a) {
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t b = a.row_ptr[r], e = a.row_ptr[r + 1];
    std::reverse(a.col_idx.begin() + b, a.col_idx.begin() + e);
    std::reverse(a.values.begin() + b, a.values.begin() + e);
    if (e - b > 2) {
      std::swap(a.col_idx[b], a.col_idx[b + 1]);
      std::swap(a.values[b], a.values[b + 1]);
    }
  }
  return a;
}

// The device conversion merges each tile-row's rows where every row's columns increase, and
// sorts the entries where one does not, or where tile-rows are long (9x2000 at half density:
// thousands of entries a tile-row; 200x2000 with a dense row: some 250 tiles in its tile-row;
// both past the merge's bounds): every way gives the
// host's tiles, and the gather map (tile value k = the CSR's value source[k]) is the host's
// conversion of the entries' own indices.
TEST(TileConvertGpu, RowsInAnyOrderAndTheGatherMapMatchTheHost) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<std::pair<std::string, Csr<double>>> cases;
  std::uint64_t i = 0;
  for (auto& s : {std::array<std::int64_t, 2>{1, 1}, {7, 9}, {17, 64}, {63, 65}, {3, 300}, {9, 2000}, {200, 2000}})
    for (double density : {0.05, 0.5, 1.0}) {
      cases.emplace_back(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " density " + std::to_string(density),
                         random_csr(RandomSpec{s[0], s[1], density, 0.2, 0.2, i % 2 == 0}, seed + i));
      ++i;
    }
  for (const char* spec : {"rmat:10:8", "elasticity3d:3"})
    cases.emplace_back(spec, gen::generate(gen::parse_spec(spec)));
  for (const auto& [name, sorted] : cases) {
    for (const bool in_order : {true, false}) {
      SCOPED_TRACE(name + (in_order ? ", rows in order" : ", rows out of order"));
      const Csr<double> a = in_order ? sorted : rows_out_of_order(sorted);
      Csr<double> tags = a;  // each entry's value: its own index
      for (std::size_t k = 0; k < tags.values.size(); ++k) tags.values[k] = static_cast<double>(k);
      const TileMatrix<double> host_tags = to_tiles(tags);
      const std::vector<std::int64_t> host_source(host_tags.values.begin(), host_tags.values.end());
      testing::poison_device_pool(kPoisonBytes);
      cuda::DeviceBuffer<std::int64_t> source;
      const auto device = cuda::to_tiles(cuda::upload(a), source);
      EXPECT_TRUE(same_tiles(cuda::download(device), to_tiles(a)));
      EXPECT_EQ(source.download(), host_source);
    }
  }
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

// ---- cuSPARSE SpGEMM baseline --------------------------------------------------------------------

constexpr cuda::CusparseSpgemmAlg kCusparseAlgs[] = {cuda::CusparseSpgemmAlg::alg1, cuda::CusparseSpgemmAlg::alg2,
                                                     cuda::CusparseSpgemmAlg::alg3};

/// One product for the baseline. `exact`: small integer values (RandomSpec::integer_values, a
/// Laplacian), so every partial sum of every entry is an integer far below 2^24 in magnitude and
/// is exact in fp32 and fp64 whatever the summation order: C must equal the reference bit for bit.
struct ProductCase {
  std::string name;
  Csr<double> a, b;
  bool exact = false;
};

/// cuSPARSE with its outputs in poisoned memory. The call allocates its work buffers, then C,
/// from the pool; a first run's peak_bytes says how much. That run is kept alive so that its
/// (correct) C cannot be reused, and twice its peak is poisoned (the rest: cuSPARSE's own use).
template <class T>
cuda::CusparseSpgemmRun<T> poisoned_cusparse(const cuda::DeviceCsr32<T>& a, const cuda::DeviceCsr32<T>& b,
                                             cuda::CusparseSpgemmAlg alg) {
  const auto probe = cuda::cusparse_spgemm(a, b, cuda::CusparseSpgemmOptions{alg});
  testing::poison_device_pool(kPoisonBytes + 2 * static_cast<std::size_t>(std::max<std::int64_t>(probe.peak_bytes, 0)));
  return cuda::cusparse_spgemm(a, b, cuda::CusparseSpgemmOptions{alg});
}

/// Every algorithm on `pc` in value type T against the host reference (ref::spgemm, in double on
/// the same T inputs). Bound, where not exact: the shared Higham bound of spgemm_test_support.hpp,
/// 2 n u (|A||B|)_ij for an entry of n products (u = 2^-53 fp64, 2^-24 fp32): cuSPARSE's summation
/// order is its own (and unknown), and gamma(n) (|A||B|)_ij bounds any order's rounding error.
template <class T>
void expect_cusparse_matches_reference(const ProductCase& pc) {
  SCOPED_TRACE(pc.name + (std::is_same_v<T, float> ? " fp32" : " fp64"));
  const Csr<T> a = convert_values<T>(pc.a), b = convert_values<T>(pc.b);
  const Csr<double> ref_c = ref::spgemm(a, b);
  const std::int64_t products = ref::spgemm_flops(a, b);
  const auto da = cuda::to_int32_offsets(cuda::upload(a)), db = cuda::to_int32_offsets(cuda::upload(b));
  for (const auto alg : kCusparseAlgs) {
    SCOPED_TRACE(cuda::to_string(alg));
    const auto run = poisoned_cusparse(da, db, alg);
    ASSERT_EQ(run.status, cuda::CusparseSpgemmStatus::success) << run.message;
    EXPECT_TRUE(run.message.empty());
    // ALG2/ALG3 count the intermediate products to size their chunks; ALG1 does not count them.
    if (alg != cuda::CusparseSpgemmAlg::alg1) {
      EXPECT_EQ(run.num_products, products);
    }
    if (ref_c.nnz() > 0) {
      EXPECT_GT(run.milliseconds, 0);
      EXPECT_GT(run.peak_bytes, 0);
    }
    const Csr<double> c = convert_values<double>(cuda::download(run.c));
    if (pc.exact) {
      EXPECT_EQ(c, ref_c);
    } else {
      testing::expect_matches_reference(a, b, c);
    }
  }
}

void expect_cusparse_matches_reference_in_both_precisions(const std::vector<ProductCase>& cases) {
  for (const ProductCase& pc : cases) {
    expect_cusparse_matches_reference<double>(pc);
    expect_cusparse_matches_reference<float>(pc);
  }
}

TEST(CusparseSpgemmGpu, RandomProductsOfOddShapesMatchReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // m x k times k x n: none a multiple of 8; k = 1 (outer products); 1 x k x 1 (a dot product).
  const std::int64_t shapes[][3] = {{300, 200, 250}, {13, 7, 11}, {61, 67, 59}, {37, 1, 29}, {1, 45, 1}, {9, 130, 3}};
  std::vector<ProductCase> cases;
  std::uint64_t i = 0;
  for (const auto& s : shapes)
    for (const double density : {0.04, 0.3})
      for (const bool integer : {false, true}) {
        // Empty rows and columns on both sides, and a dense row in A (a long row of C).
        const RandomSpec sa{s[0], s[1], density, 0.15, 0.15, true, integer};
        const RandomSpec sb{s[1], s[2], density, 0.15, 0.15, false, integer};
        cases.push_back({std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) + " density " +
                             std::to_string(density) + (integer ? " integer" : ""),
                         random_csr(sa, seed + i), random_csr(sb, seed + i + 1), integer});
        i += 2;
      }
  expect_cusparse_matches_reference_in_both_precisions(cases);
}

TEST(CusparseSpgemmGpu, StructuredProductsMatchReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Csr<double> poisson = gen::generate(gen::parse_spec("poisson3d:9"));
  const Csr<double> elasticity = gen::generate(gen::parse_spec("elasticity3d:4"));
  // rmat:10:8: hub rows of hundreds of entries beside rows coupled to nothing; A^2 has ~270,000 entries.
  const Csr<double> power_law = testing::power_law_spd(10, 8, seed);
  // A prolongator-like tall factor: odd column count, some columns empty.
  const Csr<double> tall = random_csr(RandomSpec{poisson.rows, 53, 0.02, 0.0, 0.1}, seed + 1);
  expect_cusparse_matches_reference_in_both_precisions({
      {"poisson3d:9 squared", poisson, poisson, true},  // values 6 and -1: exact
      {"poisson3d:9 times tall", poisson, tall, false},
      {"elasticity3d:4 squared", elasticity, elasticity, false},
      {"power-law rmat:10:8:seed=" + std::to_string(seed) + " squared", power_law, power_law, false},
  });
}

// cuSPARSE (12.x) takes empty and zero-dimension operands with every algorithm: C must be the
// reference's (row offsets written, no entries), not an error.
TEST(CusparseSpgemmGpu, DegenerateProductsMatchReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto integers = [&](std::int64_t rows, std::int64_t cols, double density, std::uint64_t s) {
    return random_csr(RandomSpec{rows, cols, density, 0.0, 0.0, false, true}, seed + s);
  };
  expect_cusparse_matches_reference_in_both_precisions({
      {"1x1 times 1x1", csr_from_triplets<double>(1, 1, {0}, {0}, {3.0}),
       csr_from_triplets<double>(1, 1, {0}, {0}, {-2.0}), true},
      {"0x0 times 0x0", Csr<double>::empty(0, 0), Csr<double>::empty(0, 0), true},
      {"5x0 times 0x7", Csr<double>::empty(5, 0), Csr<double>::empty(0, 7), true},
      {"0x5 times 5x3", Csr<double>::empty(0, 5), integers(5, 3, 0.5, 0), true},
      {"3x5 times 5x0", integers(3, 5, 0.5, 1), Csr<double>::empty(5, 0), true},
      {"6x9 without entries times 9x4", Csr<double>::empty(6, 9), integers(9, 4, 0.5, 2), true},
      {"6x9 times 9x4 without entries", integers(6, 9, 0.5, 3), Csr<double>::empty(9, 4), true},
      // Both have entries, but A's columns meet only empty rows of B: no product, C has no entries.
      {"6x9 times 9x4, disjoint", csr_from_triplets<double>(6, 9, {0, 5}, {1, 8}, {2.0, -1.0}),
       csr_from_triplets<double>(9, 4, {0, 4}, {3, 0}, {1.0, 3.0}), true},
  });
}

// The wrapper's one input check: A's columns must be B's rows (an InputError naming both).
TEST(CusparseSpgemmGpu, MismatchedInnerDimensionsAreAnInputError) {
  const auto a = cuda::to_int32_offsets(cuda::upload(Csr<double>::empty(5, 3)));
  const auto b = cuda::to_int32_offsets(cuda::upload(Csr<double>::empty(4, 2)));
  for (const auto alg : kCusparseAlgs) {
    SCOPED_TRACE(cuda::to_string(alg));
    try {
      cuda::cusparse_spgemm(a, b, cuda::CusparseSpgemmOptions{alg});
      ADD_FAILURE() << "no InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("A.cols (3) != B.rows (4)"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera
