#pragma once
// LevelOps whose setup products (A * P_tent for the prolongator smoothing, P^T A P for the
// Galerkin operator) run on one GPU: the host Csr operands are uploaded, converted to 8x8
// bitmap tiles on the device (cuda::to_tiles), multiplied with the tensor-core TileSpgemm
// (symbolic + numeric) and brought back as Csr (cuda::to_csr). SetupSpgemm::cusparse runs the
// same products with cuSPARSE SpGEMM ALG1 on CSR instead: the `--spgemm cusparse` ablation.
// Both keep the structural pattern (explicit zeros stay: no drop_zeros), as LevelOps requires
// for re-setup.
//
// Galerkin: R = P^T is formed on the host (ref::transpose; the hierarchy transposes P on the
// host anyway for the cycle's restriction) and uploaded; A_c = R * (A * P), with A*P kept on
// the device between the two products. The other ops (transpose, apply, residual, dot: the
// eigenvalue estimate's SpMVs) stay on the host; moving the whole setup to the device is the
// next step (issue 6), this moves the products, its dominant cost.
#include <memory>
#include <string>

#include "amg/level_ops.hpp"

namespace tessera::amg::gpu {

enum class SetupSpgemm { tile, cusparse };

/// "tile" | "cusparse"; anything else is an InputError.
SetupSpgemm parse_setup_spgemm(const std::string& name);
const char* to_string(SetupSpgemm s);

/// Where the device setup products spent their time (wall seconds around synchronised steps).
struct DeviceSetupStats {
  double upload = 0;    // host -> device (Csr operands)
  double convert = 0;   // CSR -> tiles and tiles -> CSR (tile path) or int32 offsets (cuSPARSE)
  double product = 0;   // the SpGEMMs themselves: symbolic + numeric (tile) or cuSPARSE
  double download = 0;  // device -> host (the products)
  int products = 0;     // SpGEMM calls (2 per Galerkin operator, 1 per prolongator)
  double transfers() const { return upload + download; }
  double total() const { return upload + convert + product + download; }
};

/// Host reference ops with multiply and galerkin on the GPU. `stats`, if given, accumulates
/// the timings of every product (it is shared with the returned ops).
LevelOps device_setup_ops(SetupSpgemm which = SetupSpgemm::tile, std::shared_ptr<DeviceSetupStats> stats = nullptr);

}  // namespace tessera::amg::gpu
