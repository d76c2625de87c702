// cuda::upload(CsrArrays) and cuda::same_pattern (local/cuda/csr_arrays_upload.hpp) against the
// host reference to_csr(CsrArrays): for int32/int32 (PETSc's default PetscInt), int64/int64
// (64-bit PetscInt) and int64/int32 (Csr's own) arrays, the downloaded matrix equals the host
// copy exactly, on random matrices with empty rows and odd shapes (0x0, 1x1, 0 x n, n x 0),
// Poisson, elasticity and R-MAT power-law graphs, with the device pool poisoned first so that an
// entry the upload missed shows. Broken arrays are the host reference's InputError, before
// anything is copied; same_pattern notices one column, one offset, the entry count or the
// dimensions changed, and ignores values.
#include <gtest/gtest.h>

#include <string>

#include "local/core/error.hpp"
#include "local/cuda/csr_arrays_upload.hpp"
#include "local/gen/generators.hpp"
#include "support/owned_csr_arrays.hpp"
#include "support/poison_device_pool.hpp"
#include "support/random_matrix.hpp"

namespace tessera::cuda {
namespace {

using testing::OwnedCsrArrays;

template <class Offset, class Index>
void expect_upload_equals_reference(const Csr<double>& m, const std::string& what) {
  SCOPED_TRACE(what);
  const OwnedCsrArrays<Offset, Index> host(m);
  const Csr<double> want = to_csr(host.view());
  ASSERT_EQ(want, m);  // the reference is a faithful copy
  testing::poison_device_pool(std::size_t(m.nnz() + m.rows + 1) * 24 + 4096);
  const DeviceCsr<double> d = upload(host.view(), "A", nullptr);
  EXPECT_EQ(d.rows, m.rows);
  EXPECT_EQ(d.cols, m.cols);
  EXPECT_EQ(d.nnz, m.nnz());
  EXPECT_EQ(download(d), want);
  EXPECT_TRUE(same_pattern(d, host.view(), nullptr));
}

template <class Offset, class Index>
void expect_uploads(std::uint64_t seed) {
  const std::int64_t shapes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {7, 9}, {63, 65}, {1001, 999}};
  int i = 0;
  for (auto& s : shapes)
    for (double density : {0.0, 0.05, 0.5}) {
      const Csr<double> m = testing::random_csr({s[0], s[1], density, 0.2, 0.1, s[0] > 10}, seed + i++);
      expect_upload_equals_reference<Offset, Index>(
          m, "random " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + " density " + std::to_string(density));
    }
  for (const char* spec : {"poisson3d:13", "elasticity3d:5", "rmat:10:8", "poisson2d:1"})
    expect_upload_equals_reference<Offset, Index>(gen::generate(gen::parse_spec(spec)), spec);
  // Past the 8 MiB at which copy_to_device pins the host range: 1.2M entries.
  expect_upload_equals_reference<Offset, Index>(gen::generate(gen::parse_spec("poisson3d:56")), "poisson3d:56");
}

TEST(CsrArraysUpload, EqualsTheHostReferenceInEveryIndexWidth) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  expect_uploads<std::int32_t, std::int32_t>(seed);
  expect_uploads<std::int64_t, std::int64_t>(seed);
  expect_uploads<std::int64_t, std::int32_t>(seed);
}

TEST(CsrArraysUpload, BrokenArraysAreTheReferencesInputError) {
  const Csr<double> m = csr_from_triplets<double>(3, 4, {0, 0, 2, 2}, {0, 2, 1, 3}, {1, 2, 3, 4});
  OwnedCsrArrays<std::int64_t, std::int64_t> a(m);
  a.col_idx[1] = (std::int64_t{1} << 32) + 2;  // narrowed it would read as column 2
  std::string host_error, device_error;
  try {
    (void)to_csr(a.view(), "A");
  } catch (const InputError& e) {
    host_error = e.what();
  }
  try {
    (void)upload(a.view(), "A", nullptr);
  } catch (const InputError& e) {
    device_error = e.what();
  }
  EXPECT_FALSE(host_error.empty());
  EXPECT_EQ(device_error, host_error);
  OwnedCsrArrays<std::int32_t, std::int32_t> b(m);
  b.row_ptr[2] = 1;
  EXPECT_THROW((void)upload(b.view(), "A", nullptr), InputError);
}

TEST(CsrArraysUpload, SamePatternNoticesEveryChangeButValues) {
  const Csr<double> m = gen::generate(gen::parse_spec("poisson3d:9"));
  using Arrays = OwnedCsrArrays<std::int32_t, std::int32_t>;
  const Arrays original(m);
  const DeviceCsr<double> d = upload(original.view(), "A", nullptr);
  {
    Arrays a(m);
    for (double& v : a.values) v = -3 * v + 1;
    EXPECT_TRUE(same_pattern(d, a.view(), nullptr)) << "new values, same pattern";
  }
  {
    Arrays a(m);
    a.col_idx[a.col_idx.size() / 2] += 1;
    EXPECT_FALSE(same_pattern(d, a.view(), nullptr)) << "one column";
  }
  {
    Arrays a(m);
    a.row_ptr[a.row_ptr.size() / 2] += 1;  // one row longer, the next shorter: same count
    EXPECT_FALSE(same_pattern(d, a.view(), nullptr)) << "one offset";
  }
  {
    const Csr<double> fewer = testing::random_csr({m.rows, m.cols, 0.01, 0.0, 0.0, false}, 3);
    EXPECT_FALSE(same_pattern(d, Arrays(fewer).view(), nullptr)) << "another entry count";
  }
  {
    Arrays a(m);
    a.cols += 1;
    EXPECT_FALSE(same_pattern(d, a.view(), nullptr)) << "another column count";
  }
  const Csr<double> empty = Csr<double>::empty(0, 0);
  const DeviceCsr<double> d_empty = upload(Arrays(empty).view(), "A", nullptr);
  EXPECT_TRUE(same_pattern(d_empty, Arrays(empty).view(), nullptr));
  EXPECT_FALSE(same_pattern(d_empty, original.view(), nullptr));
}

}  // namespace
}  // namespace tessera::cuda
