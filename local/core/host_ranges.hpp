#pragma once
// The host loops of the distributed setup (row renumbering, transposes, merges, assembly) on
// the rank's CPU threads. A loop over [0, n) is cut into contiguous ranges, one per thread, in
// order; OpenMP runs them (a private detail of this file's .cpp: callers need no flags), or one
// thread when Tessera is built without it.
//
// Determinism is the contract: a body writes only what its range owns, or per-range state the
// caller combines in range order afterwards, so results are the same bit for bit whatever the
// thread count (tests compare one thread with several). Two passes over the same RangeSplit
// see the same ranges, which is what count-then-fill loops need.
//
// Threads per rank: set_host_threads(), or threads_for_ranks_on_node() (dist/mpi_env.hpp) at
// start-up: the CPUs this process may run on, divided among the ranks of its node, unless
// OMP_NUM_THREADS says otherwise.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::host {

/// Threads a RangeSplit uses (1 without OpenMP).
int threads();
/// At least 1; clamped to 1 without OpenMP.
void set_threads(int n);
/// Whether the user fixed the count (OMP_NUM_THREADS), which start-up policies leave alone.
bool threads_set_by_environment();
/// CPUs this process may run on (its affinity mask), at least 1.
int available_cpus();
/// Items a range gets at least, unless a loop says otherwise (default 16384: starting threads
/// costs microseconds). Tests lower it so that small problems split into several ranges.
std::int64_t min_range_items();
void set_min_range_items(std::int64_t items);

class RangeSplit {
 public:
  /// [0, n) in min(threads(), ceil(n / grain)) ranges (at least one); grain 0 means
  /// min_range_items().
  explicit RangeSplit(std::int64_t n, std::int64_t grain = 0);

  /// As many ranges as RangeSplit(n, grain), cut where the items' cost is shared equally rather
  /// than their number: `cost_before(i)` is the cost of items [0, i), non-decreasing in i, and
  /// is asked O(ranges * log n) times. For loops whose costly items bunch together (the rows a
  /// Galerkin sum merges lie at the ends of a rank's rows): an even split by count hands them
  /// all to one thread, which the others then wait for.
  static RangeSplit by_cost(std::int64_t n, const std::function<std::int64_t(std::int64_t)>& cost_before,
                            std::int64_t grain = 0);

  int count() const { return count_; }
  std::int64_t begin(int range) const { return cuts_.empty() ? n_ * range / count_ : cuts_[range]; }
  std::int64_t end(int range) const { return cuts_.empty() ? n_ * (range + 1) / count_ : cuts_[range + 1]; }

  /// body(range, begin, end) for every range, in parallel. An exception thrown by a body is
  /// rethrown here (the first range's, in range order) after every range has finished.
  void run(const std::function<void(int, std::int64_t, std::int64_t)>& body) const;

 private:
  std::int64_t n_;
  int count_;
  std::vector<std::int64_t> cuts_;  // by_cost's range bounds (count_ + 1), else empty: even cuts
};

/// body(begin, end) over ranges of [0, n) in parallel (RangeSplit(n, grain).run).
void for_ranges(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body,
                std::int64_t grain = 0);

/// A validation that stops at its first bad item, in parallel: check(begin, end) returns the
/// message of the first bad item of its range ("" if none), and the first range's message wins,
/// which is the serial loop's. A check must not trust what an earlier range would have checked.
std::string first_failure(std::int64_t n, const std::function<std::string(std::int64_t, std::int64_t)>& check);

}  // namespace tessera::host
