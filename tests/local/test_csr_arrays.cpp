// CsrArrays (local/formats/csr_arrays.hpp), the host reference of cuda::upload(CsrArrays): a
// validated Csr copy of arrays in any index width equals the Csr they came from, on odd shapes
// (0x0, 1x1, empty rows, 0 x n); every broken invariant is an InputError that names it, with the
// same messages as validate(Csr), including int64 columns past the int32 index.
#include <gtest/gtest.h>

#include <string>

#include "local/core/error.hpp"
#include "local/formats/csr_arrays.hpp"
#include "support/owned_csr_arrays.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

using testing::OwnedCsrArrays;

template <class Arrays>
std::string error_of(const Arrays& a) {
  try {
    (void)to_csr(a.view(), "A");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

#define EXPECT_MESSAGE(a, fragment) EXPECT_NE(error_of(a).find(fragment), std::string::npos) << error_of(a)

template <class Offset, class Index>
void expect_round_trips(std::uint64_t seed) {
  const std::int64_t shapes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {7, 9}, {63, 65}, {300, 300}};
  int i = 0;
  for (auto& s : shapes)
    for (double density : {0.0, 0.05, 0.5}) {
      const Csr<double> m = testing::random_csr({s[0], s[1], density, 0.2, 0.1, s[0] > 10}, seed + i++);
      const OwnedCsrArrays<Offset, Index> copy(m);
      EXPECT_EQ(to_csr(copy.view()), m) << s[0] << "x" << s[1] << " density " << density;
    }
  const Csr<double> m = testing::random_csr({40, 40, 0.2, 0.1, 0.1, false}, seed);
  EXPECT_EQ(to_csr(arrays_of(m)), m);
}

TEST(CsrArrays, CopiesEqualTheSourceInEveryIndexWidth) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  expect_round_trips<std::int32_t, std::int32_t>(seed);
  expect_round_trips<std::int64_t, std::int64_t>(seed);
  expect_round_trips<std::int64_t, std::int32_t>(seed);
}

TEST(CsrArrays, BrokenArraysAreInputErrorsThatNameTheFault) {
  // 3x4: row 0 {0, 2}, row 1 empty, row 2 {1, 3}.
  const Csr<double> m = csr_from_triplets<double>(3, 4, {0, 0, 2, 2}, {0, 2, 1, 3}, {1, 2, 3, 4});
  using Arrays = OwnedCsrArrays<std::int64_t, std::int64_t>;
  EXPECT_EQ(error_of(Arrays(m)), "(accepted)");
  {
    Arrays a(m);
    a.row_ptr[0] = 1;
    EXPECT_MESSAGE(a, "A: row_ptr[0] is 1, expected 0");
  }
  {
    Arrays a(m);
    a.row_ptr[2] = 1;  // after 2: decreases at row 1
    EXPECT_MESSAGE(a, "A: row_ptr decreases at row 1");
  }
  {
    Arrays a(m);
    a.row_ptr[1] = 1000000;
    EXPECT_MESSAGE(a, "past the 4 entries");
  }
  {
    Arrays a(m);
    a.col_idx[3] = 4;
    EXPECT_MESSAGE(a, "A: row 2 has column 4 outside [0, 4)");
  }
  {
    Arrays a(m);
    a.col_idx[0] = -1;
    EXPECT_MESSAGE(a, "A: row 0 has column -1 outside [0, 4)");
  }
  {
    Arrays a(m);
    a.col_idx[1] = (std::int64_t{1} << 32) + 2;  // would narrow to 2: must not be taken for it
    EXPECT_MESSAGE(a, "outside [0, 4)");
  }
  {
    Arrays a(m);
    a.col_idx[1] = 0;  // a duplicate of column 0
    EXPECT_MESSAGE(a, "A: row 0 columns are not strictly increasing at column 0");
  }
  {
    Arrays a(m);
    std::swap(a.col_idx[2], a.col_idx[3]);
    EXPECT_MESSAGE(a, "A: row 2 columns are not strictly increasing at column 1");
  }
  {
    Arrays a(m);
    a.cols = std::int64_t{1} << 31;
    EXPECT_MESSAGE(a, "columns exceed the int32 column index");
  }
  {
    Arrays a(m);
    a.rows = -1;
    EXPECT_MESSAGE(a, "negative dimensions");
  }
  CsrArrays<std::int64_t, std::int64_t> no_offsets;
  EXPECT_THROW((void)to_csr(no_offsets), InputError);
  const Arrays a(m);
  CsrArrays<std::int64_t, std::int64_t> no_values = a.view();
  no_values.values = nullptr;
  EXPECT_THROW((void)to_csr(no_values), InputError);
}

}  // namespace
}  // namespace tessera
