#pragma once
// The two per-node hashes of the AMG setup, defined once for the host, the distributed and the
// device code (TESSERA_HD): the device setup reproduces the host's aggregates and eigenvalue
// estimate only because it evaluates exactly these functions. Both are splitmix64 finalisers of
// the GLOBAL node id, so every partition gets the same values.
#include <cstdint>

#include "local/core/host_device.hpp"

namespace tessera::amg {

/// The MIS-2 priority of a node (aggregation.hpp). A bijection of uint64, so distinct nodes
/// have distinct priorities and the MIS needs no tie-break.
TESSERA_HD std::uint64_t mis_priority(std::uint64_t id) {
  std::uint64_t z = id + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Entry of the Lanczos start vector at global row `i`, in [-1, 1) (eigen_estimate.hpp). The
/// top 53 bits of the hash times 2^-52 are exact in double, so no rounding can differ.
TESSERA_HD double lanczos_start_entry(std::uint64_t i) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace tessera::amg
