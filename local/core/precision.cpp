#include "local/core/precision.hpp"

#include <cmath>
#include <limits>

#include "local/core/error.hpp"

namespace tessera {

Precision parse_precision(const std::string& name) {
  if (name == "fp64") return Precision::fp64;
  if (name == "fp32") return Precision::fp32;
  if (name == "fp16") return Precision::fp16;
  throw InputError("unknown precision '" + name + "' (expected fp64, fp32 or fp16)");
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp64: return "fp64";
    case Precision::fp32: return "fp32";
    case Precision::fp16: return "fp16";
  }
  return "?";
}

double max_finite(Precision p) {
  switch (p) {
    case Precision::fp64: return std::numeric_limits<double>::max();
    case Precision::fp32: return std::numeric_limits<float>::max();
    case Precision::fp16: return Half::max_finite;
  }
  return 0;
}

double unit_roundoff(Precision p) {
  return p == Precision::fp64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}

void check_values_representable(const std::vector<double>& values, Precision p, const std::string& what) {
  const double limit = max_finite(p);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    TESSERA_REQUIRE_INPUT(std::isfinite(v), what, ": value #", i, " is ", v, " (NaN/Inf are not accepted)");
    TESSERA_REQUIRE_INPUT(std::fabs(v) <= limit, what, ": value #", i, " = ", v, " exceeds the largest ",
                          to_string(p), " magnitude ", limit, "; use a wider --precision");
  }
}

}  // namespace tessera
