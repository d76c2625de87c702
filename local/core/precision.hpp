#pragma once
// Precision is always explicit. FP64 is the default (AMG needs it, Hopper has FP64 MMA);
// FP32 and FP16 (binary16 storage of the inputs, FP32 accumulation) are options, each with
// the error bound stated in docs/architecture.md and tested in tests/.
#include <string>
#include <vector>

#include "local/core/half.hpp"

namespace tessera {

enum class Precision { fp64, fp32, fp16 };

/// "fp64" | "fp32" | "fp16" -> Precision; anything else is an InputError.
Precision parse_precision(const std::string& name);
const char* to_string(Precision p);

/// Largest finite magnitude representable in the storage type of `p`.
double max_finite(Precision p);

/// Unit roundoff of the arithmetic type (2^-53, 2^-24, and 2^-24 for FP16 inputs with FP32
/// accumulation: the inputs' own rounding, 2^-11, is part of the data, reported separately).
double unit_roundoff(Precision p);

/// Throws InputError naming the first offending entry if any value is NaN/Inf, or (for fp32
/// and fp16) has a magnitude the precision cannot represent. `what` names the matrix.
void check_values_representable(const std::vector<double>& values, Precision p, const std::string& what);

template <class T> struct PrecisionOf;
template <> struct PrecisionOf<double> { static constexpr Precision value = Precision::fp64; };
template <> struct PrecisionOf<float> { static constexpr Precision value = Precision::fp32; };
template <> struct PrecisionOf<Half> { static constexpr Precision value = Precision::fp16; };

}  // namespace tessera
