// The row-wise hash SpGEMM pipeline (hash_spgemm.hpp): products per row, binning, symbolic
// count, row offsets, numeric accumulation and sorted output; the global-memory tables of the
// longest rows in chunks that fit; the row-batched product.
#include "local/cuda/hash_spgemm.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <limits>
#include <vector>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/hash_spgemm_kernels.cuh"

namespace tessera::cuda {
namespace {

static_assert(HashSpgemmInfo::kBins == hash::kBins, "the info's bins are the kernels' bins");

constexpr int kThreads = 256;
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

constexpr int kCountGroup = 8;  // lanes per row counting products (7- to 27-point rows: one pass)

/// Per row of the range, its products (a group of kCountGroup lanes over A's row, shuffle sum);
/// their total is added to *total.
__global__ void row_products_kernel(std::int64_t rows, const std::int64_t* a_row_ptr, const std::int32_t* a_col,
                                    const std::int64_t* b_row_ptr, std::int64_t* products, unsigned long long* total) {
  __shared__ unsigned long long block_total;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  const std::int64_t r = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kCountGroup;
  const int lane = int(threadIdx.x % kCountGroup);
  std::int64_t p = 0;
  if (r < rows)
    for (std::int64_t e = a_row_ptr[r] + lane; e < a_row_ptr[r + 1]; e += kCountGroup)
      p += b_row_ptr[a_col[e] + 1] - b_row_ptr[a_col[e]];
  for (int offset = kCountGroup / 2; offset > 0; offset /= 2) p += __shfl_xor_sync(0xffffffffu, p, offset, kCountGroup);
  if (r < rows && lane == 0) {
    products[r] = p;
    if (p) atomicAdd(&block_total, static_cast<unsigned long long>(p));
  }
  __syncthreads();  // one global atomic a block, not one a row
  if (threadIdx.x == 0 && block_total) atomicAdd(total, block_total);
}

/// Per row: its bin by `length` (products for the symbolic phase, the exact row length for the
/// numeric one) and its id; per block, the rows of each bin, added to `counts`.
__global__ void bin_by_length_kernel(std::int64_t rows, const std::int64_t* length, std::int64_t cap, int max_bin,
                                     int* bin, std::int32_t* row_id, unsigned long long* counts) {
  __shared__ unsigned long long block_counts[hash::kBins];
  if (threadIdx.x < hash::kBins) block_counts[threadIdx.x] = 0;
  __syncthreads();
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) {
    const int b = hash::bin_of(length[r], cap, max_bin);
    bin[r] = b, row_id[r] = std::int32_t(r);
    atomicAdd(&block_counts[b], 1ull);
  }
  __syncthreads();
  if (threadIdx.x < hash::kBins && block_counts[threadIdx.x]) atomicAdd(&counts[threadIdx.x], block_counts[threadIdx.x]);
}

/// Table of each global-bin row: the smallest power of two >= 2 x min(products, B's columns).
__global__ void global_table_sizes_kernel(std::int64_t n, const std::int32_t* rows, const std::int64_t* products,
                                          std::int64_t b_cols, std::int64_t* size) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::int64_t p = products[rows[i]], bound = p < b_cols ? p : b_cols;
  std::int64_t s = 1;
  while (s < 2 * bound) s *= 2;
  size[i] = s;
}

__global__ void gather_kernel(std::int64_t n, const std::int32_t* rows, const std::int64_t* from, std::int64_t* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = from[rows[i]];
}

hash::Operands operands_of(const DeviceCsr<double>& a, const DeviceCsr<double>& b, std::int64_t row_begin,
                           const std::int64_t* products) {
  int key_bits = 1;
  while (key_bits < 32 && (std::int64_t(1) << key_bits) <= b.cols) ++key_bits;  // b.cols itself is a key
  return {a.row_ptr.data(), a.col_idx.data(), a.values.data(), b.row_ptr.data(), b.col_idx.data(), b.values.data(),
          row_begin, products, std::int32_t(b.cols), key_bits};
}

template <int kBin, bool kNumeric>
void launch_shared_bin(const hash::Operands& op, const std::int32_t* rows, std::int64_t count, const hash::Output& out,
                       cudaStream_t s) {
  constexpr hash::BinShape shape = hash::kShapes[kBin];
  constexpr int rows_per_block = shape.block / shape.group;
  constexpr int bytes = kNumeric ? hash::numeric_shared_bytes(kBin) : hash::numeric_shared_bytes(kBin) / 3;
  auto kernel = hash::shared_table_kernel<shape.table, shape.group, shape.block, kNumeric>;
  // 48 KB of dynamic memory plus the static counters already need the opt-in
  if constexpr (bytes >= 48 * 1024) TESSERA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  kernel<<<grid_for(count, rows_per_block), shape.block, bytes, s>>>(op, rows, count, out);
  TESSERA_CHECK_LAUNCH();
}

template <bool kNumeric>
void launch_shared_bin(int bin, const hash::Operands& op, const std::int32_t* rows, std::int64_t count,
                       const hash::Output& out, cudaStream_t s) {
  switch (bin) {
    case 1: return launch_shared_bin<1, kNumeric>(op, rows, count, out, s);
    case 2: return launch_shared_bin<2, kNumeric>(op, rows, count, out, s);
    case 3: return launch_shared_bin<3, kNumeric>(op, rows, count, out, s);
    case 4: return launch_shared_bin<4, kNumeric>(op, rows, count, out, s);
    case 5: return launch_shared_bin<5, kNumeric>(op, rows, count, out, s);
    case 6: return launch_shared_bin<6, kNumeric>(op, rows, count, out, s);
    case 7: return launch_shared_bin<7, kNumeric>(op, rows, count, out, s);
    case 8: return launch_shared_bin<8, kNumeric>(op, rows, count, out, s);
    case 9: return launch_shared_bin<9, kNumeric>(op, rows, count, out, s);
    case 10: return launch_shared_bin<10, kNumeric>(op, rows, count, out, s);
    default: throw Error(detail::concat("hash SpGEMM: no shared-memory kernel for bin ", bin));
  }
}

std::int64_t g_slot_budget_override = 0;  // testing_hooks::set_hash_global_slot_budget

/// Device memory the global tables of one chunk may take: a quarter of what is available when
/// the chunk plan is made (at every run: C, allocated in between, is already counted), at least
/// 16 MiB (a single row's tables may exceed it: it runs alone). The testing hook gives slots.
std::int64_t global_byte_budget(std::int64_t bytes_per_slot) {
  if (g_slot_budget_override > 0) return g_slot_budget_override * bytes_per_slot;
  return std::max<std::int64_t>(available_device_bytes() / 4, std::int64_t(16) << 20);
}

/// Largest bin whose numeric tables fit the current device's shared memory per block (all ten
/// on an H100's 227 KB; an A100's 163 KB stops at bin 9, 99 KB parts at bin 8).
int max_shared_bin() {
  int device = 0, optin = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  int bin = 0;
  for (int b = 1; b < hash::kGlobalBin; ++b)
    if (hash::numeric_shared_bytes(b) + 1024 <= optin) bin = b;  // + the kernels' static counters
  return bin;
}

template <class T>
DeviceBuffer<T> upload_slice(const std::vector<T>& v, std::size_t first, std::size_t count, cudaStream_t s) {
  DeviceBuffer<T> d(count, s);
  if (count) TESSERA_CUDA_CHECK(cudaMemcpyAsync(d.data(), v.data() + first, count * sizeof(T), cudaMemcpyHostToDevice, s));
  return d;
}

/// Exclusive prefix sums of sizes[first, first+count) (count+1 entries, from 0).
std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& sizes, std::size_t first, std::size_t count) {
  std::vector<std::int64_t> off(count + 1, 0);
  for (std::size_t i = 0; i < count; ++i) off[i + 1] = off[i] + sizes[first + i];
  return off;
}

}  // namespace

void testing_hooks::set_hash_global_slot_budget(std::int64_t slots) { g_slot_budget_override = slots; }

/// Rows of the range grouped by bin (the symbolic phase bins them by products, the numeric one
/// by their exact lengths when rows are long), with what the global-memory rows need on the
/// host: table sizes and (numeric) lengths.
struct HashBins {
  DeviceBuffer<std::int32_t> rows;
  std::array<std::int64_t, hash::kBins + 1> offset{};
  std::vector<std::int64_t> global_table_size, global_row_nnz;
  std::int64_t count(int bin) const { return offset[bin + 1] - offset[bin]; }
  const std::int32_t* first_of(int bin) const { return rows.data() + offset[bin]; }
  /// Bins of short rows only (bound <= 512): their tables are small whatever the bound.
  bool only_short_rows() const { return offset[hash::kBins] == offset[kFirstLongBin]; }
  static constexpr int kFirstLongBin = 7;
};

namespace {

/// Bins rows [0, rows) by length[r] capped at `cap` (counts[0, kBins) must be zero on entry;
/// counts[kBins] may carry another total, returned too); the global-memory rows get their
/// table sizes (and with `keep_lengths` their lengths, the numeric phase's scratch sizes).
/// Returns the downloaded counts.
std::vector<unsigned long long> bin_rows(std::int64_t rows, const std::int64_t* length, std::int64_t cap,
                                         bool keep_lengths, DeviceBuffer<unsigned long long>& counts, HashBins& h,
                                         cudaStream_t s) {
  h.rows.release();
  h.offset.fill(0);
  if (rows == 0) return std::vector<unsigned long long>(hash::kBins + 1, 0);
  DeviceBuffer<int> bin(std::size_t(rows), s);
  DeviceBuffer<std::int32_t> row_id(std::size_t(rows), s);
  bin_by_length_kernel<<<grid_for(rows, kThreads), kThreads, 0, s>>>(rows, length, cap, max_shared_bin(), bin.data(),
                                                                     row_id.data(), counts.data());
  TESSERA_CHECK_LAUNCH();
  const std::vector<unsigned long long> c = counts.download(s);
  int used_bins = 0;
  for (int i = 0; i < hash::kBins; ++i) {
    h.offset[i + 1] = h.offset[i] + std::int64_t(c[i]);
    used_bins += c[i] > 0;
  }
  if (used_bins == 1) {  // every row in one bin (a stencil's usually are): no sort
    h.rows = std::move(row_id);
  } else {  // stable radix sort of the row ids on the bin's 4 bits
    h.rows.allocate(std::size_t(rows), s);
    DeviceBuffer<int> sorted_bin(std::size_t(rows), s);
    cub_call(s, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(temp, bytes, bin.data(), sorted_bin.data(), row_id.data(), h.rows.data(),
                                             rows, 0, 4, s);
    });
  }
  const std::int64_t n = h.count(hash::kGlobalBin);
  if (n == 0) return c;
  DeviceBuffer<std::int64_t> sizes(std::size_t(n), s);
  global_table_sizes_kernel<<<grid_for(n, kThreads), kThreads, 0, s>>>(n, h.first_of(hash::kGlobalBin), length, cap,
                                                                        sizes.data());
  TESSERA_CHECK_LAUNCH();
  h.global_table_size = sizes.download(s);
  if (keep_lengths) {
    gather_kernel<<<grid_for(n, kThreads), kThreads, 0, s>>>(n, h.first_of(hash::kGlobalBin), length, sizes.data());
    TESSERA_CHECK_LAUNCH();
    h.global_row_nnz = sizes.download(s);
  }
  return c;
}

/// Consecutive global rows per chunk, their tables and (numeric) scratch within the budget made
/// now: symbolic tables hold keys (4 bytes a slot); numeric tables keys and values (12), its
/// scratch the unsorted and the sorted row (24 bytes an entry).
std::vector<std::size_t> cut_chunks(const HashBins& h, bool numeric) {
  const std::int64_t slot_bytes = numeric ? 12 : 4, entry_bytes = numeric ? 24 : 0;
  const std::int64_t budget = global_byte_budget(slot_bytes);
  std::vector<std::size_t> begin;
  std::int64_t held = 0;
  for (std::size_t i = 0; i < h.global_table_size.size(); ++i) {
    const std::int64_t cost = h.global_table_size[i] * slot_bytes + (numeric ? h.global_row_nnz[i] * entry_bytes : 0);
    if (i == 0 || held + cost > budget) begin.push_back(i), held = 0;
    held += cost;
  }
  begin.push_back(h.global_table_size.size());
  return begin;
}

template <bool kNumeric>
void run_shared_bins(const HashBins& h, const hash::Operands& op, const hash::Output& out, cudaStream_t s) {
  for (int bin = 1; bin < hash::kGlobalBin; ++bin)
    if (const std::int64_t n = h.count(bin)) launch_shared_bin<kNumeric>(bin, op, h.first_of(bin), n, out, s);
}

/// The global-memory rows, in chunks cut now; returns the number of chunks.
template <bool kNumeric>
std::int64_t run_global_rows(const HashBins& h, const hash::Operands& op, const hash::Output& out, cudaStream_t s) {
  if (h.global_table_size.empty()) return 0;
  const std::int32_t* global_rows = h.first_of(hash::kGlobalBin);
  const std::vector<std::size_t> chunk_begin = cut_chunks(h, kNumeric);
  for (std::size_t c = 0; c + 1 < chunk_begin.size(); ++c) {
    const std::size_t first = chunk_begin[c], count = chunk_begin[c + 1] - first;
    const std::vector<std::int64_t> table_offset = offsets_of(h.global_table_size, first, count);
    const auto d_table_offset = upload_slice(table_offset, 0, count + 1, s);
    const auto d_table_size = upload_slice(h.global_table_size, first, count, s);
    DeviceBuffer<std::int32_t> keys(std::size_t(table_offset[count]), s);
    DeviceBuffer<double> vals(kNumeric ? std::size_t(table_offset[count]) : 0, s);
    hash::GlobalTables t{global_rows + first, d_table_offset.data(), d_table_size.data(), keys.data(), vals.data(),
                         nullptr, nullptr, nullptr};
    if constexpr (!kNumeric) {
      hash::global_table_kernel<false><<<unsigned(count), hash::kGlobalBlock, 0, s>>>(op, t, out);
      TESSERA_CHECK_LAUNCH();
    } else {
      const std::vector<std::int64_t> scratch_offset = offsets_of(h.global_row_nnz, first, count);
      const std::int64_t n = scratch_offset[count];
      const auto d_scratch_offset = upload_slice(scratch_offset, 0, count + 1, s);
      DeviceBuffer<std::int32_t> col(std::size_t(n), s), sorted_col(std::size_t(n), s);
      DeviceBuffer<double> val(std::size_t(n), s), sorted_val(std::size_t(n), s);
      t.scratch_offset = d_scratch_offset.data(), t.scratch_col = col.data(), t.scratch_val = val.data();
      hash::global_table_kernel<true><<<unsigned(count), hash::kGlobalBlock, 0, s>>>(op, t, out);
      TESSERA_CHECK_LAUNCH();
      keys.release(), vals.release();  // stream-ordered: the sort may reuse the tables' memory
      const std::int64_t* begin = d_scratch_offset.data();
      cub_call(s, [&](void* temp, std::size_t& bytes) {
        return cub::DeviceSegmentedSort::SortPairs(temp, bytes, col.data(), sorted_col.data(), val.data(),
                                                   sorted_val.data(), n, std::int64_t(count), begin, begin + 1, s);
      });
      hash::copy_rows_kernel<<<unsigned(count), kThreads, 0, s>>>(global_rows + first, d_scratch_offset.data(),
                                                                   sorted_col.data(), sorted_val.data(), out);
      TESSERA_CHECK_LAUNCH();
    }
  }
  return std::int64_t(chunk_begin.size()) - 1;
}

}  // namespace


void HashSpgemm::count_rows(const DeviceCsr<double>& a, const DeviceCsr<double>& b, RowRange range,
                            DeviceBuffer<std::int64_t>& row_ptr) {
  count_and_bin(a, b, range, row_ptr, /*bin_for_numeric=*/false);
}

void HashSpgemm::count_and_bin(const DeviceCsr<double>& a, const DeviceCsr<double>& b, RowRange range,
                               DeviceBuffer<std::int64_t>& row_ptr, bool bin_for_numeric) {
  have_symbolic_ = false;
  numeric_bins_.reset();
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "hash SpGEMM: A is ", a.rows, "x", a.cols, " but B is ", b.rows, "x", b.cols);
  TESSERA_REQUIRE_INPUT(a.rows <= kInt32Max && b.rows <= kInt32Max && b.cols < kInt32Max,
                        "hash SpGEMM: row and column counts must fit in int32 (A ", a.rows, "x", a.cols, ", B ", b.rows,
                        "x", b.cols, ")");
  if (range.end < 0) range.end = a.rows;
  TESSERA_REQUIRE_INPUT(0 <= range.begin && range.begin <= range.end && range.end <= a.rows, "hash SpGEMM: rows [",
                        range.begin, ", ", range.end, ") are not a range of A's ", a.rows, " rows");
  retain_pool_memory();  // the phases below synchronise 2-6 times: keep freed memory pooled
  cudaStream_t s = stream_;
  range_ = range;
  a_nnz_ = a.nnz, b_nnz_ = b.nnz, b_rows_ = b.rows, b_cols_ = b.cols;
  const std::int64_t rows = range.end - range.begin;
  info_ = HashSpgemmInfo{};
  info_.rows = rows;

  // 1. products per row (an upper bound on the row's length once capped at B's columns) and
  // their total, read back with the bins' counts
  products_.allocate(std::size_t(rows), s);
  DeviceBuffer<unsigned long long> counts(hash::kBins + 1, s);
  counts.fill_bytes(0, s);
  if (rows > 0) {
    row_products_kernel<<<grid_for(rows * kCountGroup, kThreads), kThreads, 0, s>>>(
        rows, a.row_ptr.data() + range.begin, a.col_idx.data(), b.row_ptr.data(), products_.data(),
        counts.data() + hash::kBins);
    TESSERA_CHECK_LAUNCH();
  }

  // 2. symbolic: distinct columns per row, rows binned by products (shared tables, then the
  // global-memory rows in chunks)
  auto by_products = std::make_shared<HashBins>();
  const auto c = bin_rows(rows, products_.data(), b.cols, /*keep_lengths=*/false, counts, *by_products, s);
  info_.products = std::int64_t(c[hash::kBins]);
  for (int i = 0; i < hash::kBins; ++i) info_.rows_per_bin[i] = by_products->count(i);
  info_.global_table_rows = by_products->count(hash::kGlobalBin);
  DeviceBuffer<std::int64_t> row_nnz(std::size_t(rows) + 1, s);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(row_nnz.data(), 0, row_nnz.bytes(), s));
  const hash::Operands op = operands_of(a, b, range.begin, products_.data());
  const hash::Output out{row_nnz.data(), nullptr, nullptr, nullptr};
  run_shared_bins<false>(*by_products, op, out, s);
  info_.global_table_chunks = run_global_rows<false>(*by_products, op, out, s);

  // 3. the numeric phase's bins. Long rows are binned again by their exact lengths (tables of
  // twice the length: a 27-point A*A row has 729 products but 125 entries; power-law rows past
  // 8192 products mostly fit a shared table by length). Without a long row every row keeps its
  // symbolic bin (small tables anyway; a second binning costs a pass, a sort and a read-back).
  if (bin_for_numeric) {
    if (by_products->only_short_rows()) {
      numeric_bins_ = std::move(by_products);
    } else {
      by_products.reset();
      numeric_bins_ = std::make_shared<HashBins>();
      counts.fill_bytes(0, s);
      bin_rows(rows, row_nnz.data(), b.cols, /*keep_lengths=*/true, counts, *numeric_bins_, s);
    }
    for (int i = 0; i < hash::kBins; ++i) info_.numeric_rows_per_bin[i] = numeric_bins_->count(i);
  }

  // 4. row offsets: exclusive scan of rows + 1 counts (the last one 0) ends with the total
  row_ptr.allocate(std::size_t(rows) + 1, s);
  cub_call(s, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, row_nnz.data(), row_ptr.data(), rows + 1, s);
  });
  info_.c_nnz = read_scalar(row_ptr.data() + rows, s);
}

void HashSpgemm::symbolic(const DeviceCsr<double>& a, const DeviceCsr<double>& b, DeviceCsr<double>& c, RowRange rows) {
  count_and_bin(a, b, rows, c.row_ptr, /*bin_for_numeric=*/true);
  c.rows = info_.rows;
  c.cols = b.cols;
  c.nnz = info_.c_nnz;
  c.col_idx.allocate(std::size_t(c.nnz), stream_);
  c.values.allocate(std::size_t(c.nnz), stream_);
  have_symbolic_ = true;
}

void HashSpgemm::numeric(const DeviceCsr<double>& a, const DeviceCsr<double>& b, DeviceCsr<double>& c) {
  TESSERA_REQUIRE_INPUT(have_symbolic_, "hash SpGEMM: numeric() before symbolic()");
  TESSERA_REQUIRE_INPUT(a.nnz == a_nnz_ && b.nnz == b_nnz_ && b.rows == b_rows_ && b.cols == b_cols_ &&
                            range_.end <= a.rows && c.rows == info_.rows && c.nnz == info_.c_nnz && c.cols == b.cols,
                        "hash SpGEMM: numeric() on operands or an output that differ from the symbolic phase's");
  cudaStream_t s = stream_;
  const hash::Operands op = operands_of(a, b, range_.begin, products_.data());
  const hash::Output out{nullptr, c.row_ptr.data(), c.col_idx.data(), c.values.data()};
  run_shared_bins<true>(*numeric_bins_, op, out, s);
  info_.numeric_global_table_chunks = run_global_rows<true>(*numeric_bins_, op, out, s);
}

std::int64_t HashSpgemm::bytes() const {
  return std::int64_t(products_.bytes() + (numeric_bins_ ? numeric_bins_->rows.bytes() : 0));
}

DeviceCsr<double> hash_spgemm(const DeviceCsr<double>& a, const DeviceCsr<double>& b, cudaStream_t stream) {
  HashSpgemm plan(stream);
  DeviceCsr<double> c;
  plan.symbolic(a, b, c);
  plan.numeric(a, b, c);
  return c;
}

std::int64_t hash_spgemm_row_batches(const DeviceCsr<double>& a, const DeviceCsr<double>& b, std::int64_t max_batch_nnz,
                                     const std::function<void(std::int64_t, const DeviceCsr<double>&)>& consume,
                                     cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(max_batch_nnz > 0, "hash SpGEMM row batches: max_batch_nnz must be positive, not ", max_batch_nnz);
  std::vector<std::int64_t> row_ptr;
  {
    HashSpgemm counter(stream);
    DeviceBuffer<std::int64_t> d_row_ptr;
    counter.count_rows(a, b, RowRange{}, d_row_ptr);
    row_ptr = d_row_ptr.download(stream);
  }
  std::int64_t first = 0;
  while (first < a.rows) {
    std::int64_t last = first + 1;  // at least one row, however long
    while (last < a.rows && row_ptr[last + 1] - row_ptr[first] <= max_batch_nnz) ++last;
    HashSpgemm plan(stream);
    DeviceCsr<double> c;
    plan.symbolic(a, b, c, RowRange{first, last});
    plan.numeric(a, b, c);
    consume(first, c);
    first = last;
  }
  return row_ptr.empty() ? 0 : row_ptr.back();
}

}  // namespace tessera::cuda
