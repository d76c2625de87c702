#pragma once
// Which device SpGEMM engine a product C = A*B should run, from a work estimate of the
// operands' patterns (OffloadSpgemm::automatic resolves through this, per product).
//   scalar_products = sum over entries a_ik of rowlen_B(k): the intermediate products, what
//                     cuSPARSE's (Gustavson) work scales with;
//   tile_pairs      = sum over nonzero 8x8 tiles (I,K) of A of the nonzero tiles in tile-row K
//                     of B: the tile pairs the tensor-core TileSpgemm multiplies.
// Their ratio is the mean number of scalar products a tile pair carries: where tiles are well
// filled (elasticity with 3x3 blocks: 73 per pair on A*A) the tensor-core tile SpGEMM wins by
// far; elsewhere the row-wise hash SpGEMM (hash_spgemm.hpp) is the fastest engine measured
// (H100, A*A, against the fastest cuSPARSE algorithm: 7-point 1.19x, 27-point 4.34x where tiles
// gave 2.97x, random 2.13x), except on power-law graphs, whose long, skewed rows go to its
// global-memory tables (rmat:18:8: hash 0.42x): there cuSPARSE stays, picked by the mean
// products per row (rmat:18:8 3301; 27-point 704; random 100).
// The device estimate reads only the patterns (no values), runs on `stream` and reads back two
// integers; the host estimate is its obviously-right reference.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/offload_spgemm.hpp"
#include "local/formats/csr.hpp"

namespace tessera::cuda {

struct SpgemmWorkEstimate {
  std::int64_t scalar_products = 0;
  std::int64_t tile_pairs = 0;
  std::int64_t rows = 0;  // of A
  /// Mean scalar products per tile pair (0 for an empty product): at most 8*8*8 = 512.
  double products_per_pair() const { return tile_pairs ? double(scalar_products) / double(tile_pairs) : 0.0; }
  double products_per_row() const { return rows ? double(scalar_products) / double(rows) : 0.0; }
};

/// The tile SpGEMM is chosen from this many products per tile pair and this many products per
/// row of A on; else the hash SpGEMM up to kHashMaxProductsPerRow products per row of A, else
/// cuSPARSE. Calibrated from the measurements in docs/performance.md (2026-11-22, third
/// session): tile wins only at 73 products per pair of those measured, hash from 8.7 down.
inline constexpr double kTileProductsPerPairThreshold = 32.0;
inline constexpr double kTileMinProductsPerRow = 64.0;
inline constexpr double kHashMaxProductsPerRow = 2048.0;

/// tile when products_per_pair() >= kTileProductsPerPairThreshold and products_per_row() >=
/// kTileMinProductsPerRow; else hash when products_per_row() <= kHashMaxProductsPerRow; else
/// cusparse (an empty product picks tile: it runs no SpGEMM either way).
OffloadSpgemm choose_spgemm_engine(const SpgemmWorkEstimate& estimate);

/// An AMG level runs its three products (A*P_tent, A*P, R*(A*P)) on one engine, so that no
/// operand is converted between forms mid-level; the level's first product decides, from its
/// products per tile pair alone (A*P_tent has one entry per row of P_tent, so its rows are short
/// whatever the stencil and the per-row floor above does not apply): tile from
/// kLevelTileProductsPerPairThreshold on, else hash (AMG operators have no power-law rows). The
/// single-GPU device hierarchy asks this on its finest level only and gives every coarser
/// level the same engine.
/// A*P_tent's products per pair (host estimate, theta 0.02): 7-point 1.8-2.0
/// (poisson3d:64..192), 27-point 2.9-3.4 (poisson3d27:48..128), elasticity with rigid-body modes
/// 56-62. H100 setups, products (P smoothing + PtAP) in seconds (docs/performance.md, 2026-11-22
/// third session): poisson3d:192 hash 0.034, cuSPARSE 0.111, tile 0.198; poisson3d27:128 hash
/// 0.020, tile 0.066; elasticity3d:48 tile 0.033, hash 0.064.
inline constexpr double kLevelTileProductsPerPairThreshold = 16.0;
OffloadSpgemm choose_level_spgemm_engine(const SpgemmWorkEstimate& a_p_tent);

/// A level's engine from its first product A*B (A*P_tent, or A*P without prolongator smoothing):
/// `which` itself where it names an engine; for automatic, choose_level_spgemm_engine of the
/// estimate of A*B on `stream` (which it synchronises).
OffloadSpgemm resolve_level_spgemm_engine(OffloadSpgemm which, const DeviceCsr<double>& a, const DeviceCsr<double>& b,
                                          cudaStream_t stream = nullptr);

/// The estimate of A*B on the device. InputError if a.cols != b.rows.
SpgemmWorkEstimate estimate_spgemm_work(const DeviceCsr<double>& a, const DeviceCsr<double>& b,
                                        cudaStream_t stream = nullptr);

/// The same with B in tiles (A*P kept in tiles feeding R*(A*P)): B's row lengths are read from
/// the bitmaps, its tiles per tile-row from tile_row_ptr.
SpgemmWorkEstimate estimate_spgemm_work(const DeviceCsr<double>& a, const DeviceTileMatrix<double>& b,
                                        cudaStream_t stream = nullptr);

/// Host reference: plain loops over the host CSR (a set of tile columns per tile-row).
SpgemmWorkEstimate estimate_spgemm_work_host(const Csr<double>& a, const Csr<double>& b);

}  // namespace tessera::cuda
