#pragma once
// C = A*B on one GPU on the 8x8 bitmap tile format, with the tile products on tensor cores.
//
//   TileSpgemm<T> plan(options, stream);
//   plan.symbolic(a, b, c);     // pattern of C (exact, from bitmap boolean products), work lists
//   plan.numeric(a, b, c);      // values of C; repeatable on new values with the same patterns
//
// T = double (FP64 MMA m16n8k8, the default), float (exact FP32 FMA tile products) or Half
// (FP16 MMA m16n8k8 with FP32 accumulation; C is float). TileProduct::fma runs the same
// pipeline with FMA tile products instead of MMA (to measure what the tensor cores bring).
// The pipeline and the error bounds are described in docs/spgemm-design.md.
#include <cstdint>

#include "local/core/half.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::cuda {

enum class TileProduct { tensor_core, fma };

struct TileSpgemmOptions {
  TileProduct product = TileProduct::tensor_core;
  /// multiply(): remove entries that are exactly zero after the numeric phase (cancellation).
  bool drop_zeros = false;
  /// Skewed rows' lists of tile pairs (docs/spgemm-design.md, step 6) are made when building
  /// them takes at most this many bytes (TileSpgemmInfo::list_bytes kept, plus one batch's
  /// scratch; -1: half the free device memory); else those rows are searched like the others:
  /// slower, the same bits every run either way.
  std::int64_t list_bytes_limit = -1;
  /// Scratch of one batch of listed rows (16 bytes per pair; a row with more pairs is a batch
  /// of its own). Any batching gives the same lists.
  std::int64_t list_batch_bytes = std::int64_t{1} << 30;
};

/// Value type of C for inputs of type T: FP16 inputs accumulate (and are stored) in FP32.
template <class T> struct SpgemmOutput { using type = T; };
template <> struct SpgemmOutput<Half> { using type = float; };
template <class T> using spgemm_output_t = typename SpgemmOutput<T>::type;

/// What the symbolic phase found (sizes and load-balance bins), for reports and tests.
struct TileSpgemmInfo {
  std::int64_t tile_pairs = 0;  // (A tile, B tile) pairs with matching inner index
  std::int64_t c_tiles = 0, c_nnz = 0;
  std::int64_t rows_small = 0, rows_medium = 0, rows_large = 0;  // symbolic bins (by pairs)
  std::int64_t pull_tasks = 0;    // warp tasks (one pair of C tiles each) that search A's row
  std::int64_t listed_tasks = 0;  // warp tasks of skewed rows, walking a list of their pairs
  std::int64_t listed_pairs = 0;  // the useful tile pairs of those lists
  std::int64_t list_batches = 0;  // batches of rows the lists were made in
  std::int64_t list_bytes = 0;    // device bytes the lists keep: 8 a pair, 4 a task, 8 a block of 8 tasks + 8
};

/// One useful tile pair of a skewed row, as the plan keeps it (8 bytes): A(I,K) and B(K,J) by
/// their places in A's row I and B's row K, J the first (which = 0) or second (which = 1) C
/// tile of its warp task (tile_spgemm_plan.cu).
struct ListedPair {
  std::int32_t a_in_row;
  std::int32_t b_in_row_which;  // place in B's row K * 2 + which
};

template <class T>
class TileSpgemm {
 public:
  using Out = spgemm_output_t<T>;

  explicit TileSpgemm(TileSpgemmOptions options = {}, cudaStream_t stream = nullptr)
      : options_(options), stream_(stream) {}

  /// Structure of C = A*B (tile_row_ptr, tile_col, bitmap, value_offset; values allocated,
  /// not written). InputError if a.cols != b.rows.
  void symbolic(const DeviceTileMatrix<T>& a, const DeviceTileMatrix<T>& b, DeviceTileMatrix<Out>& c);

  /// Every value of C. a, b and c must have the patterns that symbolic() saw (only the sizes
  /// are checked). FP16: InputError if an input value is Inf or NaN.
  void numeric(const DeviceTileMatrix<T>& a, const DeviceTileMatrix<T>& b, DeviceTileMatrix<Out>& c);

  const TileSpgemmInfo& info() const { return info_; }

 private:
  TileSpgemmOptions options_;
  cudaStream_t stream_;
  TileSpgemmInfo info_;
  bool have_symbolic_ = false;
  std::int64_t a_tiles_ = 0, b_tiles_ = 0;
  // Work lists kept for numeric() (tile_spgemm_internal.hpp): warp tasks that search, and
  // those of skewed rows with their lists of (A tile, B tile) pairs.
  DeviceBuffer<std::int32_t> pull_row_;
  DeviceBuffer<std::int64_t> row_pull_start_;
  DeviceBuffer<std::int64_t> row_listed_start_;
  DeviceBuffer<std::int32_t> listed_block_row_;
  DeviceBuffer<std::int64_t> block_pair_start_;
  DeviceBuffer<std::uint32_t> pair_offset_;
  DeviceBuffer<ListedPair> listed_pairs_;
};

/// C without the entries that are exactly zero (tiles left empty are removed).
template <class T>
DeviceTileMatrix<T> drop_zeros(const DeviceTileMatrix<T>& c, cudaStream_t stream = nullptr);

/// One-shot product: symbolic, numeric and (options.drop_zeros) compaction.
template <class T>
DeviceTileMatrix<spgemm_output_t<T>> multiply(const DeviceTileMatrix<T>& a, const DeviceTileMatrix<T>& b,
                                              const TileSpgemmOptions& options = {}, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
