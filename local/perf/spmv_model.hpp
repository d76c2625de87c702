#pragma once
// Roofline model of SpMV / SpMM: the bytes a kernel must move through device memory, its
// arithmetic intensity, and its time at a measured bandwidth. Host code, no device needed.
//
// Bytes of A: nnz*(value + 4-byte column) + (rows+1)*8-byte offsets, read once.
// Bytes of Y: rows*k values written, plus read when beta != 0.
// Bytes of X: what reaches DRAM depends on reuse. A is streamed with evict-first loads, so the
// L2 holds X; rows are walked in order, and a window of rows whose distinct X sectors fill
// half the L2 reads each of its sectors once. X bytes = sum over windows of the distinct
// 32-byte sectors the window touches. When all of X fits, that is the compulsory minimum
// (each touched sector once); a random pattern larger than the cache pays per window.
// Row-major X costs each touched row of X (k values, rounded up to sectors); column-major X
// costs each touched sector once per column.
#include <cstdint>

#include "local/formats/csr.hpp"
#include "local/formats/dense.hpp"

namespace tessera::perf {

struct SpmvModelInput {
  int value_bytes = 8;                  // 8 fp64, 4 fp32
  std::int64_t k = 1;                   // columns of X (1 = SpMV)
  Layout layout = Layout::row_major;    // of X and Y (irrelevant for k = 1)
  bool reads_y = false;                 // beta != 0
  double cache_bytes = 50.0 * (1 << 20);  // L2 (H100: 50 MiB)
};

struct Traffic {
  double a_bytes = 0, x_bytes = 0, y_bytes = 0;
  double x_compulsory_bytes = 0;  // every touched sector once (the floor for X)
  double flops = 0;               // 2 * nnz * k
  std::int64_t x_windows = 0;     // windows of rows the X reuse estimate used

  double total_bytes() const { return a_bytes + x_bytes + y_bytes; }
  /// A, Y and the compulsory X: the bytes no kernel can avoid ("achieved GB/s" divides these).
  double minimal_bytes() const { return a_bytes + x_compulsory_bytes + y_bytes; }
  double intensity() const { return total_bytes() > 0 ? flops / total_bytes() : 0.0; }
  /// Time at `bandwidth` bytes/s.
  double predicted_seconds(double bandwidth) const { return total_bytes() / bandwidth; }
};

/// The model for y = alpha*A*x + beta*y (k = 1) or Y = alpha*A*X + beta*Y on A's pattern.
template <class T>
Traffic model_traffic(const Csr<T>& a, const SpmvModelInput& in);

}  // namespace tessera::perf
