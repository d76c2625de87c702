#pragma once
// The sorted distinct values of a large host array, on the rank's CPU threads. The distributed
// setup gathers ghost and outside columns this way: hundreds of thousands of entries, mostly
// repeats, that one thread's std::sort took tens of milliseconds to order, a cost that grows with
// the surface between ranks. Equal values are identical, so the result does not depend on the
// order of the work: it is the same whatever the thread count.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "local/core/host_ranges.hpp"

namespace tessera::host {

/// `values` sorted with repeats removed: ranges of the array are sorted and deduplicated in
/// parallel, then pairs of runs are merged (std::set_union) round by round, in parallel.
template <class T>
void sort_unique(std::vector<T>& values) {
  const RangeSplit slices(static_cast<std::int64_t>(values.size()));
  if (slices.count() == 1) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return;
  }
  std::vector<std::vector<T>> runs(static_cast<std::size_t>(slices.count()));
  slices.run([&](int slice, std::int64_t begin, std::int64_t end) {
    const auto first = values.begin() + begin, last = values.begin() + end;
    std::sort(first, last);
    runs[slice].assign(first, std::unique(first, last));
  });
  while (runs.size() > 1) {
    std::vector<std::vector<T>> merged((runs.size() + 1) / 2);
    RangeSplit(static_cast<std::int64_t>(merged.size()), 1).run([&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t m = begin; m < end; ++m) {
        std::vector<T>& left = runs[2 * m];
        if (static_cast<std::size_t>(2 * m + 1) == runs.size()) {
          merged[m] = std::move(left);  // the odd run out waits for the next round
          continue;
        }
        std::vector<T>& right = runs[2 * m + 1];
        merged[m].reserve(left.size() + right.size());
        std::set_union(left.begin(), left.end(), right.begin(), right.end(), std::back_inserter(merged[m]));
        std::vector<T>().swap(left);
        std::vector<T>().swap(right);
      }
    });
    runs = std::move(merged);
  }
  values = std::move(runs.front());
}

}  // namespace tessera::host
