// The step trace (local/core/step_trace.hpp): nothing recorded when off; nested steps recorded
// under their paths with their call counts; a parent's time includes its children's, and so do
// its page faults; a step that touches fresh memory records faults.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>

#include "local/core/step_trace.hpp"

namespace tessera::trace {
namespace {

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

class StepTraceTest : public ::testing::Test {
 protected:
  void SetUp() override { reset(); }
  void TearDown() override {
    set_enabled(false);
    reset();
  }
};

TEST_F(StepTraceTest, RecordsNothingWhenOff) {
  set_enabled(false);
  { TESSERA_TRACE_STEP("outer"); }
  EXPECT_TRUE(totals().empty());
}

TEST_F(StepTraceTest, NestedStepsAreRecordedUnderTheirPaths) {
  set_enabled(true);
  for (int i = 0; i < 3; ++i) {
    TESSERA_TRACE_STEP("outer");
    {
      TESSERA_TRACE_STEP("inner");
      sleep_ms(2);
    }
    TESSERA_TRACE_STEP("second");
  }
  { TESSERA_TRACE_STEP("inner"); }  // a top-level step of the same name is a different path
  const std::vector<StepTotal> t = totals();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].path, "inner");
  EXPECT_EQ(t[0].calls, 1);
  EXPECT_EQ(t[1].path, "outer");
  EXPECT_EQ(t[1].calls, 3);
  EXPECT_EQ(t[2].path, "outer/inner");
  EXPECT_EQ(t[2].calls, 3);
  EXPECT_EQ(t[3].path, "outer/second");
  EXPECT_EQ(t[3].calls, 3);
  EXPECT_GE(t[2].seconds, 3 * 0.002);
  EXPECT_GE(t[1].seconds, t[2].seconds + t[3].seconds);
  EXPECT_LT(t[0].seconds, t[2].seconds);
}

TEST_F(StepTraceTest, AStepThatTouchesFreshMemoryRecordsPageFaults) {
  set_enabled(true);
  constexpr std::size_t kBytes = std::size_t{64} << 20;  // above glibc's largest mmap threshold: fresh pages
  {
    TESSERA_TRACE_STEP("outer");
    TESSERA_TRACE_STEP("touch");
    const std::unique_ptr<char[]> fresh(new char[kBytes]);
    volatile char* page = fresh.get();  // volatile: the writes to memory freed unread stay
    for (std::size_t i = 0; i < kBytes; i += 4096) page[i] = 1;
  }
  const std::vector<StepTotal> t = totals();
  ASSERT_EQ(t.size(), 2u);
  ASSERT_EQ(t[1].path, "outer/touch");
  // At least one fault per 2 MB huge page (32); with 4 KiB pages, one per page (16384).
  EXPECT_GE(t[1].page_faults, 32);
  EXPECT_GE(t[0].page_faults, t[1].page_faults);
}

TEST_F(StepTraceTest, ResetForgetsTotalsAndAStepOpenedWhenOffStaysOff) {
  set_enabled(true);
  { TESSERA_TRACE_STEP("a"); }
  reset();
  EXPECT_TRUE(totals().empty());
  {
    set_enabled(false);
    TESSERA_TRACE_STEP("opened_off");
    set_enabled(true);
    TESSERA_TRACE_STEP("opened_on");  // not nested under the step that was opened while off
  }
  const std::vector<StepTotal> t = totals();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].path, "opened_on");
}

}  // namespace
}  // namespace tessera::trace
