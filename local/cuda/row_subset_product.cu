#include "local/cuda/row_subset_product.hpp"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <vector>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"

namespace tessera::cuda {

namespace {

constexpr int kBlock = 256;

/// The mask of the `lanes` lanes of this thread's group inside its warp (lanes divides 32).
__device__ inline unsigned group_mask(int lanes) {
  if (lanes == 32) return 0xffffffffu;
  return ((1u << lanes) - 1u) << (threadIdx.x % 32 / lanes * lanes);
}

/// One group of kLanes lanes a listed row: the lanes stride over the row, a shuffle sums them.
/// A group's lanes share `item`, so they leave together and the shuffle's mask is whole.
template <int kLanes>
__global__ void __launch_bounds__(kBlock)
    spmv_rows_kernel(std::int64_t count, const std::int64_t* __restrict__ rows,
                     const std::int64_t* __restrict__ row_ptr, const std::int32_t* __restrict__ col,
                     const double* __restrict__ val, double alpha, const double* __restrict__ x, double* y) {
  const std::int64_t t = blockIdx.x * std::int64_t(kBlock) + threadIdx.x;
  const std::int64_t item = t / kLanes;
  const int lane = static_cast<int>(t % kLanes);
  if (item >= count) return;
  const std::int64_t row = rows[item];
  double sum = 0.0;
  for (std::int64_t p = row_ptr[row] + lane; p < row_ptr[row + 1]; p += kLanes) sum += val[p] * x[col[p]];
  const unsigned mask = group_mask(kLanes);
  for (int offset = kLanes / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(mask, sum, offset, kLanes);
  if (lane == 0) y[row] += alpha * sum;
}

/// One group a listed row, its lanes across the k columns (row-major X and Y: coalesced).
__global__ void __launch_bounds__(kBlock)
    spmm_rows_kernel(std::int64_t count, int lanes, const std::int64_t* __restrict__ rows,
                     const std::int64_t* __restrict__ row_ptr, const std::int32_t* __restrict__ col,
                     const double* __restrict__ val, double alpha, const double* __restrict__ x, std::int64_t k,
                     double* y) {
  const std::int64_t t = blockIdx.x * std::int64_t(kBlock) + threadIdx.x;
  const std::int64_t item = t / lanes;
  if (item >= count) return;
  const std::int64_t row = rows[item], p0 = row_ptr[row], p1 = row_ptr[row + 1];
  for (std::int64_t j = t % lanes; j < k; j += lanes) {
    double sum = 0.0;
    for (std::int64_t p = p0; p < p1; ++p) sum += val[p] * x[std::int64_t(col[p]) * k + j];
    y[row * k + j] += alpha * sum;
  }
}

int power_of_two_lanes(std::int64_t want) {
  int lanes = 1;
  while (lanes < 32 && lanes < want) lanes *= 2;
  return lanes;
}

unsigned blocks_for(std::int64_t threads) { return static_cast<unsigned>((threads + kBlock - 1) / kBlock); }

/// A subset of `count` rows of a rows x ? matrix with `nnz` entries, its rows not yet listed.
RowSubset sized_subset(std::int64_t rows, std::int64_t nnz, std::int64_t count) {
  RowSubset subset;
  subset.count = count;
  subset.matrix_rows = rows;
  subset.matrix_nnz = nnz;
  // Lanes at the mean rounded down to a power of two, so short rows do not leave most lanes
  // idle: a boundary row of a 7-point stencil has 1 ghost (one lane), of elasticity up to 27.
  const std::int64_t mean = count ? nnz / count : 0;
  subset.lanes = 1;
  while (subset.lanes < 32 && 2 * subset.lanes <= mean) subset.lanes *= 2;
  return subset;
}

/// Row i holds entries (the selection's predicate).
struct NonEmptyRow {
  const std::int64_t* row_ptr;
  __device__ bool operator()(std::int64_t i) const { return row_ptr[i + 1] > row_ptr[i]; }
};

void check_shape(const RowSubset& subset, const DeviceCsr<double>& a) {
  TESSERA_REQUIRE_INPUT(subset.matrix_rows == a.rows && subset.matrix_nnz == a.nnz &&
                            static_cast<std::int64_t>(subset.rows.size()) == subset.count,
                        "row-subset product: the subset was listed from a matrix of ", subset.matrix_rows, " rows and ",
                        subset.matrix_nnz, " entries, not this one (", a.rows, " rows, ", a.nnz, " entries)");
}

}  // namespace

RowSubset make_row_subset(const Csr<double>& a, cudaStream_t stream) {
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < a.rows; ++i)
    if (a.row_ptr[i + 1] > a.row_ptr[i]) rows.push_back(i);
  RowSubset subset = sized_subset(a.rows, a.nnz(), static_cast<std::int64_t>(rows.size()));
  subset.rows.upload(rows, stream);
  return subset;
}

RowSubset make_row_subset(const DeviceCsr<double>& a, cudaStream_t stream) {
  // At most one listed row an entry: the selection's buffer is no larger than the block
  // (a non-local block is small beside its rows), then cut to the count.
  const std::int64_t most = std::min(a.rows, a.nnz);
  if (most == 0) return sized_subset(a.rows, a.nnz, 0);
  DeviceBuffer<std::int64_t> listed(static_cast<std::size_t>(most), stream), selected(1, stream);
  cub_call(stream, [&](void* t, std::size_t& n) {
    return cub::DeviceSelect::If(t, n, thrust::counting_iterator<std::int64_t>(0), listed.data(), selected.data(),
                                 a.rows, NonEmptyRow{a.row_ptr.data()}, stream);
  });
  RowSubset subset = sized_subset(a.rows, a.nnz, read_scalar(selected.data(), stream));
  subset.rows.allocate(static_cast<std::size_t>(subset.count), stream);
  if (subset.count > 0)
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(subset.rows.data(), listed.data(), subset.rows.bytes(),
                                       cudaMemcpyDeviceToDevice, stream));
  return subset;
}

void spmv_add_on_rows(const RowSubset& subset, double alpha, const DeviceCsr<double>& a, const double* x, double* y,
                      cudaStream_t stream) {
  check_shape(subset, a);
  if (subset.count == 0) return;
  const unsigned blocks = blocks_for(subset.count * subset.lanes);
  const auto launch = [&](auto kernel) {
    kernel<<<blocks, kBlock, 0, stream>>>(subset.count, subset.rows.data(), a.row_ptr.data(), a.col_idx.data(),
                                          a.values.data(), alpha, x, y);
  };
  switch (subset.lanes) {
    case 1: launch(spmv_rows_kernel<1>); break;
    case 2: launch(spmv_rows_kernel<2>); break;
    case 4: launch(spmv_rows_kernel<4>); break;
    case 8: launch(spmv_rows_kernel<8>); break;
    case 16: launch(spmv_rows_kernel<16>); break;
    default: launch(spmv_rows_kernel<32>); break;
  }
  TESSERA_CHECK_LAUNCH();
}

void spmm_add_on_rows(const RowSubset& subset, double alpha, const DeviceCsr<double>& a, const double* x,
                      std::int64_t k, double* y, cudaStream_t stream) {
  check_shape(subset, a);
  TESSERA_REQUIRE_INPUT(k >= 1, "row-subset spmm: X needs at least one column, got k = ", k);
  if (subset.count == 0) return;
  const int lanes = power_of_two_lanes(k);
  spmm_rows_kernel<<<blocks_for(subset.count * lanes), kBlock, 0, stream>>>(
      subset.count, lanes, subset.rows.data(), a.row_ptr.data(), a.col_idx.data(), a.values.data(), alpha, x, k, y);
  TESSERA_CHECK_LAUNCH();
}

}  // namespace tessera::cuda
