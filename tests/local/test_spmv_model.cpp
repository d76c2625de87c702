// The SpMV/SpMM traffic model on patterns small enough to count by hand.
#include <gtest/gtest.h>

#include "local/core/error.hpp"
#include "local/perf/spmv_model.hpp"

namespace tessera {
namespace {

Csr<double> identity(std::int64_t n) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) idx[i] = i;
  return csr_from_triplets<double>(n, n, idx, idx, std::vector<double>(static_cast<std::size_t>(n), 1.0));
}

TEST(SpmvModel, IdentityFp64CountsEveryArrayOnce) {
  const perf::Traffic t = perf::model_traffic(identity(100), {});
  EXPECT_DOUBLE_EQ(t.a_bytes, 100 * (8 + 4) + 101 * 8);
  EXPECT_DOUBLE_EQ(t.x_bytes, 25 * 32);  // 4 doubles per 32-byte sector
  EXPECT_DOUBLE_EQ(t.x_compulsory_bytes, 25 * 32);
  EXPECT_DOUBLE_EQ(t.y_bytes, 100 * 8);
  EXPECT_DOUBLE_EQ(t.flops, 200);
  EXPECT_DOUBLE_EQ(t.total_bytes(), 2008 + 800 + 800);
  EXPECT_DOUBLE_EQ(t.intensity(), 200.0 / 3608.0);
  EXPECT_DOUBLE_EQ(t.predicted_seconds(3608.0), 1.0);
}

TEST(SpmvModel, ReadingYAndFp32) {
  perf::SpmvModelInput in;
  in.value_bytes = 4;
  in.reads_y = true;
  const perf::Traffic t = perf::model_traffic(identity(10), in);
  EXPECT_DOUBLE_EQ(t.a_bytes, 10 * 8 + 11 * 8);
  EXPECT_DOUBLE_EQ(t.x_bytes, 2 * 32);  // 8 floats per sector: columns 0-7 and 8-9
  EXPECT_DOUBLE_EQ(t.y_bytes, 2 * 10 * 4);
}

TEST(SpmvModel, SmallCacheRereadsX) {
  // Rows touch sectors {0,1}, {0,2}, {0,3}, {0,1}; a cache of 4 sectors holds 2 per window, so
  // every row starts a window and sector 0 is fetched four times.
  const Csr<double> a = csr_from_triplets<double>(4, 16, {0, 0, 1, 1, 2, 2, 3, 3}, {0, 4, 0, 8, 0, 12, 0, 4},
                                                  std::vector<double>(8, 1.0));
  perf::SpmvModelInput in;
  in.cache_bytes = 4 * 32;
  perf::Traffic t = perf::model_traffic(a, in);
  EXPECT_DOUBLE_EQ(t.x_bytes, 8 * 32);
  EXPECT_DOUBLE_EQ(t.x_compulsory_bytes, 4 * 32);
  EXPECT_EQ(t.x_windows, 4);
  in.cache_bytes = 1 << 20;  // everything fits: the compulsory floor
  t = perf::model_traffic(a, in);
  EXPECT_DOUBLE_EQ(t.x_bytes, 4 * 32);
  EXPECT_EQ(t.x_windows, 1);
}

TEST(SpmvModel, MultiVectorLayouts) {
  perf::SpmvModelInput in;
  in.k = 8;
  const perf::Traffic row = perf::model_traffic(identity(10), in);
  EXPECT_DOUBLE_EQ(row.x_bytes, 10 * 64);  // each row of X is 64 bytes
  EXPECT_DOUBLE_EQ(row.y_bytes, 10 * 8 * 8);
  EXPECT_DOUBLE_EQ(row.flops, 2 * 10 * 8);
  in.layout = Layout::col_major;
  const perf::Traffic col = perf::model_traffic(identity(10), in);
  EXPECT_DOUBLE_EQ(col.x_bytes, 3 * 32 * 8);  // 3 sectors of each of the 8 columns
  in.k = 5;
  in.layout = Layout::row_major;
  EXPECT_DOUBLE_EQ(perf::model_traffic(identity(10), in).x_bytes, 10 * 64);  // 40 bytes round up to 2 sectors
}

TEST(SpmvModel, EmptyMatrixAndBadInput) {
  const perf::Traffic t = perf::model_traffic(Csr<double>::empty(0, 0), {});
  EXPECT_DOUBLE_EQ(t.total_bytes(), 8);  // the single row offset
  EXPECT_EQ(t.x_windows, 0);
  perf::SpmvModelInput in;
  in.value_bytes = 2;
  EXPECT_THROW(perf::model_traffic(identity(3), in), InputError);
  in.value_bytes = 8;
  in.k = 0;
  EXPECT_THROW(perf::model_traffic(identity(3), in), InputError);
}

}  // namespace
}  // namespace tessera
