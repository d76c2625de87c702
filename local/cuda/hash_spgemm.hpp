#pragma once
// C = A*B on one GPU, row by row (Gustavson) with hash-table accumulators: the engine for the
// products whose 8x8 tiles are too sparse for the tile SpGEMM (7-point stencils, random and
// power-law graphs), where it replaces cuSPARSE's SpGEMM: it reads the int64-offset CSR
// operands in place (no conversion), allocates C exactly, keeps no workspace proportional to the
// intermediate products (cuSPARSE ALG1 kept 20-62 GiB on the set) and can produce C in
// row batches that bound its memory (a product larger than the device).
//
//   HashSpgemm plan(stream);
//   plan.symbolic(a, b, c);   // row lengths of C, C's row_ptr, col_idx/values allocated
//   plan.numeric(a, b, c);    // columns (sorted) and values of C; repeatable on new values
//
// The pipeline (the nsparse / spECK family: Nagasaka et al. 2017, Parger et al. 2020):
//   1. products per row (sum of B's row lengths over A's row), capped at B's columns: an upper
//      bound on the row's length, which sizes its hash table;
//   2. rows binned by that bound (CUB radix sort of the row ids by bin, skipped when all rows
//      share one); each bin has a kernel whose thread group per row owns a shared-memory table
//      of twice the bound (load <= 1/2), so small rows pack many to a block and long rows get a
//      whole block; rows past the largest table the device's shared memory holds (16384 slots
//      on H100/H200) use tables in global memory, processed in chunks that fit;
//   3. symbolic: insert column ids (atomicCAS, linear probing), count the distinct ones; an
//      exclusive scan gives C's row_ptr; when some row's bound is past 512, all rows are binned
//      again by their exact lengths for the numeric phase (smaller tables: a 27-point A*A row
//      has 729 products but 125 entries; power-law rows past 8192 products mostly fit a shared
//      table by length), else the symbolic bins are kept;
//   4. numeric: insert and accumulate (atomicAdd on the slot's value), then sorted output: rows
//      sharing a block rank each entry by counting the smaller columns, rows with a block of 256
//      threads or more use CUB's block radix sort, and the global-table rows CUB's segmented sort.
// Every group of threads splits its row's products as sub-groups of the width of B's mean row
// length, one A entry per sub-group, so short and long B rows both keep the lanes busy.
//
// Like the tile and cuSPARSE paths, the first call keeps freed memory in the device's default
// pool for the rest of the process (retain_pool_memory: the phases synchronise several times).
// FP64 only (the AMG setup's products). The structural pattern is kept (entries that cancel to
// zero stay), as ref::spgemm with keep_zeros does. Summation order: each c_ij is summed in
// A's CSR order, a_ik1 b_k1j + a_ik2 b_k2j + ... (k1 < k2 < ...), every product rounded on its
// own: the same bits on every run (the numeric walk takes A's entries one at a time, a group
// barrier between them; see for_each_product_in_order).
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>

#include "local/cuda/device_matrix.hpp"

namespace tessera::cuda {

namespace hash {
struct Operands;
struct Output;
}  // namespace hash
struct HashBins;

/// Rows [begin, end) of A: C gets end - begin rows (C's row r is A's row begin + r).
struct RowRange {
  std::int64_t begin = 0, end = -1;  // end < 0: to the last row
};

struct HashSpgemmInfo {
  static constexpr int kBins = 12;  // see hash_spgemm_kernels.cuh: empty, 10 shared sizes, global
  std::int64_t rows = 0;
  std::int64_t products = 0;  // intermediate products of the range (uncapped: ref::spgemm_flops)
  std::int64_t c_nnz = 0;
  std::array<std::int64_t, kBins> rows_per_bin{};          // symbolic phase: rows by products
  std::array<std::int64_t, kBins> numeric_rows_per_bin{};  // numeric phase: rows by exact length
  std::int64_t global_table_rows = 0, global_table_chunks = 0;  // symbolic phase
  std::int64_t numeric_global_table_chunks = 0;                 // the last numeric()
};

class HashSpgemm {
 public:
  explicit HashSpgemm(cudaStream_t stream = nullptr) : stream_(stream) {}

  /// Pattern sizes of C = A(rows)*B: c.rows, c.cols, c.nnz, c.row_ptr written; c.col_idx and
  /// c.values allocated (written by numeric()). InputError if a.cols != b.rows, a range outside
  /// A, or a matrix past int32 rows/columns.
  void symbolic(const DeviceCsr<double>& a, const DeviceCsr<double>& b, DeviceCsr<double>& c, RowRange rows = {});

  /// Columns (sorted per row) and values of C. a, b, c must have the patterns symbolic() saw
  /// (only sizes and entry counts are checked: another pattern of the same size is not caught);
  /// repeatable when only the values of A and B changed.
  void numeric(const DeviceCsr<double>& a, const DeviceCsr<double>& b, DeviceCsr<double>& c);

  /// The symbolic count alone: C's row offsets (rows of the range + 1, from 0) into `row_ptr`,
  /// nothing else allocated (the row-batched product sizes its batches from it).
  void count_rows(const DeviceCsr<double>& a, const DeviceCsr<double>& b, RowRange rows,
                  DeviceBuffer<std::int64_t>& row_ptr);

  /// Complete after symbolic() (count_rows() leaves the numeric bins empty); the numeric chunks
  /// after numeric().
  const HashSpgemmInfo& info() const { return info_; }
  bool has_symbolic() const { return have_symbolic_; }
  /// Device memory kept for numeric(): the binned row list and the products per row (C is the
  /// caller's; the global tables and the sort scratch live only during numeric()).
  std::int64_t bytes() const;

 private:
  void count_and_bin(const DeviceCsr<double>& a, const DeviceCsr<double>& b, RowRange rows,
                     DeviceBuffer<std::int64_t>& row_ptr, bool bin_for_numeric);

  cudaStream_t stream_;
  HashSpgemmInfo info_;
  bool have_symbolic_ = false;
  RowRange range_;
  std::int64_t a_nnz_ = 0, b_nnz_ = 0, b_rows_ = 0, b_cols_ = 0;
  DeviceBuffer<std::int64_t> products_;                 // per row of the range (sizes the tables)
  std::shared_ptr<HashBins> numeric_bins_;              // rows by exact length, global rows' plan
};

namespace testing_hooks {
/// Tests only: hold at most this many global-table slots at once (0: the default, a quarter of
/// the free device memory), so that small tests run the global rows in several chunks.
void set_hash_global_slot_budget(std::int64_t slots);
}  // namespace testing_hooks

/// One-shot product C = A*B (symbolic + numeric).
DeviceCsr<double> hash_spgemm(const DeviceCsr<double>& a, const DeviceCsr<double>& b, cudaStream_t stream = nullptr);

/// C = A*B delivered in row batches, for products whose C does not fit on the device: the
/// symbolic count of every row first, then batches of consecutive rows of at most
/// `max_batch_nnz` entries (a row longer than that is a batch alone), each computed by its own
/// HashSpgemm (whose symbolic phase counts the batch's rows again: the price of holding only
/// one batch) and handed to `consume(first_row, c_rows)` before the next is made. c_rows is
/// complete in `stream`'s order (work on that stream, or synchronise it) and valid only during
/// the call. Besides the batch, a product holds its global-memory tables (chunks of at most a
/// quarter of the memory available when each phase starts) and the per-row arrays of the batch. Returns
/// C's total number of entries. InputError if max_batch_nnz <= 0.
std::int64_t hash_spgemm_row_batches(const DeviceCsr<double>& a, const DeviceCsr<double>& b, std::int64_t max_batch_nnz,
                                     const std::function<void(std::int64_t, const DeviceCsr<double>&)>& consume,
                                     cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
