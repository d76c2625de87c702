#pragma once
// x . y on the rank's CPU threads, with the same bits on any thread count: entries are summed in
// blocks of kDotBlock, each block left to right, and then the blocks' sums left to right.
// Threads take ranges of whole blocks, so the order of the additions never depends on how many
// threads there are. It is the host backend's inner product (dist::dot adds it over ranks).
// Its rounding differs from one left-to-right pass over all entries; the error bound is the
// usual n eps sum |x_i y_i|, and with two levels of partial sums it is smaller in practice.
#include <cstdint>

namespace tessera::host {

inline constexpr std::int64_t kDotBlock = 4096;

/// sum_i x[i] * y[i] over [0, n), blockwise as above.
double dot(const double* x, const double* y, std::int64_t n);

}  // namespace tessera::host
