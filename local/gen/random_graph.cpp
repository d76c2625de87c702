// Erdos-Renyi-style random matrices: row r draws its entry count and its columns from a
// counter-based stream keyed by (seed, r), so a row is the same whichever range generates it.
//
// The count is Poisson(D) (the n -> infinity limit of Binomial(n, D/n)), truncated to n: the
// mean is D up to that truncation, which matters only when D is close to n. Columns are a
// uniform sample without replacement (Floyd's algorithm), values uniform in [-1, 1] \ {0}.
// We draw from our own streams rather than <random>'s distributions, whose algorithms differ
// between standard libraries: a spec must mean the same matrix on every build.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "local/gen/counter_rng.hpp"
#include "local/gen/kinds.hpp"

namespace tessera::gen::detail {
namespace {

/// Poisson(mean) draw: inversion by products for small means (O(mean) draws), rounded normal
/// approximation above 64, where exp(-mean) would underflow long before the error matters.
std::int64_t poisson_count(CounterStream& rng, std::int64_t mean) {
  constexpr std::int64_t kExactLimit = 64;
  constexpr double kTwoPi = 6.283185307179586476925;
  if (mean <= kExactLimit) {
    const double threshold = std::exp(-static_cast<double>(mean));
    std::int64_t k = 0;
    for (double product = rng.uniform(); product > threshold; product *= rng.uniform()) ++k;
    return k;
  }
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();  // u1 in (0, 1]
  const double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  const double draw = std::round(static_cast<double>(mean) + std::sqrt(static_cast<double>(mean)) * normal);
  return draw < 0 ? 0 : static_cast<std::int64_t>(draw);
}

/// Floyd's sample of `count` distinct values of [0, n), sorted.
std::vector<std::int64_t> distinct_columns(CounterStream& rng, std::int64_t n, std::int64_t count) {
  std::unordered_set<std::int64_t> chosen;
  chosen.reserve(static_cast<std::size_t>(count));
  for (std::int64_t j = n - count; j < n; ++j) {
    const auto t = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(j) + 1));
    chosen.insert(chosen.count(t) ? j : t);
  }
  std::vector<std::int64_t> columns(chosen.begin(), chosen.end());
  std::sort(columns.begin(), columns.end());
  return columns;
}

double nonzero_value(CounterStream& rng) {
  for (;;) {
    const double v = 2.0 * rng.uniform() - 1.0;  // [-1, 1)
    if (v != 0.0) return v;
  }
}

}  // namespace

RowBlock random_rows(std::int64_t n, std::int64_t mean_degree, std::uint64_t seed, std::int64_t begin,
                     std::int64_t end) {
  RowBlock b = start_block(n, begin, end, mean_degree);
  for (std::int64_t row = begin; row < end; ++row) {
    CounterStream rng(seed, static_cast<std::uint64_t>(row));
    const std::int64_t count = std::min(poisson_count(rng, mean_degree), n);
    for (std::int64_t c : distinct_columns(rng, n, count)) {
      b.col.push_back(c);
      b.values.push_back(nonzero_value(rng));
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
  }
  return b;
}

}  // namespace tessera::gen::detail
