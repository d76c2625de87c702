#pragma once
// The two vector updates of a PCG iteration with their scalars read from device memory, so that
// device_pcg queues a whole iteration without waiting for the dots it depends on (one host
// synchronisation an iteration for PCG's own scalars instead of three). Each is amg/pcg.cpp's
// update, one line:
//   step:      alpha = rz / pq;  x += alpha p;  r -= alpha q
//   direction: p = z + (rz_next / rz) p
// The step is guarded by the very test the host makes before it (rz finite and > 0, pq > 0):
// where the host would stop, nothing is written, so x and r stay as they were and device_pcg,
// which makes the test once the scalars reach the host, stops with the same x.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/core/host_device.hpp"

namespace tessera::amg::gpu {

/// True where PCG takes a step with these scalars (the host's breakdown tests, negated).
TESSERA_HD bool pcg_step_allowed(double rz, double pq) {
  // rz - rz is 0 exactly when rz is finite. Both compilers must decide alike: the build uses no
  // fast-math or flush-to-zero (a flushed subnormal rz would skip a step the host takes).
  return rz - rz == 0.0 && rz > 0 && pq > 0;
}

/// If pcg_step_allowed(*rz, *pq): x += (*rz / *pq) p and r -= (*rz / *pq) q; otherwise nothing.
void pcg_step(std::int64_t n, const double* rz, const double* pq, const double* p, const double* q, double* x,
              double* r, cudaStream_t stream);

/// p = z + (*rz_next / *rz) p.
void pcg_direction(std::int64_t n, const double* rz_next, const double* rz, const double* z, double* p,
                   cudaStream_t stream);

}  // namespace tessera::amg::gpu
