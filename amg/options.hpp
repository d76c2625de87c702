#pragma once
// AmgOptions: every knob of the smoothed-aggregation setup and the cycle, with the defaults
// of PETSc GAMG where it has one (Chebyshev degree 2 on [0.1, 1.1] x the eigenvalue estimate,
// prolongator damping 4/3 / lambda_max, safety factor 1.1).
#include <cstdint>
#include <string>

namespace tessera::amg {

enum class SmootherKind { chebyshev, l1_jacobi };
enum class CycleKind { v, w };

struct AmgOptions {
  // --- setup ---
  /// Keep a_ij when |a_ij| >= theta * sqrt(|a_ii a_jj|) (block norms for block systems).
  /// 0.02, not 0.08: the 27-point Laplacian's scaled couplings are all 1/26 ~ 0.038, so 0.08
  /// drops every edge and nothing coarsens (GAMG's own default is 0; 0.02 still drops the
  /// round-off couplings an assembled elasticity matrix carries).
  double strength_threshold = 0.02;
  /// Stop coarsening once a level has at most this many rows; it is then solved directly.
  std::int64_t coarse_size = 2000;
  int max_levels = 25;
  /// Smooth the tentative prolongator (false: plain aggregation, P = P_tent).
  bool smooth_prolongator = true;
  /// Smooth P_tent with A's filtered operator (A's strong couplings, the others lumped into the
  /// diagonal: amg/filtered_operator.hpp) instead of A. Pays where the strength graph drops
  /// many entries of a scalar problem (a frame with its kinds of dof separated: operator
  /// complexity 4.93 -> 1.59, 48 -> 44 iterations on frame3d:40:30); changes nothing where it
  /// drops none. Not for the rigid-body modes: lumping keeps the constants' row sums, not the
  /// rotations' (elasticity3d:48, 17 -> 20 iterations). Every setup, the distributed one on its
  /// ranks' rows (amg/dist/dist_filtered_operator.hpp), with either re-setup transfer.
  bool filtered_smoothing = false;
  /// Lanczos steps of the lambda_max(D^-1 A) estimate (GAMG's CG-based estimate uses 10).
  int eigen_iterations = 10;
  /// The estimate is a lower bound (Ritz value); it is multiplied by this (GAMG: 1.1).
  double eigen_safety = 1.1;
  /// Device setup (amg::gpu::device_setup) only: keep every symbolic product plan (operand
  /// tiles, value-refresh maps, TileSpgemm plans, cuSPARSE reuse descriptors and buffers,
  /// HashSpgemm plans) so that device_resetup recomputes values only. That buys re-setup speed
  /// with device memory (poisson3d:192 on an H100: 7.2 GiB tile / 11.5 GiB cuSPARSE with plans,
  /// 2.1 GiB without; the hash engine keeps each C twice, its own and the caller's CSR, plus
  /// its binned rows: not measured), and the cuSPARSE reuse API makes the first setup slower
  /// than a one-shot SpGEMM. false: plans are freed level by level, cuSPARSE and hash run
  /// one-shot, and device_resetup is a full device setup. The host and distributed setups
  /// ignore it.
  bool keep_setup_plans = true;

  // --- cycle ---
  SmootherKind smoother = SmootherKind::chebyshev;
  /// Chebyshev polynomial degree (matrix-vector products per smoothing step).
  int chebyshev_degree = 2;
  /// Chebyshev targets [lower_fraction, safety] x estimate (PETSc -esteig 0,0.1,0,1.1).
  double chebyshev_lower_fraction = 0.1;
  /// l1-Jacobi sweeps per smoothing step.
  int jacobi_sweeps = 2;
  CycleKind cycle = CycleKind::v;
  /// Dense direct solve of the coarsest level up to this many rows; larger coarsest levels
  /// (coarsening stalled) are smoothed instead.
  std::int64_t max_dense_rows = 6000;
};

/// "chebyshev" | "l1-jacobi" -> SmootherKind; anything else is an InputError.
SmootherKind parse_smoother(const std::string& name);
/// "V" | "W" (either case) -> CycleKind; anything else is an InputError.
CycleKind parse_cycle(const std::string& name);
const char* to_string(SmootherKind s);
const char* to_string(CycleKind c);

/// InputError naming the first option out of range.
void validate(const AmgOptions& options);

}  // namespace tessera::amg
