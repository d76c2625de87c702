#pragma once
// IEEE 754 binary16 as a storage type. C++17 has no half type and the host build must not
// depend on cuda_fp16.h, so this holds the bits and converts through float on the host.
// It is layout-compatible with CUDA's __half: device code reinterprets the same buffer.
#include <cstdint>
#include <cstring>
#include <limits>

namespace tessera {

struct Half {
  std::uint16_t bits = 0;

  Half() = default;
  explicit Half(float value) : bits(from_float(value)) {}
  explicit operator float() const { return to_float(bits); }
  explicit operator double() const { return to_float(bits); }

  /// Largest finite binary16 value.
  static constexpr float max_finite = 65504.0f;
  /// Smallest positive normal binary16 value (2^-14); below it precision degrades.
  static constexpr float min_normal = 6.103515625e-05f;

  /// float -> binary16, round to nearest even; overflow gives +-inf, NaN stays NaN.
  static std::uint16_t from_float(float value) {
    std::uint32_t f;
    std::memcpy(&f, &value, sizeof f);
    const std::uint32_t sign = (f >> 16) & 0x8000u;
    const std::uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
    if (abs < 0x38800000u) {  // result is subnormal or zero: scale into the 10-bit field
      if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
      const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
      const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
      std::uint32_t h = mant >> shift;
      const std::uint32_t rest = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
      if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
      return static_cast<std::uint16_t>(sign | h);
    }
    std::uint32_t h = ((abs - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
    const std::uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }

  /// binary16 -> float (exact).
  static float to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    std::uint32_t f;
    if (exp == 0x1fu) {
      f = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
      f = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
      f = sign;
    } else {  // subnormal: value = mant * 2^-24
      const float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
      std::memcpy(&f, &v, sizeof f);
      f |= sign;
    }
    float out;
    std::memcpy(&out, &f, sizeof out);
    return out;
  }

  friend bool operator==(Half a, Half b) { return float(a) == float(b); }
  friend bool operator!=(Half a, Half b) { return !(a == b); }
};

static_assert(sizeof(Half) == 2, "Half must match __half's layout");

/// Converts any supported value type to double (the reference arithmetic type).
template <class T>
inline double to_double(T v) { return static_cast<double>(v); }
template <>
inline double to_double<Half>(Half v) { return static_cast<double>(static_cast<float>(v)); }

/// Converts a double to the value type T (Half rounds through float).
template <class T>
inline T from_double(double v) { return static_cast<T>(v); }
template <>
inline Half from_double<Half>(double v) { return Half(static_cast<float>(v)); }

}  // namespace tessera
