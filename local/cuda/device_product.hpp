#pragma once
// DeviceProduct: C = A*B on device operands, the one device SpGEMM driver of the library (the
// AMG device setup uses it directly, offload_spgemm wraps it between upload and download).
// Everything that depends only on the patterns is made once, so that a re-run (same patterns,
// new values) runs the numeric phase and value gathers only:
//   tile:     operands in 8x8 bitmap tiles (ProductOperand keeps them, with the gather map
//             from their CSR, so new values are one gather), tensor-core TileSpgemm with its
//             plan and C's tile pattern kept; C can feed the next product in tiles (no
//             round trip through CSR) or be written to CSR (pattern once, then values only);
//   cusparse: cuSPARSE's reusable SpGEMM (cusparseSpGEMMreuse_*: workEstimation, nnz, copy
//             once; compute on every run), operands read in place with int32 row offsets made
//             once; C's rows checked once for order: already sorted (the common case) they
//             are copied as they are, else sorted through a permutation made once (CUB
//             segmented sort), so a re-run is compute + one value copy or gather.
//   hash:     Tessera's row-wise hash SpGEMM (hash_spgemm.hpp) on the CSR operands in place (no
//             conversion), its symbolic phase kept; C comes out sorted and is copied to the
//             caller's CSR (values only on a re-run), or handed over by a one-shot product.
// C held once (multiply_into): a product whose C is read as CSR can write it straight into the
// caller's matrix instead of holding its own copy next to the caller's (a kept hash plan held C
// twice: the AMG setup's three products per level took 5.1 GiB on poisson3d:192 against 1.9
// without plans). hash: the numeric phase writes the caller's CSR; cuSPARSE: C's columns and
// values move to the caller once its rows are found sorted, and later computes write there (rows
// that need sorting keep cuSPARSE's C and a sorted copy); tile: C stays in tiles (the next numeric
// phase writes them) and the caller's CSR gets its values, as result_csr.
// Without a kept plan (keep_plan false: AmgOptions::keep_setup_plans off, and offload_spgemm)
// the cuSPARSE path runs the one-shot SpGEMM instead (workEstimation, compute, copy with ALG1:
// deterministic, no reuse buffers), and result_csr hands cuSPARSE's column and value arrays
// over to the caller's CSR when its rows came out sorted, else frees them once sorted into it.
// OffloadSpgemm::automatic: the product picks its engine once, from the work estimate of its
// CSR operands (resolve_engine, before its operands are bound in that engine's form; see
// spgemm_engine_choice.hpp); engine() then says which one runs, for the statistics.
// All three keep the structural pattern (no drop_zeros), as the host ref::spgemm with keep_zeros
// does, so a pattern never changes with the values. Operands with no entries give the empty
// product without a device SpGEMM.
#include <cuda_runtime_api.h>

#include <memory>

#include "local/cuda/device_matrix.hpp"
#include "local/cuda/hash_spgemm.hpp"
#include "local/cuda/offload_spgemm.hpp"
#include "local/cuda/spgemm_engine_choice.hpp"
#include "local/cuda/tile_spgemm.hpp"

namespace tessera::cuda {

namespace testing_hooks {
/// Tests only: make the cuSPARSE path sort C's rows even when cuSPARSE returned them sorted
/// (the fallback is otherwise rarely exercised). Not thread-safe; off by default.
void force_cusparse_row_sort(bool on);
}  // namespace testing_hooks

/// rows x cols with no entries (row_ptr all zero), on `stream`.
DeviceCsr<double> empty_device_csr(std::int64_t rows, std::int64_t cols, cudaStream_t stream);

/// What a product reads of an operand: tiles (tile path), CSR with int32 row offsets (cuSPARSE)
/// or the CSR itself (hash).
struct OperandView {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const DeviceTileMatrix<double>* tiles = nullptr;
  const DeviceCsr<double>* csr = nullptr;  // col_idx, values
  const std::int32_t* row_ptr32 = nullptr;
};

/// A CSR matrix of a level in the form the level's SpGEMM reads. The first bind() in a form
/// converts (tiles and their gather map, or int32 row offsets); later binds must pass the same
/// pattern and only refresh values: one gather into the tiles when `values_changed`, nothing for
/// cuSPARSE and hash (they read the CSR's columns and values in place). Both converted forms
/// (tiles, int32 row offsets) may be held at once
/// (an operand shared by two products whose automatic choices differ). `which` must be resolved.
class ProductOperand {
 public:
  OperandView bind(const DeviceCsr<double>& a, OffloadSpgemm which, cudaStream_t stream,
                   bool values_changed = true);
  std::int64_t bytes() const;

 private:
  bool built_ = false, tiles_built_ = false, row_ptr32_built_ = false;
  std::int64_t rows_ = 0, nnz_ = 0;
  DeviceTileMatrix<double> tiles_;
  DeviceBuffer<std::int64_t> source_;  // tile value k = CSR value source_[k]
  DeviceBuffer<std::int32_t> row_ptr32_;
};

struct CusparseReusePlan;  // cuSPARSE descriptors and C as cuSPARSE writes it (device_product.cu)

class DeviceProduct {
 public:
  /// keep_plan false: the cuSPARSE path runs the one-shot SpGEMM on every multiply (nothing kept
  /// for a re-run), the hash path its symbolic phase again and hands C over in result_csr; the
  /// tile path is unchanged (its plan lives as long as this product).
  explicit DeviceProduct(OffloadSpgemm which = OffloadSpgemm::tile,
                         cudaStream_t stream = nullptr, bool keep_plan = true);
  ~DeviceProduct();

  /// automatic: estimates the work of A*B on the device and fixes the engine (the first call
  /// only: a re-setup keeps it with its plan). Other engines: nothing. Returns engine().
  OffloadSpgemm resolve_engine(const DeviceCsr<double>& a, const DeviceCsr<double>& b);
  /// The same with B in tiles (A*P kept in tiles by a tile product, feeding R*(A*P)).
  OffloadSpgemm resolve_engine(const DeviceCsr<double>& a, const DeviceTileMatrix<double>& b);
  /// automatic: fixes the engine to `engine` (a choice made for several products at once, as an
  /// AMG level does). InputError if this product already runs another engine.
  void assign_engine(OffloadSpgemm engine);
  /// The engine that runs: the constructor's, or the resolved choice (automatic until resolved).
  OffloadSpgemm engine() const { return which_; }
  bool chosen_automatically() const { return automatic_; }
  const SpgemmWorkEstimate& estimate() const { return estimate_; }  // set when chosen automatically

  DeviceProduct(DeviceProduct&&) noexcept;
  DeviceProduct& operator=(DeviceProduct&&) noexcept;

  /// C = A*B (views of this product's kind; InputError while the engine is unresolved). The
  /// first call runs the symbolic phase; later calls must pass operands with the same patterns
  /// (sizes checked) and run only the numeric phase. InputError if a.cols != b.rows.
  void multiply(const OperandView& a, const OperandView& b);

  /// C in tiles, as an operand of a following tile product (tile path only; valid until the
  /// next multiply).
  OperandView tile_result() const;

  /// C into `c`, rows sorted: the first call after the symbolic phase builds c's pattern, later
  /// calls (same `c`, or one with that pattern) rewrite the values only. InputError on a
  /// product that runs multiply_into (C is in the caller's matrix, not here).
  void result_csr(DeviceCsr<double>& c);

  /// C = A*B into the caller's `c`, rows sorted, with C held once (see the file comment): the
  /// first call builds c's pattern; with a kept plan, later calls must pass the same `c` (its
  /// buffers: the object itself or one moved from it; InputError otherwise) and rewrite its
  /// values in place. `c` may not be an operand (InputError). A product runs either multiply
  /// (with result_csr / tile_result) or multiply_into, never both (InputError).
  void multiply_into(const OperandView& a, const OperandView& b, DeviceCsr<double>& c);

  bool has_symbolic() const { return have_symbolic_; }
  /// Device memory kept for re-runs: plans, C's tiles, and cuSPARSE's or hash's C when this product
  /// holds it (after multiply_into, C's CSR is the caller's and counted there, not here).
  std::int64_t bytes() const;

 private:
  void begin_run(const OperandView& a, const OperandView& b, bool into_caller);
  void run_into(const OperandView& a, const OperandView& b, DeviceCsr<double>& c);
  void run_engine(const OperandView& a, const OperandView& b);
  void copy_result_csr(DeviceCsr<double>& c);
  void tile_multiply(const OperandView& a, const OperandView& b);
  void cusparse_multiply(const OperandView& a, const OperandView& b);
  void cusparse_multiply_into(const OperandView& a, const OperandView& b, DeviceCsr<double>& c);
  void cusparse_result_csr(DeviceCsr<double>& c);
  void hash_multiply(const OperandView& a, const OperandView& b, DeviceCsr<double>& c);
  void hash_result_csr(DeviceCsr<double>& c);

  OffloadSpgemm which_;
  bool automatic_ = false;
  SpgemmWorkEstimate estimate_;
  cudaStream_t stream_;
  bool keep_plan_ = true;
  bool have_symbolic_ = false, empty_ = false, have_csr_pattern_ = false;
  bool into_caller_ = false;  // runs multiply_into: C lives in the caller's CSR
  const void* into_buffers_[3] = {};  // that CSR's row_ptr, col_idx, values (checked on re-runs)
  std::int64_t into_nnz_ = 0;
  std::int64_t rows_ = 0, cols_ = 0, a_nnz_ = 0, b_nnz_ = 0;
  TileSpgemm<double> plan_;
  DeviceTileMatrix<double> c_tiles_;  // C's tile pattern (values rewritten)
  std::unique_ptr<CusparseReusePlan> cusparse_;
  std::unique_ptr<HashSpgemm> hash_;
  DeviceCsr<double> hash_c_;  // C as the hash product writes it (multiply; empty with multiply_into)
};

}  // namespace tessera::cuda
