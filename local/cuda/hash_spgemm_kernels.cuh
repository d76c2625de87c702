#pragma once
// Device building blocks of the row-wise hash SpGEMM (hash_spgemm.hpp): the bins of table
// sizes, the hash-table insert, the walk over a row's products, and the two row kernels (tables
// in shared memory for rows up to kMaxSharedBound products, in global memory beyond).
#include <cuda_runtime.h>

#include <cub/block/block_radix_sort.cuh>
#include <cstdint>

namespace tessera::cuda::hash {

/// A row goes to the first bin whose bound is >= its products (capped at B's columns). Bin 0
/// holds the rows without products; the last bin the rows past every shared-memory table the
/// device holds (max_shared_bin in hash_spgemm.cu).
/// Table = 2 x bound (load factor <= 1/2), a group of `group` threads per row, `block` threads
/// per block: small rows pack block/group rows to a block. Numeric shared memory per block:
/// (block / group) x table x 12 bytes = 12 KB for bins 1-6, then 24, 48, 96 and 192 KB.
struct BinShape {
  int bound, table, group, block;
};
inline constexpr int kBins = 12;
inline constexpr int kGlobalBin = kBins - 1;
inline constexpr BinShape kShapes[kBins - 1] = {
    {0, 0, 0, 0},          {16, 32, 4, 128},       {32, 64, 8, 128},       {64, 128, 16, 128},
    {128, 256, 32, 128},   {256, 512, 64, 128},    {512, 1024, 128, 128},  {1024, 2048, 256, 256},
    {2048, 4096, 512, 512}, {4096, 8192, 1024, 1024}, {8192, 16384, 1024, 1024}};
inline constexpr int kMaxSharedBound = 8192;
constexpr bool bounds_double_from_16() {
  for (int b = 1; b < kBins - 1; ++b)
    if (kShapes[b].bound != (16 << (b - 1)) || kShapes[b].table != 2 * kShapes[b].bound) return false;
  return kShapes[kBins - 2].bound == kMaxSharedBound;
}
static_assert(bounds_double_from_16(), "bin_of computes the bounds as 16 << (bin - 1)");
inline constexpr int kGlobalBlock = 1024;
inline constexpr std::int32_t kEmptySlot = -1;

/// The bin of a row of `length` products or entries, capped at B's columns; past `max_shared_bin`
/// (the largest table the device's shared memory holds) rows go to the global tables.
__host__ __device__ inline int bin_of(std::int64_t length, std::int64_t b_cols, int max_shared_bin) {
  const std::int64_t bound = length < b_cols ? length : b_cols;
  if (bound == 0) return 0;
  for (int b = 1; b <= max_shared_bin; ++b)
    if (bound <= (std::int64_t(16) << (b - 1))) return b;  // kShapes[b].bound (checked below)
  return kGlobalBin;
}

/// Numeric shared memory of a block of bin b (the symbolic phase needs a third of it).
constexpr int numeric_shared_bytes(int b) {
  return kShapes[b].table * (kShapes[b].block / kShapes[b].group) * int(sizeof(double) + sizeof(std::int32_t));
}

/// What the kernels read: A's rows from row_begin on, B whole, products per row of the range.
struct Operands {
  const std::int64_t* a_row_ptr;
  const std::int32_t* a_col;
  const double* a_val;
  const std::int64_t* b_row_ptr;
  const std::int32_t* b_col;
  const double* b_val;
  std::int64_t row_begin;
  const std::int64_t* products;  // per row of C (the range)
  std::int32_t b_cols;           // columns are < b_cols: the sort's empty-slot key
  int key_bits;                  // bits of b_cols: the radix sort's passes
};

/// Symbolic: row_nnz[row] written. Numeric: sorted columns and values at c_row_ptr[row].
struct Output {
  std::int64_t* row_nnz;
  const std::int64_t* c_row_ptr;
  std::int32_t* c_col;
  double* c_val;
};

/// Fibonacci hashing: the top bits of col x 2^32/phi, so strided columns (stencil offsets)
/// spread over the table; linear probing from there.
__device__ inline unsigned first_slot(std::int32_t col, int shift) { return (unsigned(col) * 2654435761u) >> shift; }

/// Inserts `col` (adds `v` to its value in numeric mode); true when the column is new.
template <bool kNumeric>
__device__ inline bool insert(std::int32_t* keys, double* vals, unsigned mask, int shift, std::int32_t col, double v) {
  unsigned s = first_slot(col, shift);
  while (true) {
    std::int32_t k = *reinterpret_cast<volatile std::int32_t*>(&keys[s]);
    if (k == kEmptySlot) k = atomicCAS(&keys[s], kEmptySlot, col);
    if (k == kEmptySlot || k == col) {
      if constexpr (kNumeric) atomicAdd(&vals[s], v);
      return k == kEmptySlot;
    }
    s = (s + 1) & mask;
  }
}

/// Symbolic walk: calls visit(col) for every product of the row, the group's lanes split into
/// sub-groups of a power-of-two width near B's mean row length here: one A entry per sub-group,
/// B's row across the sub-group's lanes (short B rows do not leave lanes idle, long ones are
/// read coalesced).
template <int kGroup, class Visit>
__device__ inline void for_each_product(const Operands& op, std::int64_t row, int lane, Visit visit) {
  const std::int64_t a_row = op.row_begin + row;
  const std::int64_t a0 = op.a_row_ptr[a_row], a1 = op.a_row_ptr[a_row + 1];
  if (a1 == a0) return;
  const std::int64_t mean_b = op.products[row] / (a1 - a0);
  int width = 1;
  while (width < kGroup && width < 32 && 2 * width <= mean_b) width *= 2;
  const int sub = lane / width, sub_lane = lane % width, subs = kGroup / width;
  for (std::int64_t e = a0 + sub; e < a1; e += subs) {
    const std::int32_t k = op.a_col[e];
    const std::int64_t b1 = op.b_row_ptr[k + 1];
    for (std::int64_t j = op.b_row_ptr[k] + sub_lane; j < b1; j += width) visit(op.b_col[j]);
  }
}

/// Waits for the lanes of one row's group only: the group's lanes of its warp (groups of
/// 4-16 share a warp), the warp, a named barrier of the group's warps (groups of 64 share a
/// block of 128), or the block. Groups may call it a different number of times.
template <int kGroup, int kBlock>
__device__ inline void row_group_barrier(int group_in_block) {
  if constexpr (kGroup == kBlock) {
    __syncthreads();
  } else if constexpr (kGroup > 32) {
    static_assert(kGroup % 32 == 0 && kBlock / kGroup < 16, "named barriers: whole warps, ids 1..15");
    asm volatile("bar.sync %0, %1;" ::"r"(group_in_block + 1), "r"(kGroup) : "memory");
  } else if constexpr (kGroup == 32) {
    __syncwarp();
  } else {
    __syncwarp(((1u << kGroup) - 1u) << (threadIdx.x % 32 / kGroup * kGroup));
  }
}

/// The numeric walk, deterministic: the row's A entries one at a time in CSR order, the group's
/// lanes across B's row (distinct columns: no two lanes add to one slot), a barrier between
/// entries. Every value of C is then summed in the same order on every run: a_i,k1*b_k1,j +
/// a_i,k2*b_k2,j + ... for k1 < k2 < ... (for_each_product's sub-groups take several A entries
/// at once, and their atomic adds to a shared column land in whatever order the hardware
/// gives: the last bits of C changed from run to run, and with them AMG's coarse decisions).
template <int kGroup, int kBlock, class Visit>
__device__ inline void for_each_product_in_order(const Operands& op, std::int64_t row, int lane, int group_in_block,
                                                 Visit visit) {
  const std::int64_t a_row = op.row_begin + row;
  const std::int64_t a0 = op.a_row_ptr[a_row], a1 = op.a_row_ptr[a_row + 1];
  for (std::int64_t e = a0; e < a1; ++e) {
    const std::int32_t k = op.a_col[e];
    const double av = op.a_val[e];
    const std::int64_t b1 = op.b_row_ptr[k + 1];
    for (std::int64_t j = op.b_row_ptr[k] + lane; j < b1; j += kGroup) visit(op.b_col[j], av * op.b_val[j]);
    row_group_barrier<kGroup, kBlock>(group_in_block);
  }
}

constexpr int log2_of(int n) { return n <= 1 ? 0 : 1 + log2_of(n / 2); }

/// Writes a row's n compacted entries (keys/vals[0..n)) sorted: each entry's position is the
/// number of smaller columns (columns are distinct), read by all lanes at once (broadcast).
template <int kGroup>
__device__ inline void write_sorted(const std::int32_t* keys, const double* vals, int n, int lane, std::int32_t* col,
                                    double* val) {
  for (int i = lane; i < n; i += kGroup) {
    const std::int32_t key = keys[i];
    int rank = 0;
    for (int j = 0; j < n; ++j) rank += keys[j] < key;
    col[rank] = key;
    val[rank] = vals[i];
  }
}

/// Waits for the threads of a row's group: its warp when the group fits in one (groups never
/// share a table or a counter, so other warps need not wait), else the block.
template <int kGroup>
__device__ inline void group_sync() {
  if constexpr (kGroup <= 32) __syncwarp();
  else __syncthreads();
}

/// Numeric output of a row that has the whole block (bins of 256 threads and more): the table
/// sorted by CUB's block radix sort (empty slots keyed past every column, so they sort last),
/// its temporary storage laid over the table once every slot is in registers, and written
/// striped (coalesced). Counting ranks (write_sorted) would cost n^2 / threads comparisons a
/// thread: 64K at 8192 entries.
template <int kTable, int kBlock>
__device__ inline void sort_block_row(const Operands& op, const std::int32_t* keys, const double* vals, int n,
                                      unsigned char* smem, std::int32_t* col, double* val) {
  constexpr int kItems = kTable / kBlock;
  using Sort = cub::BlockRadixSort<unsigned, kBlock, kItems, double>;
  static_assert(sizeof(typename Sort::TempStorage) <= std::size_t(kTable) * 12, "sort storage must fit in the table");
  unsigned k[kItems];
  double v[kItems];
  for (int i = 0; i < kItems; ++i) {
    const int s = threadIdx.x * kItems + i;
    k[i] = keys[s] == kEmptySlot ? unsigned(op.b_cols) : unsigned(keys[s]);
    v[i] = vals[s];
  }
  __syncthreads();  // the sort's storage overwrites the table
  Sort(*reinterpret_cast<typename Sort::TempStorage*>(smem)).SortBlockedToStriped(k, v, 0, op.key_bits);
  for (int i = 0; i < kItems; ++i) {
    const int p = i * kBlock + threadIdx.x;
    if (p < n) col[p] = std::int32_t(k[i]), val[p] = v[i];
  }
}

/// One bin with tables in shared memory. Symbolic: keys only; numeric: values first (8-byte
/// alignment), then keys. All threads reach every barrier (a group without a row idles).
template <int kTable, int kGroup, int kBlock, bool kNumeric>
__global__ void __launch_bounds__(kBlock)
    shared_table_kernel(Operands op, const std::int32_t* rows, std::int64_t count, Output out) {
  constexpr int kRowsPerBlock = kBlock / kGroup, kShift = 32 - log2_of(kTable), kSlotsPerLane = kTable / kGroup;
  // Rank counting costs n^2 / group comparisons a lane: from a block of 256 on, the block radix
  // sort is faster (H100: rows of 1024 entries 0.463 ms by ranks, rows of 1025 0.275 ms sorted).
  constexpr bool kBlockSort = kGroup == kBlock && kGroup >= 256;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int distinct[kRowsPerBlock];
  double* vals = reinterpret_cast<double*>(smem);
  std::int32_t* keys = reinterpret_cast<std::int32_t*>(smem + (kNumeric ? sizeof(double) * kTable * kRowsPerBlock : 0));
  const int g = threadIdx.x / kGroup, lane = threadIdx.x % kGroup;
  const std::int64_t item = std::int64_t(blockIdx.x) * kRowsPerBlock + g;
  const std::int64_t row = item < count ? rows[item] : -1;
  keys += g * kTable;
  vals += g * kTable;
  for (int s = lane; s < kTable; s += kGroup) {
    keys[s] = kEmptySlot;
    if constexpr (kNumeric) vals[s] = 0.0;
  }
  if (lane == 0) distinct[g] = 0;
  group_sync<kGroup>();
  int mine = 0;
  const auto insert_product = [&](std::int32_t c, double v) {
    mine += insert<kNumeric>(keys, vals, kTable - 1, kShift, c, v);
  };
  if (row >= 0) {
    if constexpr (kNumeric) for_each_product_in_order<kGroup, kBlock>(op, row, lane, g, insert_product);
    else for_each_product<kGroup>(op, row, lane, [&](std::int32_t c) { insert_product(c, 0.0); });
  }
  if constexpr (!kNumeric) {
    if (mine) atomicAdd(&distinct[g], mine);
    group_sync<kGroup>();
    if (row >= 0 && lane == 0) out.row_nnz[row] = distinct[g];
  } else if constexpr (kBlockSort) {
    if (mine) atomicAdd(&distinct[0], mine);
    __syncthreads();
    if (row >= 0) {  // uniform: one row per block
      const std::int64_t base = out.c_row_ptr[row];
      sort_block_row<kTable, kBlock>(op, keys, vals, distinct[0], smem, out.c_col + base, out.c_val + base);
    }
  } else {
    group_sync<kGroup>();
    std::int32_t k[kSlotsPerLane];
    double v[kSlotsPerLane];
    for (int i = 0; i < kSlotsPerLane; ++i) k[i] = keys[lane + i * kGroup], v[i] = vals[lane + i * kGroup];
    group_sync<kGroup>();  // every slot is in registers: the table's front can be overwritten
    for (int i = 0; i < kSlotsPerLane; ++i)
      if (k[i] != kEmptySlot) {
        const int p = atomicAdd(&distinct[g], 1);
        keys[p] = k[i], vals[p] = v[i];
      }
    group_sync<kGroup>();
    if (row >= 0) {
      const std::int64_t base = out.c_row_ptr[row];
      write_sorted<kGroup>(keys, vals, distinct[g], lane, out.c_col + base, out.c_val + base);
    }
  }
}

/// Global-memory tables: one block per row of a chunk; table t holds slots
/// [table_offset[t], table_offset[t] + table_size[t]) (a power of two). Symbolic counts the
/// distinct columns; numeric accumulates and compacts the row, unsorted, into
/// scratch_col/val from scratch_offset[t] on (sorted afterwards by a segmented sort).
struct GlobalTables {
  const std::int32_t* rows;  // rows of C in this chunk
  const std::int64_t* table_offset;
  const std::int64_t* table_size;
  std::int32_t* keys;
  double* vals;
  const std::int64_t* scratch_offset;  // numeric only
  std::int32_t* scratch_col;
  double* scratch_val;
};

template <bool kNumeric>
__global__ void __launch_bounds__(kGlobalBlock) global_table_kernel(Operands op, GlobalTables t, Output out) {
  __shared__ int distinct;
  const std::int64_t row = t.rows[blockIdx.x];
  const std::int64_t size = t.table_size[blockIdx.x];
  std::int32_t* keys = t.keys + t.table_offset[blockIdx.x];
  double* vals = t.vals + (kNumeric ? t.table_offset[blockIdx.x] : 0);
  for (std::int64_t s = threadIdx.x; s < size; s += kGlobalBlock) {
    keys[s] = kEmptySlot;
    if constexpr (kNumeric) vals[s] = 0.0;
  }
  if (threadIdx.x == 0) distinct = 0;
  __syncthreads();
  int log2_size = 0;
  while ((std::int64_t(1) << log2_size) < size) ++log2_size;
  int mine = 0;
  const auto insert_product = [&](std::int32_t c, double v) {
    mine += insert<kNumeric>(keys, vals, unsigned(size - 1), 32 - log2_size, c, v);
  };
  if constexpr (kNumeric) for_each_product_in_order<kGlobalBlock, kGlobalBlock>(op, row, threadIdx.x, 0, insert_product);
  else for_each_product<kGlobalBlock>(op, row, threadIdx.x, [&](std::int32_t c) { insert_product(c, 0.0); });
  if constexpr (!kNumeric) {
    if (mine) atomicAdd(&distinct, mine);
    __syncthreads();
    if (threadIdx.x == 0) out.row_nnz[row] = distinct;
  } else {
    __syncthreads();
    const std::int64_t base = t.scratch_offset[blockIdx.x];
    for (std::int64_t s = threadIdx.x; s < size; s += kGlobalBlock)
      if (keys[s] != kEmptySlot) {
        const int p = atomicAdd(&distinct, 1);
        t.scratch_col[base + p] = keys[s], t.scratch_val[base + p] = vals[s];
      }
  }
}

/// Sorted global-table rows from the scratch into C, one block per row.
__global__ void copy_rows_kernel(const std::int32_t* rows, const std::int64_t* scratch_offset, const std::int32_t* col,
                                 const double* val, Output out) {
  const std::int64_t row = rows[blockIdx.x];
  const std::int64_t from = scratch_offset[blockIdx.x], n = scratch_offset[blockIdx.x + 1] - from;
  const std::int64_t to = out.c_row_ptr[row];
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) out.c_col[to + i] = col[from + i], out.c_val[to + i] = val[from + i];
}

}  // namespace tessera::cuda::hash
