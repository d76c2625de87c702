#pragma once
// Counter-based random numbers for the seeded generators: every draw is a pure function of
// (seed, stream id, position in the stream), so any rank can draw the numbers of any row or
// edge without generating the ones before it, and the result never depends on the row split.
// Internal to local/gen (not installed).
#include <cstdint>

namespace tessera::gen::detail {

inline constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;

/// splitmix64's output function: a bijection on 64-bit words with full avalanche.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Uniform double in [0, 1) from the top 53 bits of a word.
inline double unit_interval(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// A splitmix64 sequence whose start is keyed by (seed, id). Distinct ids give distinct
/// starting states for one seed (mix64 is a bijection and kGolden is odd).
class CounterStream {
 public:
  CounterStream(std::uint64_t seed, std::uint64_t id) : state_(mix64(mix64(seed) + id * kGolden)) {}

  std::uint64_t next() {
    state_ += kGolden;
    return mix64(state_);
  }
  double uniform() { return unit_interval(next()); }
  /// Uniform integer in [0, bound), bound > 0 (multiply-shift: bias below 2^-64 * bound).
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

 private:
  std::uint64_t state_;
};

}  // namespace tessera::gen::detail
