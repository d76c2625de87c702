#pragma once
// Entry-wise vector work (the smoothers' and Krylov solvers' updates, the cycle's copies and
// corrections) by ranges on the rank's CPU threads. Each entry's formula is the caller's and
// touches only that entry, so the result is the same bit for bit on any thread count. On the
// host backend these loops were one thread's passes between threaded products, most of a
// V-cycle's time at a few million rows.
#include <cstdint>
#include <vector>

#include "local/core/host_array.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera::host {

/// entry(i) for every i in [0, n), by ranges.
template <class Entry>
void for_entries(std::int64_t n, Entry&& entry) {
  for_ranges(n, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) entry(i);
  });
}

/// to = from. A size change reallocates (and zero-fills) first, on one thread: a vector that
/// is reused keeps its size, so that happens once.
inline void copy(const std::vector<double>& from, std::vector<double>& to) {
  to.resize(from.size());
  copy_on_threads(from.data(), from.size(), to.data());
}

/// Every entry of x = value.
inline void fill(std::vector<double>& x, double value) {
  for_entries(static_cast<std::int64_t>(x.size()), [&](std::int64_t i) { x[i] = value; });
}

}  // namespace tessera::host
