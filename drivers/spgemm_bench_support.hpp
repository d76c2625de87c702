#pragma once
// Helpers shared by the lines of tessera-spgemm's GPU table (spgemm_gpu_benchmark.cpp, the hash
// line of spgemm_hash_line.cpp, the row batches of spgemm_row_batches.cpp): timing (device
// events, medians), the error scale (|A||B|) and the agreement between the lines' results, and
// how a failed line is printed. Events exists only when TESSERA_HAVE_CUDA is defined.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "drivers/common/driver_main.hpp"  // median
#include "local/core/error.hpp"
#include "local/formats/csr.hpp"
#include "local/reference/kernels.hpp"
#if defined(TESSERA_HAVE_CUDA)
#include "local/cuda/check.hpp"
#endif

namespace tessera::driver {

inline constexpr double kMiB = 1024.0 * 1024.0;

#if defined(TESSERA_HAVE_CUDA)
/// Four events on the default stream: a line records its phases between e[0] and e[3] and
/// reads the intervals with ms(from, to).
struct Events {
  cudaEvent_t e[4] = {};
  Events() {
    for (auto& x : e) TESSERA_CUDA_CHECK(cudaEventCreate(&x));
  }
  ~Events() {
    for (auto& x : e) cudaEventDestroy(x);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  double ms(int from, int to) const {
    float t = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&t, e[from], e[to]));
    return t;
  }
};
#endif

/// Entries of A's longest row (0 when A has no rows): the n of the rounding bound 2 n u.
inline std::int64_t longest_row(const Csr<double>& m) {
  std::int64_t longest = 0;
  for (std::int64_t i = 0; i < m.rows; ++i) longest = std::max(longest, m.row_length(i));
  return longest;
}

/// |A||B|: the scale of each entry's rounding error (2 n u (|A||B|)_ij bounds it).
inline Csr<double> magnitude_product(Csr<double> a, Csr<double> b) {
  for (auto& v : a.values) v = std::abs(v);
  for (auto& v : b.values) v = std::abs(v);
  return ref::spgemm(a, b);
}

/// max |x - y| / (|A||B|)_ij over the common pattern; infinity if the patterns differ, NaN if
/// a value is NaN.
inline double scaled_difference(const Csr<double>& x, const Csr<double>& y, const Csr<double>& magnitude) {
  if (x.row_ptr != y.row_ptr || x.col_idx != y.col_idx) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (std::int64_t e = 0; e < x.nnz(); ++e) {
    if (std::isnan(x.values[e]) || std::isnan(y.values[e])) return std::numeric_limits<double>::quiet_NaN();
    const double scale = magnitude.values[e] > 0 ? magnitude.values[e] : 1.0;
    worst = std::max(worst, std::abs(x.values[e] - y.values[e]) / scale);
  }
  return worst;
}

/// What the lines compare against: the tile SpGEMM's C and (|A||B|), both absent when the tile
/// line ran out of memory or the product is too large to form on the host.
struct Agreement {
  const Csr<double>* tile_c = nullptr;
  const Csr<double>* magnitude = nullptr;
  double bound = 0;  // 4 n u: each of two results within 2 n u (|A||B|)_ij of the exact product
  bool drop_zeros = false;
  bool keep_results = true;  // false past kLargeProductFlops: results stay on the device
  double difference(const Csr<double>& c) const {
    return drop_zeros || !tile_c || !magnitude ? std::numeric_limits<double>::quiet_NaN()
                                               : scaled_difference(c, *tile_c, *magnitude);
  }
  /// Not compared (drop_zeros: patterns differ; no tile C or no |A||B|) counts as agreeing.
  bool agrees(double diff) const { return drop_zeros || !tile_c || !magnitude || diff <= bound; }
  /// A line's agreement with the tile C for the table: "|what| / (|A||B|) <= d" (with DISAGREES
  /// past the bound), or why it was not compared, rather than a NaN that reads as a figure.
  std::string describe(const char* what, double diff) const {
    if (drop_zeros) return tessera::detail::concat(what, " not compared (--drop-zeros: the patterns may differ)");
    if (!tile_c) return tessera::detail::concat(what, " not compared (no tile C)");
    if (!magnitude) return tessera::detail::concat(what, " not compared (product too large for the host's |A||B|)");
    char text[160];
    std::snprintf(text, sizeof text, "|%s| / (|A||B|) <= %.2e%s", what, diff,
                  agrees(diff) ? "" : tessera::detail::concat(" DISAGREES (bound ", bound, ")").c_str());
    return text;
  }
};

/// A failed line in the table's columns: "-" for every figure, then what happened.
inline void print_failed_line(const char* name, const char* what, const std::string& message) {
  std::printf("%-26s %10s %10s %9s %10s  %s (%s)\n", name, "-", "-", "-", "-", what, message.c_str());
}

inline bool is_out_of_memory(const DeviceError& e) {
  const std::string m = e.what();  // device_allocate's message, or a CUDA call's "out of memory"
  return m.find("out of memory") != std::string::npos || m.find("does not fit") != std::string::npos;
}

}  // namespace tessera::driver
