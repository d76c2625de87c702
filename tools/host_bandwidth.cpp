// What the host's memory gives a setup's host loops, on this machine: the ceiling that the
// distributed setup's passes over a rank's arrays (the Galerkin sum's columns, the inverse
// diagonal, ...) run against, by thread count. Over memory already touched (what a repeated
// setup reuses), N = `mb` megabytes of int32 (default 84: the column indices of the Galerkin
// sum's 21M entries a rank at poisson3d:242 on two ranks), best of five, for T threads each:
//   copy     dst[k] = src[k]                 (read 4 + write 4 bytes an entry)
//   remap    dst[k] = map[src[k]]            (the sum's columns: a map of 700K entries, local reads)
//   read     sum += src[k]                   (read 4 bytes an entry)
// Run two at once (one a rank) to see what two ranks sharing a socket get:
//   g++ -O3 -fopenmp tools/host_bandwidth.cpp -o host_bandwidth && ./host_bandwidth 84 1 2 4 8 16
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

template <class Body>
double best_of_five(Body&& body) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const double mb = argc > 1 ? std::atof(argv[1]) : 84.0;
  const auto n = static_cast<std::int64_t>(mb * 1e6 / sizeof(std::int32_t));
  const std::int32_t map_size = 700000;
  std::vector<std::int32_t> src(n), dst(n), map(map_size);
  // Banded columns, as a coarse operator's: entry k's column is near its row's.
  for (std::int64_t k = 0; k < n; ++k) src[k] = static_cast<std::int32_t>((k / 33 + k % 33) % map_size);
  for (std::int32_t c = 0; c < map_size; ++c) map[c] = map_size - 1 - c;
  std::printf("threads  copy GB/s  remap GB/s  read GB/s   (N = %lld int32, %.0f MB)\n", static_cast<long long>(n), mb);
  for (int a = 2; a < std::max(argc, 3); ++a) {
    const int threads = argc > 2 ? std::atoi(argv[a]) : omp_get_max_threads();
    omp_set_num_threads(threads);
    const double copy = best_of_five([&] {
#pragma omp parallel for schedule(static)
      for (std::int64_t k = 0; k < n; ++k) dst[k] = src[k];
    });
    const double remap = best_of_five([&] {
#pragma omp parallel for schedule(static)
      for (std::int64_t k = 0; k < n; ++k) dst[k] = map[src[k]];
    });
    std::int64_t total = 0;
    const double read = best_of_five([&] {
      std::int64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
      for (std::int64_t k = 0; k < n; ++k) sum += src[k];
      total += sum;
    });
    const double bytes = static_cast<double>(n) * sizeof(std::int32_t);
    std::printf("%7d  %9.1f  %10.1f  %9.1f   (check %lld)\n", threads, 2 * bytes / copy / 1e9, 2 * bytes / remap / 1e9,
                bytes / read / 1e9, static_cast<long long>(total % 1000));
  }
  return 0;
}
