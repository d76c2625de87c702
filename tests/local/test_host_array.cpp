// HostArray (local/core/host_array.hpp): a std::vector whose resize does not zero-fill. Every
// test program runs with TESSERA_POISON_HOST_ARRAYS=1 (tests/support/poison_host_arrays.cpp),
// which the tests of the whole project rely on to catch an entry that a producer sized and never
// wrote: this test checks that the poison is there, and that the rest behaves like a std::vector.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "local/core/host_array.hpp"
#include "local/formats/csr.hpp"

namespace tessera {
namespace {

bool all_bytes_are(const void* p, std::size_t bytes, unsigned char b) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; ++i)
    if (c[i] != b) return false;
  return true;
}

TEST(HostArray, CtestPoisonsEveryNewAllocation) {
  ASSERT_TRUE(detail::poison_host_arrays()) << "tests/support/poison_host_arrays.cpp sets TESSERA_POISON_HOST_ARRAYS=1";
  HostArray<double> values;
  values.resize(1001);
  EXPECT_TRUE(std::isnan(values[0]) && std::isnan(values[500]) && std::isnan(values[1000]));
  HostArray<std::int32_t> cols(77);
  EXPECT_TRUE(all_bytes_are(cols.data(), cols.size() * sizeof(std::int32_t), 0xff));
  EXPECT_EQ(cols[76], -1);
  // Growing past the capacity: the new tail is poisoned, the old entries kept.
  HostArray<std::int64_t> offsets{0, 5, 9};
  offsets.resize(4096);
  EXPECT_EQ(offsets[1], 5);
  EXPECT_EQ(offsets[2], 9);
  EXPECT_EQ(offsets[4095], -1);
  // Csr's arrays are HostArrays.
  Csr<double> m = Csr<double>::empty(3, 3);
  m.col_idx.resize(5);
  EXPECT_EQ(m.col_idx[4], -1);
}

TEST(HostArray, ZerosAreAskedForExplicitly) {
  HostArray<double> a(300, 0.0);
  EXPECT_TRUE(all_bytes_are(a.data(), a.size() * sizeof(double), 0));
  HostArray<std::int64_t> counts;
  counts.assign(17, 0);
  counts.resize(40, 0);
  for (std::int64_t c : counts) EXPECT_EQ(c, 0);
  // Csr::empty's offsets are zeros.
  const Csr<float> e = Csr<float>::empty(9, 4);
  EXPECT_EQ(e.row_ptr, std::vector<std::int64_t>(10, 0));
}

TEST(HostArray, ComparesWithAPlainVectorElementWise) {
  const HostArray<int> a{1, 2, 3};
  EXPECT_TRUE(a == (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE((std::vector<int>{1, 2, 3}) == a);
  EXPECT_TRUE(a != (std::vector<int>{1, 2}));
  EXPECT_TRUE(a != (std::vector<int>{1, 2, 4}));
  EXPECT_TRUE((std::vector<int>{}) != a);
}

}  // namespace
}  // namespace tessera
