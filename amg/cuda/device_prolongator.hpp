#pragma once
// The transfer operators of one level on the device, each the twin of a host step:
//   P = P_tent - omega D^-1 (A P_tent)   <-> amg::smooth_prolongator (append_smoothed_row's merge:
//                                           pattern = pattern(P_tent) ∪ pattern(A P_tent))
//   R = P^T                              <-> ref::transpose (rows sorted)
//   A_c = R (A P)                        <-> LevelOps::galerkin (structural pattern kept)
// DeviceTransferPlan keeps every symbolic result of a level (the three SpGEMM plans, the
// operands in the form the products read, P's merged pattern, the transpose permutation,
// the pattern of A P_tent), so device re-setup (same patterns, new values) only recomputes
// values: value gathers, the three numeric phases, P's merge and R's gather. On the tile path
// A's tiles are made once per level and shared by A P_tent and A P, and A P stays in tiles
// between A P and R (A P). The CSR results (A P_tent, A P on cuSPARSE/hash, A_c) are written
// straight into ap_tent, ap and the caller's A_c (DeviceProduct::multiply_into), so a kept hash
// plan (and a cuSPARSE one whose rows come out sorted) holds none of them a second time; the tile
// engine keeps C in tiles besides. bytes() counts ap_tent and ap here, A_c with its level.
#include <cuda_runtime_api.h>

#include <string>

#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/device_product.hpp"

namespace tessera::amg::gpu {

/// The engine each product of a level ran on (OffloadSpgemm::automatic resolves once per level).
struct ProductEngines {
  tessera::cuda::OffloadSpgemm a_p_tent = tessera::cuda::OffloadSpgemm::tile;
  tessera::cuda::OffloadSpgemm a_p = tessera::cuda::OffloadSpgemm::tile;
  tessera::cuda::OffloadSpgemm r_a_p = tessera::cuda::OffloadSpgemm::tile;
};

/// "A*P_tent: tile, A*P: tile, R*AP: cusparse"
std::string to_string(const ProductEngines& engines);

/// `which` automatic: the level's three products run on one engine, chosen when the level is
/// first built from the work estimate of its first product (choose_level_spgemm_engine), so no
/// operand is converted between tiles and CSR mid-level; on tiles A P stays in tiles for R (A P).
/// keep_plans false (AmgOptions::keep_setup_plans): the level is built once and the plan freed
/// right after, so the cuSPARSE and hash products run one-shot (DeviceProduct's keep_plan).
struct DeviceTransferPlan {
  explicit DeviceTransferPlan(tessera::cuda::OffloadSpgemm which = tessera::cuda::OffloadSpgemm::tile,
                              cudaStream_t stream = nullptr, bool keep_plans = true)
      : which(which),
        stream(stream),
        a_p_tent(which, stream, keep_plans),
        a_p(which, stream, keep_plans),
        r_a_p(which, stream, keep_plans) {}
  tessera::cuda::OffloadSpgemm which;
  cudaStream_t stream;
  tessera::cuda::DeviceProduct a_p_tent, a_p, r_a_p;                 // A P_tent, A P, R (A P)
  tessera::cuda::ProductOperand a_op, p_tent_op, p_op, r_op, ap_op;  // ap_op: cuSPARSE/hash (tiles stay in a_p)
  tessera::cuda::ProductOperand filtered_op;  // A_F, where the smoothing multiplies it (SmoothingOperator)
  tessera::cuda::DeviceCsr<double> ap_tent;  // A P_tent in CSR (P's merge reads it): its product's only CSR copy
  tessera::cuda::DeviceCsr<double> ap;       // A P in CSR, cuSPARSE/hash paths only: its product's only copy
  bool a_op_current = false;  // a_op holds A's current values (smoothing refreshed them for Galerkin)
  bool have_p_pattern = false, have_r_pattern = false;  // P's / R's row_ptr and col_idx are final
  tessera::cuda::DeviceBuffer<std::int64_t> r_source;  // R entry k = P entry r_source[k]

  std::int64_t bytes() const;  // device memory kept for re-setup
  /// The engines of the three products (resolved by the first setup when `which` is automatic).
  ProductEngines engines() const;
};

/// Which operator the smoothing multiplies P_tent by.
enum class SmoothingOperator {
  level_a,   // the level's A: its operand form is kept for the Galerkin product of the round
  filtered,  // its filtered operator A_F (device_filtered_operator.hpp): an operand of its own
};

/// Fills `p` (pattern built on the first call, values only afterwards) with
/// P = P_tent - omega * diag(inv_diag) * (A P_tent), `a` being A or A_F as `which` says.
void device_smooth_prolongator(const tessera::cuda::DeviceCsr<double>& a, const double* inv_diag,
                               const tessera::cuda::DeviceCsr<double>& p_tent, double omega, DeviceTransferPlan& plan,
                               tessera::cuda::DeviceCsr<double>& p, cudaStream_t stream = nullptr,
                               SmoothingOperator which = SmoothingOperator::level_a);

/// Fills `r` = P^T (rows sorted; pattern and permutation built on the first call, a gather of
/// P's values afterwards).
void device_transpose(const tessera::cuda::DeviceCsr<double>& p, DeviceTransferPlan& plan,
                      tessera::cuda::DeviceCsr<double>& r, cudaStream_t stream = nullptr);

/// Fills `a_c` = R (A P) with the plan's two products on the plan's stream (pattern built on the first call, values
/// only afterwards: pass the same `a_c`).
void device_galerkin(const tessera::cuda::DeviceCsr<double>& a, const tessera::cuda::DeviceCsr<double>& p,
                     const tessera::cuda::DeviceCsr<double>& r, DeviceTransferPlan& plan,
                     tessera::cuda::DeviceCsr<double>& a_c);

}  // namespace tessera::amg::gpu
