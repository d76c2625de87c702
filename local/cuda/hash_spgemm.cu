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

constexpr int kThreads = 256;
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

constexpr int kCountGroup = 8;  // lanes per row counting products (7- to 27-point rows: one pass)

/// Per row of the range: its products (a group of kCountGroup lanes over A's row, shuffle sum),
/// its bin and its id; per block, the rows of each bin and the products, added to `totals`
/// (kBins counts, then the products).
__global__ void row_products_kernel(std::int64_t rows, const std::int64_t* a_row_ptr, const std::int32_t* a_col,
                                    const std::int64_t* b_row_ptr, std::int64_t b_cols, std::int64_t* products,
                                    int* bin, std::int32_t* row_id, unsigned long long* totals) {
  __shared__ unsigned long long block_totals[hash::kBins + 1];
  if (threadIdx.x < hash::kBins + 1) block_totals[threadIdx.x] = 0;
  __syncthreads();
  const std::int64_t r = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kCountGroup;
  const int lane = int(threadIdx.x % kCountGroup);
  std::int64_t p = 0;
  if (r < rows)
    for (std::int64_t e = a_row_ptr[r] + lane; e < a_row_ptr[r + 1]; e += kCountGroup)
      p += b_row_ptr[a_col[e] + 1] - b_row_ptr[a_col[e]];
  for (int offset = kCountGroup / 2; offset > 0; offset /= 2) p += __shfl_xor_sync(0xffffffffu, p, offset, kCountGroup);
  if (r < rows && lane == 0) {
    const int b = hash::bin_of(p, b_cols);
    products[r] = p, bin[r] = b, row_id[r] = std::int32_t(r);
    atomicAdd(&block_totals[b], 1ull);
    atomicAdd(&block_totals[hash::kBins], static_cast<unsigned long long>(p));
  }
  __syncthreads();
  if (threadIdx.x < hash::kBins + 1 && block_totals[threadIdx.x]) atomicAdd(&totals[threadIdx.x], block_totals[threadIdx.x]);
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

__global__ void gather_row_nnz_kernel(std::int64_t n, const std::int32_t* rows, const std::int64_t* row_nnz,
                                      std::int64_t* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = row_nnz[rows[i]];
}

hash::Operands operands_of(const DeviceCsr<double>& a, const DeviceCsr<double>& b, std::int64_t row_begin,
                           const std::int64_t* products) {
  return {a.row_ptr.data(), a.col_idx.data(), a.values.data(), b.row_ptr.data(), b.col_idx.data(), b.values.data(),
          row_begin, products};
}

template <int kBin, bool kNumeric>
void launch_shared_bin(const hash::Operands& op, const std::int32_t* rows, std::int64_t count, const hash::Output& out,
                       cudaStream_t s) {
  constexpr hash::BinShape shape = hash::kShapes[kBin];
  constexpr int rows_per_block = shape.block / shape.group;
  constexpr int bytes = shape.table * rows_per_block * int(kNumeric ? sizeof(double) + sizeof(std::int32_t) : sizeof(std::int32_t));
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

/// Slots of global tables held at once: a quarter of the free device memory at 12 bytes a slot
/// (key and value), at least 1M slots (a single row's table may exceed it: it runs alone).
std::int64_t g_slot_budget_override = 0;  // testing_hooks::set_hash_global_slot_budget

std::int64_t global_slot_budget() {
  if (g_slot_budget_override > 0) return g_slot_budget_override;
  return std::max<std::int64_t>(available_device_bytes() / 4 / 12, std::int64_t(1) << 20);
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

/// Host-side plan of the global-memory rows: their table sizes and the chunks they run in.
struct HashGlobalRows {
  std::vector<std::int64_t> table_size;  // per global row, in binned order
  std::vector<std::int64_t> row_nnz;     // per global row (after the symbolic count)
  std::vector<std::size_t> chunk_begin;  // chunk c: rows [chunk_begin[c], chunk_begin[c+1])
};

void HashSpgemm::count_rows(const DeviceCsr<double>& a, const DeviceCsr<double>& b, RowRange range,
                            DeviceBuffer<std::int64_t>& row_ptr) {
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "hash SpGEMM: A is ", a.rows, "x", a.cols, " but B is ", b.rows, "x", b.cols);
  TESSERA_REQUIRE_INPUT(a.rows <= kInt32Max && b.rows <= kInt32Max && b.cols <= kInt32Max,
                        "hash SpGEMM: row and column counts must fit in int32 (A ", a.rows, "x", a.cols, ", B ", b.rows,
                        "x", b.cols, ")");
  if (range.end < 0) range.end = a.rows;
  TESSERA_REQUIRE_INPUT(0 <= range.begin && range.begin <= range.end && range.end <= a.rows, "hash SpGEMM: rows [",
                        range.begin, ", ", range.end, ") are not a range of A's ", a.rows, " rows");
  cudaStream_t s = stream_;
  range_ = range;
  a_nnz_ = a.nnz, b_nnz_ = b.nnz, b_rows_ = b.rows, b_cols_ = b.cols;
  const std::int64_t rows = range.end - range.begin;
  info_ = HashSpgemmInfo{};
  info_.rows = rows;

  // 1. products per row (an upper bound on its length once capped at B's columns), bins
  products_.allocate(std::size_t(rows), s);
  binned_rows_.allocate(std::size_t(rows), s);
  bin_offset_.fill(0);
  if (rows > 0) {
    DeviceBuffer<int> bin(std::size_t(rows), s);
    DeviceBuffer<std::int32_t> row_id(std::size_t(rows), s);
    DeviceBuffer<unsigned long long> totals(hash::kBins + 1, s);
    totals.fill_bytes(0, s);
    row_products_kernel<<<grid_for(rows * kCountGroup, kThreads), kThreads, 0, s>>>(
        rows, a.row_ptr.data() + range.begin, a.col_idx.data(), b.row_ptr.data(), b.cols, products_.data(), bin.data(),
        row_id.data(), totals.data());
    TESSERA_CHECK_LAUNCH();
    const std::vector<unsigned long long> t = totals.download(s);
    int used_bins = 0;
    for (int i = 0; i < hash::kBins; ++i) {
      info_.rows_per_bin[i] = std::int64_t(t[i]);
      bin_offset_[i + 1] = bin_offset_[i] + std::int64_t(t[i]);
      used_bins += t[i] > 0;
    }
    info_.products = std::int64_t(t[hash::kBins]);
    // 2. rows grouped by bin (stable radix sort on the bin's 4 bits); not needed when every row
    // is in one bin (a stencil's rows usually are)
    if (used_bins == 1) {
      binned_rows_ = std::move(row_id);
    } else {
      DeviceBuffer<int> sorted_bin(std::size_t(rows), s);
      cub_call(s, [&](void* temp, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(temp, bytes, bin.data(), sorted_bin.data(), row_id.data(),
                                               binned_rows_.data(), rows, 0, 4, s);
      });
    }
  }

  // 3. distinct columns per row: shared-memory bins, then the global-memory rows in chunks
  DeviceBuffer<std::int64_t> row_nnz(std::size_t(rows) + 1, s);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(row_nnz.data(), 0, row_nnz.bytes(), s));
  const hash::Operands op = operands_of(a, b, range.begin, products_.data());
  const hash::Output out{row_nnz.data(), nullptr, nullptr, nullptr};
  for (int bin = 1; bin < hash::kGlobalBin; ++bin)
    if (const std::int64_t n = bin_offset_[bin + 1] - bin_offset_[bin])
      launch_shared_bin<false>(bin, op, binned_rows_.data() + bin_offset_[bin], n, out, s);
  plan_global_rows(s);
  run_global_rows<false>(op, out, s);
  if (!global_->table_size.empty()) {
    const std::size_t n = global_->table_size.size();
    DeviceBuffer<std::int64_t> nnz(n, s);
    gather_row_nnz_kernel<<<grid_for(std::int64_t(n), kThreads), kThreads, 0, s>>>(
        std::int64_t(n), global_rows(), row_nnz.data(), nnz.data());
    TESSERA_CHECK_LAUNCH();
    global_->row_nnz = nnz.download(s);
  }

  // 4. row offsets: exclusive scan of rows + 1 counts (the last one 0) ends with the total
  row_ptr.allocate(std::size_t(rows) + 1, s);
  cub_call(s, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, row_nnz.data(), row_ptr.data(), rows + 1, s);
  });
  info_.c_nnz = read_scalar(row_ptr.data() + rows, s);
}

const std::int32_t* HashSpgemm::global_rows() const { return binned_rows_.data() + bin_offset_[hash::kGlobalBin]; }

void HashSpgemm::plan_global_rows(cudaStream_t s) {
  global_ = std::make_shared<HashGlobalRows>();
  const std::int64_t n = bin_offset_[hash::kGlobalBin + 1] - bin_offset_[hash::kGlobalBin];
  info_.global_table_rows = n;
  if (n == 0) return;
  DeviceBuffer<std::int64_t> sizes(std::size_t(n), s);
  global_table_sizes_kernel<<<grid_for(n, kThreads), kThreads, 0, s>>>(n, global_rows(), products_.data(), b_cols_,
                                                                        sizes.data());
  TESSERA_CHECK_LAUNCH();
  global_->table_size = sizes.download(s);
  const std::int64_t budget = global_slot_budget();
  std::int64_t held = 0;
  for (std::size_t i = 0; i < global_->table_size.size(); ++i) {
    if (i == 0 || held + global_->table_size[i] > budget) global_->chunk_begin.push_back(i), held = 0;
    held += global_->table_size[i];
  }
  global_->chunk_begin.push_back(global_->table_size.size());
  info_.global_table_chunks = std::int64_t(global_->chunk_begin.size()) - 1;
}

template <bool kNumeric>
void HashSpgemm::run_global_rows(const hash::Operands& op, const hash::Output& out, cudaStream_t s) {
  if (!global_ || global_->table_size.empty()) return;
  for (std::size_t c = 0; c + 1 < global_->chunk_begin.size(); ++c) {
    const std::size_t first = global_->chunk_begin[c], count = global_->chunk_begin[c + 1] - first;
    const std::vector<std::int64_t> table_offset = offsets_of(global_->table_size, first, count);
    const auto d_table_offset = upload_slice(table_offset, 0, count + 1, s);
    const auto d_table_size = upload_slice(global_->table_size, first, count, s);
    DeviceBuffer<std::int32_t> keys(std::size_t(table_offset[count]), s);
    DeviceBuffer<double> vals(kNumeric ? std::size_t(table_offset[count]) : 0, s);
    hash::GlobalTables t{global_rows() + first, d_table_offset.data(), d_table_size.data(), keys.data(), vals.data(),
                         nullptr, nullptr, nullptr};
    if constexpr (!kNumeric) {
      hash::global_table_kernel<false><<<unsigned(count), hash::kGlobalBlock, 0, s>>>(op, t, out);
      TESSERA_CHECK_LAUNCH();
    } else {
      const std::vector<std::int64_t> scratch_offset = offsets_of(global_->row_nnz, first, count);
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
      hash::copy_rows_kernel<<<unsigned(count), kThreads, 0, s>>>(global_rows() + first, d_scratch_offset.data(),
                                                                   sorted_col.data(), sorted_val.data(), out);
      TESSERA_CHECK_LAUNCH();
    }
  }
}

void HashSpgemm::symbolic(const DeviceCsr<double>& a, const DeviceCsr<double>& b, DeviceCsr<double>& c, RowRange rows) {
  have_symbolic_ = false;
  count_rows(a, b, rows, c.row_ptr);
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
  for (int bin = 1; bin < hash::kGlobalBin; ++bin)
    if (const std::int64_t n = bin_offset_[bin + 1] - bin_offset_[bin])
      launch_shared_bin<true>(bin, op, binned_rows_.data() + bin_offset_[bin], n, out, s);
  run_global_rows<true>(op, out, s);
}

std::int64_t HashSpgemm::bytes() const {
  return std::int64_t(binned_rows_.bytes() + products_.bytes());
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
