#include "local/host/dot.hpp"

#include <vector>

#include "local/core/host_ranges.hpp"

namespace tessera::host {

double dot(const double* x, const double* y, std::int64_t n) {
  const std::int64_t blocks = (n + kDotBlock - 1) / kDotBlock;
  std::vector<double> block_sum(static_cast<std::size_t>(blocks));
  // Ranges of at least 4 blocks (16K entries): below that, starting threads costs more.
  for_ranges(
      blocks,
      [&](std::int64_t first, std::int64_t last) {
        for (std::int64_t b = first; b < last; ++b) {
          const std::int64_t end = b + 1 < blocks ? (b + 1) * kDotBlock : n;
          double sum = 0.0;
          for (std::int64_t i = b * kDotBlock; i < end; ++i) sum += x[i] * y[i];
          block_sum[b] = sum;
        }
      },
      4);
  double total = 0.0;
  for (double sum : block_sum) total += sum;
  return total;
}

}  // namespace tessera::host
