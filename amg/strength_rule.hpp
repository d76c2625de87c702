#pragma once
// The strength rule itself, shared by the three strength-of-connection phases (amg/strength.cpp
// on the host, amg/dist/dist_strength.cpp across ranks, amg/cuda/device_strength.cu on the GPU),
// so that their graphs agree bit for bit: nodes I != J are strongly connected when
//   ||A_IJ||_F >= theta * sqrt(||A_II||_F * ||A_JJ||_F),
// and the edge's value is the scaled strength ||A_IJ|| / sqrt(||A_II|| ||A_JJ||).
// On the device the product is spelt __dmul_rn so that nvcc cannot fuse it into a neighbour.
#include <cmath>

#include "local/core/host_device.hpp"

namespace tessera::amg {

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
