#pragma once
// The strength rule itself, shared by the three strength-of-connection phases (amg/strength.cpp
// on the host, amg/dist/dist_strength.cpp across ranks, amg/cuda/device_strength.cu on the GPU),
// so that their graphs agree bit for bit: nodes I != J are strongly connected when
//   ||A_IJ||_F >= theta * sqrt(||A_II||_F * ||A_JJ||_F),
// and the edge's value is the scaled strength ||A_IJ|| / sqrt(||A_II|| ||A_JJ||).
// On the device the product is spelt __dmul_rn so that nvcc cannot fuse it into a neighbour.
// The squares are summed of s*a, s a power of two from A's largest magnitude (strength_scale),
// so that the rule depends on A only up to scale: plain squares overflow past 1e154 and vanish
// below 1e-154, and a Poisson matrix scaled by 1e200 or 1e-200 lost every edge (one level).
#include <algorithm>
#include <cmath>

#include "local/core/host_device.hpp"

namespace tessera::amg {

/// The power of two that brings `max_abs`, A's largest magnitude (over every rank), into
/// [0.5, 1) (at most 2^1023, for an A of subnormal entries only); 1 for a zero or non-finite one.
/// Scaling by a power of two is exact and the strength is a ratio of norms, so wherever the
/// plain squares neither overflow nor underflow the edges and their values are the unscaled
/// rule's bit for bit.
inline double strength_scale(double max_abs) {
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return 1.0;
  return std::ldexp(1.0, std::min(-std::ilogb(max_abs) - 1, 1023));
}

/// (s*v)^2, the square the rule sums for entry v (s from strength_scale).
TESSERA_HD double scaled_square(double v, double s) {
#if defined(__CUDA_ARCH__)
  const double w = __dmul_rn(v, s);
  return __dmul_rn(w, w);
#else
  const double w = v * s;
  return w * w;
#endif
}

/// The scaled strength of block (I, J) from its sum of squares and the two diagonal block norms,
/// or 0 where the edge is not strong (a zero scale, a zero block, or below theta).
TESSERA_HD double strong_value(double block_sum_sq, double own_norm, double other_norm, double theta) {
#if defined(__CUDA_ARCH__)
  const double scale = sqrt(__dmul_rn(own_norm, other_norm));
#else
  const double scale = std::sqrt(own_norm * other_norm);
#endif
  const double strength = scale > 0 ? sqrt(block_sum_sq) / scale : 0.0;
  return strength > 0 && strength >= theta ? strength : 0.0;
}

}  // namespace tessera::amg
