#include "amg/cuda/device_filtered_operator.hpp"

#include "amg/cuda/setup_phase_kernels.cuh"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;
using tessera::cuda::grid_for;
using detail::kBlock;
using detail::thread_index;

/// The node holding dof `dof`: the last n with node_ptr[n] <= dof.
__device__ std::int64_t node_of(const std::int64_t* node_ptr, std::int64_t num_nodes, std::int64_t dof) {
  std::int64_t lo = 0, hi = num_nodes;  // node_ptr[lo] <= dof < node_ptr[hi]
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (node_ptr[mid] <= dof) lo = mid; else hi = mid;
  }
  return lo;
}

/// Whether the sorted graph row of node n holds node m.
__device__ bool strongly_connected(const std::int64_t* g_ptr, const std::int32_t* g_col, std::int64_t n,
                                   std::int64_t m) {
  std::int64_t lo = g_ptr[n], hi = g_ptr[n + 1];
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (g_col[mid] < m) lo = mid + 1; else hi = mid;
  }
  return lo < g_ptr[n + 1] && g_col[lo] == m;
}

struct FilterInputs {
  std::int64_t rows;
  const std::int64_t* a_ptr;
  const std::int32_t* a_col;
  const std::int64_t* node_ptr;
  std::int64_t num_nodes;
  const std::int64_t* g_ptr;
  const std::int32_t* g_col;

  __device__ bool keeps(std::int64_t n, std::int32_t col) const {
    const std::int64_t m = node_of(node_ptr, num_nodes, col);
    return m == n || strongly_connected(g_ptr, g_col, n, m);
  }
};

__global__ void count_kept_kernel(FilterInputs in, std::int64_t* count) {
  const std::int64_t i = thread_index();
  if (i >= in.rows) return;
  const std::int64_t n = node_of(in.node_ptr, in.num_nodes, i);
  std::int64_t kept = 0;
  for (std::int64_t p = in.a_ptr[i]; p < in.a_ptr[i + 1]; ++p) kept += in.keeps(n, in.a_col[p]);
  count[i] = kept;
}

/// Row i of A_F's columns and of the map; the row's diagonal is at A_F's position `diagonal`,
/// found in the first pass (the filtered_operator's two passes over the row).
__global__ void fill_kept_kernel(FilterInputs in, const std::int64_t* f_ptr, std::int32_t* f_col,
                                 std::int64_t* target) {
  const std::int64_t i = thread_index();
  if (i >= in.rows) return;
  const std::int64_t n = node_of(in.node_ptr, in.num_nodes, i);
  std::int64_t k = f_ptr[i], diagonal = -1;
  for (std::int64_t p = in.a_ptr[i]; p < in.a_ptr[i + 1]; ++p) {
    const std::int32_t col = in.a_col[p];
    if (!in.keeps(n, col)) {
      target[p] = -1;
      continue;
    }
    if (col == i) diagonal = k;
    target[p] = k;
    f_col[k++] = col;
  }
  for (std::int64_t p = in.a_ptr[i]; p < in.a_ptr[i + 1]; ++p)
    if (target[p] < 0) target[p] = diagonal;  // present: device_inverse_diagonal checks it before a refresh
}

__global__ void refresh_values_kernel(std::int64_t rows, const std::int64_t* a_ptr, const double* a_val,
                                      const std::int64_t* f_ptr, const std::int64_t* target, double* f_val) {
  const std::int64_t i = thread_index();
  if (i >= rows) return;
  for (std::int64_t k = f_ptr[i]; k < f_ptr[i + 1]; ++k) f_val[k] = 0.0;
  for (std::int64_t p = a_ptr[i]; p < a_ptr[i + 1]; ++p) f_val[target[p]] += a_val[p];
}

}  // namespace

std::optional<DeviceFilteredOperator> device_filtered_operator(const DeviceCsr<double>& a, const std::int64_t* node_ptr,
                                                               std::int64_t num_nodes, const DeviceCsr<double>& graph,
                                                               cudaStream_t s) {
  const FilterInputs in{a.rows, a.row_ptr.data(), a.col_idx.data(), node_ptr, num_nodes, graph.row_ptr.data(),
                        graph.col_idx.data()};
  DeviceBuffer<std::int64_t> count(std::size_t(a.rows + 1), s);
  count.fill_bytes(0, s);
  if (a.rows) {
    count_kept_kernel<<<grid_for(a.rows, kBlock), kBlock, 0, s>>>(in, count.data());
    TESSERA_CHECK_LAUNCH();
  }
  DeviceFilteredOperator f;
  f.a.rows = a.rows, f.a.cols = a.cols;
  f.a.row_ptr.allocate(std::size_t(a.rows + 1), s);
  detail::exclusive_scan_with_total(count.data(), f.a.row_ptr.data(), a.rows, s);
  f.a.nnz = tessera::cuda::read_scalar(f.a.row_ptr.data() + a.rows, s);
  if (f.a.nnz == a.nnz) return std::nullopt;  // A_F = A
  f.a.col_idx.allocate(std::size_t(f.a.nnz), s);
  f.a.values.allocate(std::size_t(f.a.nnz), s);
  f.a.values.fill_bytes(0, s);
  f.target.allocate(std::size_t(a.nnz), s);
  fill_kept_kernel<<<grid_for(a.rows, kBlock), kBlock, 0, s>>>(in, f.a.row_ptr.data(), f.a.col_idx.data(),
                                                               f.target.data());
  TESSERA_CHECK_LAUNCH();
  return f;
}

void device_refresh_filtered_values(const DeviceCsr<double>& a, DeviceFilteredOperator& f, cudaStream_t s) {
  TESSERA_ASSERT(std::int64_t(f.target.size()) == a.nnz && f.a.rows == a.rows,
                 "device filtered operator: A's pattern changed");
  if (a.rows == 0) return;
  refresh_values_kernel<<<grid_for(a.rows, kBlock), kBlock, 0, s>>>(a.rows, a.row_ptr.data(), a.values.data(),
                                                                    f.a.row_ptr.data(), f.target.data(),
                                                                    f.a.values.data());
  TESSERA_CHECK_LAUNCH();
}

}  // namespace tessera::amg::gpu
