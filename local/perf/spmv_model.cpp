#include "local/perf/spmv_model.hpp"

#include <algorithm>
#include <vector>

#include <cmath>

#include "local/core/error.hpp"
#include "local/formats/instantiate.hpp"

namespace tessera::perf {
namespace {

constexpr double kSector = 32.0;

// How X is cut into cacheable units: `columns_per_unit` consecutive columns of A share a unit
// of `unit_bytes` bytes of X.
struct XUnits {
  std::int64_t columns_per_unit = 1;
  double unit_bytes = kSector;
};

XUnits x_units(const SpmvModelInput& in) {
  const double row_bytes = static_cast<double>(in.k) * in.value_bytes;  // one column index of A
  if (in.k > 1 && in.layout == Layout::col_major)
    return {std::max<std::int64_t>(1, static_cast<std::int64_t>(kSector) / in.value_bytes), kSector * in.k};
  if (row_bytes >= kSector) return {1, std::ceil(row_bytes / kSector) * kSector};
  return {static_cast<std::int64_t>(kSector / row_bytes), kSector};
}

}  // namespace

template <class T>
Traffic model_traffic(const Csr<T>& a, const SpmvModelInput& in) {
  TESSERA_REQUIRE_INPUT(in.value_bytes == 4 || in.value_bytes == 8, "model: value bytes must be 4 or 8, got ",
                        in.value_bytes);
  TESSERA_REQUIRE_INPUT(in.k >= 1, "model: k must be at least 1, got ", in.k);
  Traffic t;
  const double nnz = static_cast<double>(a.nnz()), k = static_cast<double>(in.k);
  t.a_bytes = nnz * (in.value_bytes + 4.0) + (static_cast<double>(a.rows) + 1.0) * 8.0;
  t.y_bytes = static_cast<double>(a.rows) * k * in.value_bytes * (in.reads_y ? 2.0 : 1.0);
  t.flops = 2.0 * nnz * k;

  const XUnits units = x_units(in);
  const std::int64_t num_units = (a.cols + units.columns_per_unit - 1) / units.columns_per_unit;
  const auto window_capacity = std::max<std::int64_t>(1, static_cast<std::int64_t>(in.cache_bytes / 2 / units.unit_bytes));
  std::vector<std::int64_t> seen_in_window(static_cast<std::size_t>(num_units), -1);
  std::vector<char> seen_ever(static_cast<std::size_t>(num_units), 0);
  std::int64_t window = 0, in_window = 0, loads = 0, distinct = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int64_t j = a.row_ptr[r]; j < a.row_ptr[r + 1]; ++j) {
      const std::int64_t u = a.col_idx[j] / units.columns_per_unit;
      if (!seen_ever[u]) seen_ever[u] = 1, ++distinct;
      if (seen_in_window[u] == window) continue;
      seen_in_window[u] = window;
      ++loads;
      ++in_window;
    }
    if (in_window >= window_capacity) {  // the cache is full: the next rows start a new window
      ++window;
      in_window = 0;
    }
  }
  t.x_windows = a.nnz() ? window + (in_window > 0 ? 1 : 0) : 0;
  t.x_bytes = static_cast<double>(loads) * units.unit_bytes;
  t.x_compulsory_bytes = static_cast<double>(distinct) * units.unit_bytes;
  return t;
}

#define TESSERA_INSTANTIATE_MODEL(T) template Traffic model_traffic<T>(const Csr<T>&, const SpmvModelInput&);
TESSERA_FOR_EACH_VALUE_TYPE(TESSERA_INSTANTIATE_MODEL)
#undef TESSERA_INSTANTIATE_MODEL

}  // namespace tessera::perf
