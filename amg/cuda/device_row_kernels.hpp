#pragma once
// Row-wise kernels of the device AMG setup, each the twin of a host loop:
//   inverse diagonal 1/a_ii           <-> hierarchy.cpp's inverse_diagonal (+ check_operator's
//                                         positive, finite diagonal check)
//   first unfit row                   <-> dist_level_ops.cpp's check_dist_operator (its rows)
//   l1 inverse diagonal 1/d_l1        <-> smoother.cpp's make_smoother (l1-Jacobi)
//   Gershgorin bound max_i sum|a_ij|/a_ii <-> eigen_estimate.cpp's gershgorin_bound (and
//                                         dist_eigen_estimate.cpp's dist_gershgorin_bound)
//   Lanczos start vector              <-> node_hashes.hpp's lanczos_start_entry (shared)
//   Lanczos update, division          <-> eigen_estimate.cpp's HostLanczosSpace and lanczos.hpp's
//                                         recurrence, with its scalars kept on the device
//   uniform node offsets              <-> strength.cpp's uniform_nodes
//   constant near-null space          <-> near_null_space.cpp's constant_near_null_space
//   (made on the device: uploading 2 x 8 bytes a row from pageable host memory took a fifth of
//   a 7M-row setup)
// Everything is ordered on `stream`; device_inverse_diagonal synchronises once (its check).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {

/// 1 / a_ii of the square `a` (sorted rows). InputError naming `what` and the first row whose
/// diagonal is missing, non-positive or not finite, or if any value of `a` is not finite.
tessera::cuda::DeviceBuffer<double> device_inverse_diagonal(const tessera::cuda::DeviceCsr<double>& a,
                                                            const char* what, cudaStream_t stream = nullptr);

/// The first owned row of a distributed operator's blocks (`local`: owned columns, so row i's
/// diagonal is its column i; `nonlocal`: the ghost columns) whose diagonal is missing,
/// non-positive or not finite, or which holds a non-finite entry in either block; -1 when every
/// row is fit. The test of amg::check_dist_operator's rows, for the distributed setup's device
/// check. Synchronises `stream`.
std::int64_t device_first_unfit_row(const tessera::cuda::DeviceCsr<double>& local,
                                    const tessera::cuda::DeviceCsr<double>& nonlocal, cudaStream_t stream = nullptr);

/// 1 / (a_ii + sum_{j != i} |a_ij|): the l1-Jacobi smoother's diagonal.
tessera::cuda::DeviceBuffer<double> device_l1_inverse_diagonal(const tessera::cuda::DeviceCsr<double>& a,
                                                               cudaStream_t stream = nullptr);

/// *max = max_i inv_diag_i * sum_j |a_ij| over a.rows >= 1 rows, left on the device (no
/// synchronisation; the host's bound is max(0, *max)).
void device_gershgorin_max(const tessera::cuda::DeviceCsr<double>& a, const double* inv_diag, double* max,
                           cudaStream_t stream = nullptr);

/// max(0, max_i inv_diag_i * sum_j |a_ij|) over a distributed operator's owned rows (0 for none),
/// each row's non-local entries summed before its local ones: dist_gershgorin_bound's order and
/// start, so the bound is the host's bit for bit. Synchronises `stream`.
double device_dist_gershgorin_bound(const tessera::cuda::DeviceCsr<double>& local,
                                    const tessera::cuda::DeviceCsr<double>& nonlocal, const double* inv_diag,
                                    cudaStream_t stream = nullptr);

/// rows / block_size + 1 node offsets n * block_size. InputError unless block_size divides rows.
tessera::cuda::DeviceBuffer<std::int64_t> device_uniform_nodes(std::int64_t rows, int block_size,
                                                               cudaStream_t stream = nullptr);

/// rows x block_size, row-major: entry (i, c) = 1 if i % block_size == c else 0.
tessera::cuda::DeviceBuffer<double> device_constant_near_null_space(std::int64_t rows, int block_size,
                                                                    cudaStream_t stream = nullptr);

/// v_i = lanczos_start_entry(first_row + i) for i < n (first_row: the global index of row 0 here),
/// bit for bit the host's.
void device_lanczos_start(std::int64_t first_row, std::int64_t n, double* v, cudaStream_t stream = nullptr);

/// The Lanczos recurrence's scalars in device memory (lanczos.hpp's alpha, beta and stopping
/// rule), so its steps run without synchronising; the host downloads them once at the end.
struct LanczosScalars {
  double* alpha;  // alpha_j = (A v_j)^T v_j, `steps` entries
  double* beta;   // beta_j = ||w_j|| after step j's update, for every step but the last taken
  double* taken;  // 0 while the recurrence runs, then the number of steps taken (exact)
  int steps;
};

/// v_i = v_i / sqrt(*sum): the start vector normalised by its norm (*sum = v^T v on the device).
void device_lanczos_normalize_start(std::int64_t n, const double* sum, double* v, cudaStream_t stream = nullptr);

/// Step j while running: alpha_j = *alpha_sum (recorded), then w_i -= alpha_j v_i + b u_i with
/// b = beta_{j-1} (0 for j = 0), rounded step by step as the host's Lanczos space (no FMA).
void device_lanczos_update(std::int64_t n, LanczosScalars s, int j, const double* alpha_sum, const double* v,
                           const double* u, double* w, cudaStream_t stream = nullptr);

/// Step j while running, one thread: norm = sqrt(*norm_sum); on the last step or when
/// norm <= 1e-12 |alpha_j| (an invariant subspace) the recurrence stops (taken = j + 1),
/// otherwise beta_j = norm.
void device_lanczos_record_norm(LanczosScalars s, int j, const double* norm_sum, cudaStream_t stream = nullptr);

/// Step j while running: v_i = w_i / beta_j (a true division, as the host's).
void device_lanczos_next_vector(std::int64_t n, LanczosScalars s, int j, const double* w, double* v,
                                cudaStream_t stream = nullptr);

/// y_i = sqrt(x_i).
void device_sqrt(std::int64_t n, const double* x, double* y, cudaStream_t stream = nullptr);

}  // namespace tessera::amg::gpu
