#pragma once
// Row offsets from row lengths (an exclusive scan) on the rank's CPU threads. The distributed
// setup builds offsets over millions of rows (P_tent's rows, one a fine dof); one thread's
// running sum is a serial pass over them, on top of the zero fill an assign(n + 1, 0) costs.
// Integer sums in a fixed order: the same offsets whatever the thread count.
#include <cstdint>
#include <vector>

#include "local/core/host_ranges.hpp"

namespace tessera::host {

/// offsets[0] = 0 and offsets[i + 1] = offsets[i] + count(i) for i in [0, n); `offsets` holds
/// n + 1 entries. Ranges sum their counts, their starts follow in range order, then each range
/// writes its offsets: count(i) is called twice, so it should be a cheap read. Returns offsets[n].
template <class Count>
std::int64_t offsets_from_counts(std::int64_t n, Count&& count, std::int64_t* offsets) {
  const RangeSplit ranges(n);
  std::vector<std::int64_t> start(static_cast<std::size_t>(ranges.count()) + 1, 0);
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    std::int64_t sum = 0;
    for (std::int64_t i = begin; i < end; ++i) sum += count(i);
    start[range + 1] = sum;
  });
  for (int range = 0; range < ranges.count(); ++range) start[range + 1] += start[range];
  offsets[0] = 0;
  ranges.run([&](int range, std::int64_t begin, std::int64_t end) {
    std::int64_t at = start[range];
    for (std::int64_t i = begin; i < end; ++i) offsets[i + 1] = at += count(i);
  });
  return start.back();
}

}  // namespace tessera::host
