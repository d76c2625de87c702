#pragma once
// Runs `build` on `threads` host threads with ranges of a few items (so that the small problems
// of the tests split into several ranges), then restores the defaults. The threaded host loops
// (local/core/host_ranges.hpp) promise the one-thread result bit for bit: tests compare a run
// in this scope with one outside it.
#include <cstdint>

#include "local/core/host_ranges.hpp"

namespace tessera::testing {

template <class Build>
auto with_host_threads(int threads, Build&& build, std::int64_t range_items = 3) {
  struct Restore {
    int threads;
    std::int64_t items;
    ~Restore() {
      host::set_threads(threads);
      host::set_min_range_items(items);
    }
  } restore{host::threads(), host::min_range_items()};
  host::set_threads(threads);
  host::set_min_range_items(range_items);
  return build();
}

}  // namespace tessera::testing
