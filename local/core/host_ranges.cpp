#include "local/core/host_ranges.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <vector>

#if defined(TESSERA_HAVE_OPENMP)
#include <omp.h>
#endif

namespace tessera::host {

int threads() {
#if defined(TESSERA_HAVE_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_threads(int n) {
#if defined(TESSERA_HAVE_OPENMP)
  omp_set_num_threads(std::max(1, n));
#else
  (void)n;
#endif
}

bool threads_set_by_environment() {
  const char* value = std::getenv("OMP_NUM_THREADS");
  return value != nullptr && *value != '\0';
}

int available_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 1;
  return std::max(1, CPU_COUNT(&mask));
}

namespace {
std::int64_t range_items = 1 << 14;
}  // namespace

std::int64_t min_range_items() { return range_items; }
void set_min_range_items(std::int64_t items) { range_items = std::max<std::int64_t>(items, 1); }

RangeSplit::RangeSplit(std::int64_t n, std::int64_t grain) : n_(std::max<std::int64_t>(n, 0)) {
  if (grain <= 0) grain = range_items;
  const std::int64_t by_size = (n_ + grain - 1) / grain;
  count_ = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads(), by_size)));
}

RangeSplit RangeSplit::by_cost(std::int64_t n, const std::function<std::int64_t(std::int64_t)>& cost_before,
                               std::int64_t grain) {
  RangeSplit split(n, grain);
  if (split.count_ == 1) return split;
  const std::int64_t total = cost_before(split.n_);
  split.cuts_.assign(static_cast<std::size_t>(split.count_ + 1), split.n_);
  split.cuts_[0] = 0;
  // Range k starts at the first item whose cost before it reaches k/count of the total.
  for (int k = 1; k < split.count_; ++k) {
    const std::int64_t share = static_cast<std::int64_t>(static_cast<double>(total) * k / split.count_);
    std::int64_t lo = split.cuts_[k - 1], hi = split.n_;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (cost_before(mid) < share)
        lo = mid + 1;
      else
        hi = mid;
    }
    split.cuts_[k] = lo;
  }
  return split;
}

void RangeSplit::run(const std::function<void(int, std::int64_t, std::int64_t)>& body) const {
  if (count_ == 1) {
    body(0, 0, n_);
    return;
  }
  // No exception may leave an OpenMP region: each range keeps its own, the first is rethrown.
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(count_));
#if defined(TESSERA_HAVE_OPENMP)
#pragma omp parallel for schedule(static, 1) num_threads(count_)
#endif
  for (int range = 0; range < count_; ++range) {
    try {
      body(range, begin(range), end(range));
    } catch (...) {
      failed[range] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

void for_ranges(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body, std::int64_t grain) {
  RangeSplit(n, grain).run([&](int, std::int64_t b, std::int64_t e) { body(b, e); });
}

std::string first_failure(std::int64_t n, const std::function<std::string(std::int64_t, std::int64_t)>& check) {
  const RangeSplit split(n);
  std::vector<std::string> failures(static_cast<std::size_t>(split.count()));
  split.run([&](int range, std::int64_t begin, std::int64_t end) { failures[range] = check(begin, end); });
  for (std::string& failure : failures)
    if (!failure.empty()) return failure;
  return "";
}

}  // namespace tessera::host
