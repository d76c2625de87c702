#pragma once
// LevelOps whose setup products (A * P_tent for the prolongator smoothing, P^T A P for the
// Galerkin operator) run on one GPU through cuda::offload_spgemm / offload_galerkin
// (local/cuda/offload_spgemm.hpp): host Csr operands uploaded, multiplied by the tensor-core
// tile SpGEMM (SetupSpgemm::tile) or by cuSPARSE SpGEMM ALG1 (SetupSpgemm::cusparse, the
// `--spgemm cusparse` ablation), brought back as Csr. Both keep the structural pattern
// (explicit zeros stay: no drop_zeros), as LevelOps requires for re-setup.
//
// Galerkin: R = P^T is formed on the host (the hierarchy transposes P on the host anyway for
// the cycle's restriction) and uploaded; A_c = R * (A * P), with A*P kept on the device. The
// other ops (transpose, apply, residual, dot: the eigenvalue estimate's SpMVs) stay on the
// host; this moves the products, the setup's dominant cost.
#include <memory>
#include <string>

#include "amg/level_ops.hpp"
#include "local/cuda/offload_spgemm.hpp"

namespace tessera::amg::gpu {

/// The AMG's names for the offload's choices and timings (one definition, in local/cuda).
using SetupSpgemm = tessera::cuda::OffloadSpgemm;
using DeviceSetupStats = tessera::cuda::OffloadStats;
using tessera::cuda::to_string;

/// "tile" | "cusparse"; anything else is an InputError.
inline SetupSpgemm parse_setup_spgemm(const std::string& name) { return tessera::cuda::parse_offload_spgemm(name); }

/// Host reference ops with multiply and galerkin on the GPU. `stats`, if given, accumulates
/// the timings of every product (it is shared with the returned ops).
LevelOps device_setup_ops(SetupSpgemm which = SetupSpgemm::tile, std::shared_ptr<DeviceSetupStats> stats = nullptr);

}  // namespace tessera::amg::gpu
