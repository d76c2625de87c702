#include "amg/cuda/device_prolongator.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <limits>

#include "amg/cuda/setup_phase_kernels.cuh"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/index_kernels.cuh"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;
using tessera::cuda::grid_for;
using tessera::cuda::OperandView;

constexpr int kThreads = 256;

/// append_smoothed_row's two-pointer merge of row i of P_tent and of A P_tent. With `cols`
/// null it only counts the merged entries; otherwise it also writes them to cols/vals. Returns the count.
__device__ std::int64_t merge_row(std::int64_t i, const std::int64_t* t_ptr, const std::int32_t* t_col,
                                  const double* t_val, const std::int64_t* ap_ptr, const std::int32_t* ap_col,
                                  const double* ap_val, double scale, std::int32_t* cols, double* vals) {
  constexpr std::int32_t kEnd = 0x7fffffff;  // past every column (numeric_limits is host-only here)
  std::int64_t s = t_ptr[i], t = ap_ptr[i], k = 0;
  const std::int64_t s_end = t_ptr[i + 1], t_end = ap_ptr[i + 1];
  while (s < s_end || t < t_end) {
    const std::int32_t cs = s < s_end ? t_col[s] : kEnd, ct = t < t_end ? ap_col[t] : kEnd;
    const std::int32_t c = cs < ct ? cs : ct;
    if (cols) {  // the count pass has no values (t_val, ap_val null): read them only here
      double v = 0.0;
      if (cs == c) v += t_val[s];
      if (ct == c) v += scale * ap_val[t];
      cols[k] = c, vals[k] = v;
    }
    s += cs == c, t += ct == c;
    ++k;
  }
  return k;
}

__global__ void merge_count_kernel(std::int64_t rows, const std::int64_t* t_ptr, const std::int32_t* t_col,
                                   const std::int64_t* ap_ptr, const std::int32_t* ap_col, std::int64_t* count) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows) count[i] = merge_row(i, t_ptr, t_col, nullptr, ap_ptr, ap_col, nullptr, 0.0, nullptr, nullptr);
}

__global__ void merge_fill_kernel(std::int64_t rows, const std::int64_t* t_ptr, const std::int32_t* t_col,
                                  const double* t_val, const std::int64_t* ap_ptr, const std::int32_t* ap_col,
                                  const double* ap_val, const double* inv_diag, double omega,
                                  const std::int64_t* p_ptr, std::int32_t* p_col, double* p_val) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  merge_row(i, t_ptr, t_col, t_val, ap_ptr, ap_col, ap_val, -omega * inv_diag[i], p_col + p_ptr[i], p_val + p_ptr[i]);
}

/// Row of every entry (the CSR row_ptr expanded).
__global__ void entry_rows_kernel(std::int64_t rows, const std::int64_t* row_ptr, std::int32_t* row_of) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) row_of[p] = static_cast<std::int32_t>(i);
}

__global__ void column_count_kernel(std::int64_t nnz, const std::int32_t* col, unsigned long long* count) {
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < nnz) atomicAdd(count + col[k], 1ull);
}

/// The pattern of R = P^T and where each of its entries comes from in P: a stable radix sort of
/// P's entries by column keeps rows increasing inside each column, so R's rows come out sorted.
void transpose_pattern(const DeviceCsr<double>& p, DeviceTransferPlan& plan, DeviceCsr<double>& r, cudaStream_t s) {
  const std::int64_t nnz = p.nnz;
  r.rows = p.cols, r.cols = p.rows, r.nnz = nnz;
  DeviceBuffer<unsigned long long> count(std::size_t(p.cols + 1), s);
  count.fill_bytes(0, s);
  r.row_ptr.allocate(std::size_t(p.cols + 1), s);
  r.col_idx.allocate(std::size_t(nnz), s);
  r.values.allocate(std::size_t(nnz), s);
  plan.r_source.allocate(std::size_t(nnz), s);
  if (nnz) {
    column_count_kernel<<<grid_for(nnz, kThreads), kThreads, 0, s>>>(nnz, p.col_idx.data(), count.data());
    TESSERA_CHECK_LAUNCH();
  }
  detail::exclusive_scan_with_total(count.data(), r.row_ptr.data(), p.cols, s);
  if (nnz == 0) return;
  DeviceBuffer<std::int32_t> sorted_cols(std::size_t(nnz), s), row_of(std::size_t(nnz), s);
  DeviceBuffer<std::int64_t> entries(std::size_t(nnz), s);
  tessera::cuda::fill_iota(nnz, entries.data(), s);
  const int column_bits = tessera::cuda::significant_bits(static_cast<std::uint64_t>(std::max<std::int64_t>(p.cols - 1, 0)));
  tessera::cuda::cub_call(s, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, p.col_idx.data(), sorted_cols.data(), entries.data(),
                                           plan.r_source.data(), nnz, 0, column_bits, s);
  });
  entry_rows_kernel<<<grid_for(p.rows, kThreads), kThreads, 0, s>>>(p.rows, p.row_ptr.data(), row_of.data());
  TESSERA_CHECK_LAUNCH();
  tessera::cuda::gather(nnz, plan.r_source.data(), row_of.data(), r.col_idx.data(), s);  // R's row indices
}

/// P's pattern: per-row merged lengths, scanned into row_ptr (one read-back for nnz).
void merged_pattern(const DeviceCsr<double>& p_tent, const DeviceCsr<double>& ap, DeviceCsr<double>& p,
                    cudaStream_t s) {
  p.rows = p_tent.rows, p.cols = p_tent.cols;
  DeviceBuffer<std::int64_t> count(std::size_t(p.rows + 1), s);
  count.fill_bytes(0, s);
  if (p.rows) {
    merge_count_kernel<<<grid_for(p.rows, kThreads), kThreads, 0, s>>>(p.rows, p_tent.row_ptr.data(),
                                                                       p_tent.col_idx.data(), ap.row_ptr.data(),
                                                                       ap.col_idx.data(), count.data());
    TESSERA_CHECK_LAUNCH();
  }
  p.row_ptr.allocate(std::size_t(p.rows + 1), s);
  detail::exclusive_scan_with_total(count.data(), p.row_ptr.data(), p.rows, s);
  p.nnz = tessera::cuda::read_scalar(p.row_ptr.data() + p.rows, s);
  p.col_idx.allocate(std::size_t(p.nnz), s);
  p.values.allocate(std::size_t(p.nnz), s);
}

}  // namespace

namespace {

/// automatic: the level's engine, decided once from the work estimate of A times `first` (the
/// level's first product's right operand: P_tent, or P without prolongator smoothing) and given
/// to all three products (see choose_level_spgemm_engine).
tessera::cuda::OffloadSpgemm level_engine(const DeviceCsr<double>& a, const DeviceCsr<double>& first,
                                          DeviceTransferPlan& plan) {
  using tessera::cuda::OffloadSpgemm;
  if (plan.which != OffloadSpgemm::automatic) return plan.which;
  if (plan.a_p.engine() == OffloadSpgemm::automatic) {
    const OffloadSpgemm engine = tessera::cuda::resolve_level_spgemm_engine(plan.which, a, first, plan.stream);
    for (tessera::cuda::DeviceProduct* product : {&plan.a_p_tent, &plan.a_p, &plan.r_a_p})
      product->assign_engine(engine);
  }
  return plan.a_p.engine();
}

}  // namespace

void device_smooth_prolongator(const DeviceCsr<double>& a, const double* inv_diag, const DeviceCsr<double>& p_tent,
                               double omega, DeviceTransferPlan& plan, DeviceCsr<double>& p, cudaStream_t s,
                               SmoothingOperator which) {
  const tessera::cuda::OffloadSpgemm engine = level_engine(a, p_tent, plan);
  const bool level_a = which == SmoothingOperator::level_a;
  const OperandView a_view = (level_a ? plan.a_op : plan.filtered_op).bind(a, engine, s);
  plan.a_op_current = level_a;  // the Galerkin product of this round reuses A's values (same engine)
  // P_tent is fixed for the life of the level (re-setup keeps it): converted once, never refreshed.
  // Written straight into plan.ap_tent (hash, cuSPARSE): the product keeps no second copy of C.
  plan.a_p_tent.multiply_into(a_view, plan.p_tent_op.bind(p_tent, engine, s, /*values_changed=*/false),
                              plan.ap_tent);
  const DeviceCsr<double>& ap = plan.ap_tent;
  if (!plan.have_p_pattern) merged_pattern(p_tent, ap, p, s);
  plan.have_p_pattern = true;
  if (p.rows == 0) return;
  merge_fill_kernel<<<grid_for(p.rows, kThreads), kThreads, 0, s>>>(
      p.rows, p_tent.row_ptr.data(), p_tent.col_idx.data(), p_tent.values.data(), ap.row_ptr.data(),
      ap.col_idx.data(), ap.values.data(), inv_diag, omega, p.row_ptr.data(), p.col_idx.data(), p.values.data());
  TESSERA_CHECK_LAUNCH();
}

void device_transpose(const DeviceCsr<double>& p, DeviceTransferPlan& plan, DeviceCsr<double>& r, cudaStream_t s) {
  TESSERA_REQUIRE_INPUT(p.cols <= std::numeric_limits<std::int32_t>::max() &&
                            p.rows <= std::numeric_limits<std::int32_t>::max(),
                        "device transpose: ", p.rows, "x", p.cols, " does not fit int32 column indices");
  if (!plan.have_r_pattern) transpose_pattern(p, plan, r, s);
  plan.have_r_pattern = true;
  tessera::cuda::gather(p.nnz, plan.r_source.data(), p.values.data(), r.values.data(), s);
}

void device_galerkin(const DeviceCsr<double>& a, const DeviceCsr<double>& p, const DeviceCsr<double>& r,
                     DeviceTransferPlan& plan, DeviceCsr<double>& a_c) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols && a.cols == p.rows && r.cols == a.rows && r.rows == p.cols,
                        "device Galerkin product: shapes differ (A ", a.rows, "x", a.cols, ", P ", p.rows, "x", p.cols,
                        ", R ", r.rows, "x", r.cols, ")");
  const cudaStream_t s = plan.stream;
  using tessera::cuda::OffloadSpgemm;
  const OffloadSpgemm engine = level_engine(a, p, plan);  // already fixed by the smoothing, if any
  // A's form was refreshed by the smoothing of this round (same engine: one per level).
  const OperandView a_view = plan.a_op.bind(a, engine, s, /*values_changed=*/!plan.a_op_current);
  plan.a_op_current = false;  // consumed: the next round refreshes A again
  const OperandView p_view = plan.p_op.bind(p, engine, s);
  OperandView ap_view;
  if (engine == OffloadSpgemm::tile) {
    plan.a_p.multiply(a_view, p_view);
    ap_view = plan.a_p.tile_result();  // A P stays in tiles for R (A P)
  } else {
    plan.a_p.multiply_into(a_view, p_view, plan.ap);  // C held once, in plan.ap
    ap_view = plan.ap_op.bind(plan.ap, engine, s);
  }
  // Into the caller's operator (the next level's A on re-setup): the product holds no copy.
  plan.r_a_p.multiply_into(plan.r_op.bind(r, engine, s), ap_view, a_c);
}

ProductEngines DeviceTransferPlan::engines() const {
  return ProductEngines{a_p_tent.engine(), a_p.engine(), r_a_p.engine()};
}

std::string to_string(const ProductEngines& e) {
  // automatic left unresolved: the plan never ran a product. (level_engine assigns all three
  // at once, so without prolongator smoothing A*P_tent shows the level's engine, unrun.)
  auto name = [](tessera::cuda::OffloadSpgemm w) {
    return w == tessera::cuda::OffloadSpgemm::automatic ? "not run" : tessera::cuda::to_string(w);
  };
  return std::string("A*P_tent: ") + name(e.a_p_tent) + ", A*P: " + name(e.a_p) + ", R*AP: " + name(e.r_a_p);
}

std::int64_t DeviceTransferPlan::bytes() const {
  auto csr = [](const DeviceCsr<double>& m) { return std::int64_t(m.row_ptr.bytes() + m.col_idx.bytes() + m.values.bytes()); };
  return a_p_tent.bytes() + a_p.bytes() + r_a_p.bytes() + a_op.bytes() + filtered_op.bytes() + p_tent_op.bytes() +
         p_op.bytes() + r_op.bytes() + ap_op.bytes() + csr(ap_tent) + csr(ap) + std::int64_t(r_source.bytes());
}

}  // namespace tessera::amg::gpu
