#pragma once
// Distributed vectors: the owned entries (rows of the column partition of the matrix they
// multiply) plus a ghost buffer that the halo exchange fills (ghost_cols order).
// Multi-vectors are row-major, so a ghost row of k values travels as one item.
#include <cstdint>
#include <vector>

namespace tessera::dist {

struct DistVector {
  std::vector<double> owned;
  std::vector<double> ghosts;
};

struct DistMultiVector {
  std::int64_t cols = 1;      // k
  std::vector<double> owned;  // owned rows x k, row-major
  std::vector<double> ghosts; // ghost rows x k, row-major

  std::int64_t owned_rows() const { return cols == 0 ? 0 : static_cast<std::int64_t>(owned.size()) / cols; }
};

}  // namespace tessera::dist
