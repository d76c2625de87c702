#include "drivers/common/overflow_check.hpp"

#include <cmath>
#include <limits>

#include "local/core/error.hpp"

namespace tessera::driver {
namespace {

/// Largest finite magnitude of a product's result in `p`: its accumulation type's, fp64's for
/// fp64, fp32's for fp32 and fp16 (FP16 inputs accumulate, and are stored, in FP32).
double max_finite_result(Precision p) {
  return p == Precision::fp64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
}

bool fits(double v, double limit) { return std::fabs(v) <= limit; }  // false for NaN and Inf

std::string message(const std::string& product, Precision p, std::int64_t row, double value) {
  return detail::concat(product, " overflowed ", to_string(p), ": row ", row, " holds ", value, ", past the largest ",
                        to_string(p), " result ", max_finite_result(p), ", from finite operands: their values are ",
                        p == Precision::fp64 ? "too large (scale them)" : "too large for it (use a wider --precision)");
}

std::string first_in_rows(const std::string& product, Precision p, const Csr<double>& c, std::int64_t first_row) {
  const double limit = max_finite_result(p);
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t q = c.row_ptr[i]; q < c.row_ptr[i + 1]; ++q)
      if (!fits(c.values[q], limit)) return message(product, p, first_row + i, c.values[q]);
  return "";
}

}  // namespace

std::string overflowed_entry(const std::string& product, Precision p, const Csr<double>& c, std::int64_t first_row) {
  return first_in_rows(product, p, c, first_row);
}

std::string overflowed_entry(const std::string& product, Precision p, const dist::DistMatrix& c) {
  const std::string local = first_in_rows(product, p, c.local, c.row_begin());
  return local.empty() ? first_in_rows(product, p, c.nonlocal, c.row_begin()) : local;
}

std::string overflowed_entry(const std::string& product, Precision p, const std::vector<double>& y, std::int64_t k,
                             Layout layout, std::int64_t first_row) {
  const double limit = max_finite_result(p);
  const std::int64_t rows = k > 0 ? static_cast<std::int64_t>(y.size()) / k : 0;
  for (std::size_t e = 0; e < y.size(); ++e) {
    if (fits(y[e], limit)) continue;
    const std::int64_t index = static_cast<std::int64_t>(e);
    return message(product, p, first_row + (layout == Layout::row_major ? index / k : index % rows), y[e]);
  }
  return "";
}

void throw_if_overflowed(const std::string& message) {
  if (!message.empty()) throw InputError(message);
}

}  // namespace tessera::driver
