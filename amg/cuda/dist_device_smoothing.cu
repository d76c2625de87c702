// A distributed level's first smoothed prolongator on the rank's GPU (dist_device_smoothing.hpp).
// One thread a row in each kernel: P's rows hold a few entries (tens for elasticity).
#include "amg/cuda/dist_device_smoothing.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "amg/cuda/device_held_extended_a.hpp"
#include "amg/cuda/setup_phase_kernels.cuh"
#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "dist/compact_spgemm.hpp"
#include "dist/cuda/device_compact_extended_rows.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/cuda/device_held_operand.hpp"
#include "dist/cuda/device_transposed_block.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::amg::gpu {
namespace {

using detail::kBlock;
using detail::thread_index;
using tessera::cuda::DeviceBuffer;
using tessera::cuda::DeviceCsr;
using tessera::cuda::grid_for;

/// Row i of P_tent and of A P_tent, both in compact columns, as merge_smoothed_row walks them:
/// emit(column, s, t) in increasing column order, s and t the entries (-1 where absent).
template <class Emit>
__device__ void merge_row(std::int64_t i, const std::int64_t* tent_ptr, const std::int32_t* tent_col,
                          const std::int64_t* ap_ptr, const std::int32_t* ap_col, Emit&& emit) {
  constexpr std::int32_t kEnd = 0x7fffffff;  // past every column
  std::int64_t s = tent_ptr[i], t = ap_ptr[i];
  const std::int64_t s_end = tent_ptr[i + 1], t_end = ap_ptr[i + 1];
  while (s < s_end || t < t_end) {
    const std::int32_t cs = s < s_end ? tent_col[s] : kEnd, ct = t < t_end ? ap_col[t] : kEnd;
    const std::int32_t c = cs < ct ? cs : ct;
    emit(c, cs == c ? s : -1, ct == c ? t : -1);
    s += cs == c, t += ct == c;
  }
}

struct OwnedRange {
  std::int32_t first, end;  // compact columns [first, end) are P's owned ones
  __device__ bool has(std::int32_t c) const { return c >= first && c < end; }
};

/// Flags the outside compact columns the rows of A P_tent and of P_tent use, and sets `broken`
/// where a row of the product is not strictly increasing inside [0, columns) (the merge reads
/// them so; the host merge checks the same, compact_block_error).
__global__ void flag_outside_columns(std::int64_t rows, const std::int64_t* ap_ptr, const std::int32_t* ap_col,
                                     const std::int64_t* tent_ptr, const std::int32_t* tent_col,
                                     std::int64_t columns, OwnedRange owned, char* used, int* broken) {
  const std::int64_t i = thread_index();
  if (i >= rows) return;
  std::int64_t previous = -1;
  for (std::int64_t k = ap_ptr[i]; k < ap_ptr[i + 1]; ++k) {
    const std::int32_t c = ap_col[k];
    if (c <= previous || c >= columns) {
      *broken = 1;
      return;
    }
    previous = c;
    if (!owned.has(c)) used[c] = 1;
  }
  for (std::int64_t k = tent_ptr[i]; k < tent_ptr[i + 1]; ++k)
    if (!owned.has(tent_col[k])) used[tent_col[k]] = 1;
}

/// Each merged row's entries in P's local and non-local blocks (the counts' last entries stay 0
/// for the scans' totals).
__global__ void count_merged(std::int64_t rows, const std::int64_t* tent_ptr, const std::int32_t* tent_col,
                             const std::int64_t* ap_ptr, const std::int32_t* ap_col, OwnedRange owned,
                             std::int64_t* local_count, std::int64_t* nonlocal_count) {
  const std::int64_t i = thread_index();
  if (i >= rows) return;
  std::int64_t local = 0, nonlocal = 0;
  merge_row(i, tent_ptr, tent_col, ap_ptr, ap_col,
            [&](std::int32_t c, std::int64_t, std::int64_t) { ++(owned.has(c) ? local : nonlocal); });
  local_count[i] = local;
  nonlocal_count[i] = nonlocal;
}

struct BlockOut {
  const std::int64_t* row_ptr;
  std::int32_t* col;
  double* values;
};

/// P's rows: each value smoothed_value's, P_tent's then scale times A P_tent's, rounded as the
/// host rounds them (__dmul_rn/__dadd_rn keep nvcc from fusing a multiply-add).
__global__ void write_merged(std::int64_t rows, const std::int64_t* tent_ptr, const std::int32_t* tent_col,
                             const double* tent_val, const std::int64_t* ap_ptr, const std::int32_t* ap_col,
                             const double* ap_val, const double* inv_diag, double omega, OwnedRange owned,
                             const std::int32_t* to_p, BlockOut local, BlockOut nonlocal) {
  const std::int64_t i = thread_index();
  if (i >= rows) return;
  const double scale = __dmul_rn(-omega, inv_diag[i]);
  std::int64_t l = local.row_ptr[i], g = nonlocal.row_ptr[i];
  merge_row(i, tent_ptr, tent_col, ap_ptr, ap_col, [&](std::int32_t c, std::int64_t s, std::int64_t t) {
    double v = 0.0;
    if (s >= 0) v = __dadd_rn(v, tent_val[s]);
    if (t >= 0) v = __dadd_rn(v, __dmul_rn(scale, ap_val[t]));
    BlockOut& out = owned.has(c) ? local : nonlocal;
    std::int64_t& at = owned.has(c) ? l : g;
    out.col[at] = to_p[c];
    out.values[at++] = v;
  });
}

template <class F>
void add_seconds(double& seconds, F&& step) {
  const auto start = std::chrono::steady_clock::now();
  step();
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// What the steps keep on the device between them: B_ext (P_tent's owned rows first) and A P_tent;
/// and 1 / a_ii where the level's copy of A, which the product read, holds it.
struct Operands {
  DeviceCsr<double> b, ap;
  std::shared_ptr<const DeviceBuffer<double>> inv_diag;
};

/// B_ext, assembled where the tentative prolongator left P_tent's blocks (freed then), or uploaded
/// from the host's; on the default stream, as the product.
DeviceCsr<double> extended_b(const dist::CompactSpgemm::Operands& o, cuda::OffloadStats& stats) {
  DeviceCsr<double> b;
  if (o.b) {
    add_seconds(stats.upload, [&] { b = tessera::cuda::upload(*o.b); });
    return b;
  }
  TESSERA_TRACE_STEP("spgemm.device_extended_b");
  auto* held = dynamic_cast<dist::gpu::DeviceHeldOperand*>(o.b_held);
  TESSERA_ASSERT(held && o.b_source, "device smoothing: P_tent is held, but not by the GPU backend");
  add_seconds(stats.convert, [&] {
    b = dist::gpu::compact_extended_rows(held->local, held->nonlocal, *o.b_source, nullptr);
    held->local = DeviceCsr<double>{};
    held->nonlocal = DeviceCsr<double>{};
  });
  return b;
}

/// A P_tent on the device, through the product's multiply_with (checked and recorded there).
Operands multiply(const dist::Communicator& comm, dist::CompactSpgemm& product, cuda::OffloadSpgemm which,
                  cuda::OffloadStats& stats) {
  TESSERA_TRACE_STEP("spgemm.local_product");
  Operands d;
  product.multiply_with(comm, "prolongator smoothing: A*P_tent on the device",
                        [&](const dist::CompactSpgemm::Operands& o) {
                          DeviceCsr<double> a;
                          if (o.a_held) {
                            a = device_extended_a(*o.a_held);
                            d.inv_diag = held_inverse_diagonal(*o.a_held);
                          } else
                            add_seconds(stats.upload, [&] { a = tessera::cuda::upload(*o.a_host); });
                          d.b = extended_b(o, stats);
                          // A held on the device fixes the level's engine here (its first product).
                          const cuda::OffloadSpgemm engine = o.a_held ? level_engine(*o.a_held, a, d.b) : which;
                          d.ap = tessera::cuda::offload_spgemm_on_device(std::move(a), d.b, engine, stats);
                          return d.ap.nnz;
                        });
  return d;
}

/// The outside compact columns the rows use (flags a compact column), and whether a row of the
/// product is broken.
std::vector<char> used_outside_columns(const Operands& d, std::int64_t rows, std::int64_t columns, OwnedRange owned,
                                       bool& broken, cudaStream_t s) {
  DeviceBuffer<char> used(static_cast<std::size_t>(columns), s);
  DeviceBuffer<int> flag(1, s);
  used.fill_bytes(0, s);
  flag.fill_bytes(0, s);
  if (rows > 0) {
    flag_outside_columns<<<grid_for(rows, kBlock), kBlock, 0, s>>>(rows, d.ap.row_ptr.data(), d.ap.col_idx.data(),
                                                                   d.b.row_ptr.data(), d.b.col_idx.data(), columns,
                                                                   owned, used.data(), flag.data());
    TESSERA_CHECK_LAUNCH();
  }
  broken = tessera::cuda::read_scalar(flag.data(), s) != 0;
  return used.download(s);
}

/// The first `rows` rows of `m` (`entries` of them), copied on `s`.
DeviceCsr<double> copy_of_top_rows(const DeviceCsr<double>& m, std::int64_t rows, std::int64_t entries, cudaStream_t s) {
  TESSERA_ASSERT(rows <= m.rows && entries <= m.nnz, "top rows: ", rows, " rows and ", entries, " entries of ", m.rows,
                 " and ", m.nnz);
  DeviceCsr<double> top;
  top.rows = rows, top.cols = m.cols, top.nnz = entries;
  const auto copy = [s](auto& to, const auto& from, std::int64_t n) {
    to.allocate(static_cast<std::size_t>(n), s);
    if (n > 0)
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), to.bytes(), cudaMemcpyDeviceToDevice, s));
  };
  copy(top.row_ptr, m.row_ptr, rows + 1);
  copy(top.col_idx, m.col_idx, entries);
  copy(top.values, m.values, entries);
  return top;
}

/// SmoothedProlongator::keep_for_solve holding copies of P's blocks and of R's owned block (the
/// first rows of P^T, one a column P owns; `r_entries` of them): the merge's own arrays go to the
/// Galerkin product, which consumes them. Device-to-device copies (650 MB at poisson3d:192's
/// finest level) instead of the solve's upload of the host copies.
decltype(SmoothedProlongator::keep_for_solve) keep_for_solve(const DeviceCsr<double>& local,
                                                             const DeviceCsr<double>& nonlocal,
                                                             const DeviceCsr<double>& transposed,
                                                             std::int64_t r_entries, cudaStream_t s) {
  struct Kept {
    DeviceCsr<double> p_local, p_nonlocal, r_local;
  };
  auto kept = std::make_shared<Kept>();
  kept->p_local = copy_of_top_rows(local, local.rows, local.nnz, s);
  kept->p_nonlocal = copy_of_top_rows(nonlocal, nonlocal.rows, nonlocal.nnz, s);
  kept->r_local = copy_of_top_rows(transposed, local.cols, r_entries, s);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // asynchronous failures surface at the merge
  return [kept, s](const dist::Communicator& comm, const dist::DistMatrix& p, const dist::DistMatrix& r,
                   DeviceOperatorSlot& device_p, DeviceOperatorSlot& device_r) {
    dist::call_collectively(comm, "distributed device smoothing: P and R kept for the solve", [&] {
      TESSERA_ASSERT(kept->p_local.row_ptr.size() > 0, "P and R were kept for the solve once already");
      std::optional<trace::Step> step(std::in_place, "p");
      device_p.matrix =
          std::make_shared<dist::gpu::DeviceDistMatrix>(p, std::move(kept->p_local), std::move(kept->p_nonlocal), s);
      step.emplace("r");
      device_r.matrix = std::make_shared<dist::gpu::DeviceDistMatrix>(r, std::move(kept->r_local),
                                                                     tessera::cuda::upload(r.nonlocal, s), s);
      device_p.stale = device_r.stale = false;
    });
  };
}

/// P's blocks from the merged rows, downloaded into `out.p` (its ghosts already numbered), and,
/// unless `outputs` is p_only, P^T made from them on the device and downloaded into
/// `out.p_transposed`; with kept_on_device, all three are kept there in `out.held`.
void merge_into(const Operands& d, std::int64_t rows, const Vector& inv_diag, double omega, OwnedRange owned,
                const std::vector<std::int32_t>& to_p, SmoothedProlongator& out, MergeOutputs outputs,
                cudaStream_t s) {
  dist::DistMatrix& p = out.p;
  DeviceBuffer<std::int64_t> local_count(static_cast<std::size_t>(rows + 1), s), nonlocal_count(local_count.size(), s);
  local_count.fill_bytes(0, s);
  nonlocal_count.fill_bytes(0, s);
  if (rows > 0) {
    count_merged<<<grid_for(rows, kBlock), kBlock, 0, s>>>(rows, d.b.row_ptr.data(), d.b.col_idx.data(),
                                                           d.ap.row_ptr.data(), d.ap.col_idx.data(), owned,
                                                           local_count.data(), nonlocal_count.data());
    TESSERA_CHECK_LAUNCH();
  }
  DeviceCsr<double> local, nonlocal;
  for (auto [block, count, cols] : {std::tuple{&local, &local_count, p.local.cols},
                                    {&nonlocal, &nonlocal_count, static_cast<std::int64_t>(p.ghost_cols.size())}}) {
    block->rows = rows, block->cols = cols;
    block->row_ptr.allocate(static_cast<std::size_t>(rows + 1), s);
    detail::exclusive_scan_with_total(count->data(), block->row_ptr.data(), rows, s);
    block->nnz = tessera::cuda::read_scalar(block->row_ptr.data() + rows, s);
    block->col_idx.allocate(static_cast<std::size_t>(block->nnz), s);
    block->values.allocate(static_cast<std::size_t>(block->nnz), s);
  }
  if (rows > 0) {
    DeviceBuffer<std::int32_t> to_p_d;
    to_p_d.upload(to_p, s);
    DeviceBuffer<double> uploaded;
    if (!d.inv_diag) uploaded.upload(inv_diag, s);
    write_merged<<<grid_for(rows, kBlock), kBlock, 0, s>>>(
        rows, d.b.row_ptr.data(), d.b.col_idx.data(), d.b.values.data(), d.ap.row_ptr.data(), d.ap.col_idx.data(),
        d.ap.values.data(), d.inv_diag ? d.inv_diag->data() : uploaded.data(), omega, owned, to_p_d.data(),
        BlockOut{local.row_ptr.data(), local.col_idx.data(), local.values.data()},
        BlockOut{nonlocal.row_ptr.data(), nonlocal.col_idx.data(), nonlocal.values.data()});
    TESSERA_CHECK_LAUNCH();
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // the kernels' time apart from the downloads'
  std::optional<trace::Step> step;
  DeviceCsr<double> transposed;
  if (outputs != MergeOutputs::p_only) {
    step.emplace("transpose_p");
    transposed = dist::gpu::transposed_extended_block(local, nonlocal, s);
  }
  step.emplace("download_p");
  p.local = tessera::cuda::download(local, s);
  p.nonlocal = tessera::cuda::download(nonlocal, s);
  if (outputs != MergeOutputs::p_only) {
    step.emplace("download_p_transposed");
    out.p_transposed = tessera::cuda::download(transposed, s);
  }
  if (outputs == MergeOutputs::kept_for_solve) {
    step.emplace("copies_for_solve");
    out.keep_for_solve = keep_for_solve(local, nonlocal, transposed, out.p_transposed->row_ptr[p.local.cols], s);
  }
  if (outputs == MergeOutputs::kept_on_device || outputs == MergeOutputs::kept_for_solve) {
    auto held = std::make_shared<dist::gpu::DeviceHeldOperand>();
    TESSERA_CUDA_CHECK(cudaGetDevice(&held->device));
    held->local = std::move(local);
    held->nonlocal = std::move(nonlocal);
    held->transposed = std::move(transposed);
    out.held = std::move(held);
  }
}

}  // namespace

SmoothedProlongator dist_device_smoothed_prolongator(const dist::Communicator& comm,
                                                     dist::CompactSpgemm& a_times_p_tent,
                                                     const dist::DistMatrix& p_tent, const Vector& inv_diag,
                                                     double omega, cudaStream_t stream, cuda::OffloadSpgemm which,
                                                     cuda::OffloadStats& stats, MergeOutputs outputs) {
  const std::vector<std::int64_t>& global_of = a_times_p_tent.compact_to_global();
  const std::int64_t rows = p_tent.owned_rows(), columns = static_cast<std::int64_t>(global_of.size());
  TESSERA_ASSERT(static_cast<std::int64_t>(inv_diag.size()) == rows, "device smoothing: ", inv_diag.size(),
                 " diagonal entries for ", rows, " rows");
  const Operands d = multiply(comm, a_times_p_tent, which, stats);
  TESSERA_TRACE_STEP("device_merge");
  SmoothedColumns columns_of_p = owned_compact_range(p_tent, global_of);
  const OwnedRange owned{columns_of_p.first_owned, columns_of_p.end_owned};
  bool broken = false;
  std::optional<trace::Step> step(std::in_place, "used_columns");
  const std::vector<char> used = dist::call_collectively(comm, "prolongator smoothing: the device merge", [&] {
    return used_outside_columns(d, rows, columns, owned, broken, stream);
  });
  dist::throw_if_any_rank_failed(
      comm, broken ? tessera::detail::concat("AMG: rank ", comm.rank(),
                                             ": A*P_tent: a row of the device product is not sorted or not in its ",
                                             columns, " compact columns")
                   : "");
  step.emplace("number_columns");
  number_smoothed_columns(comm, p_tent, global_of, used, columns_of_p);
  SmoothedProlongator smoothed{smoothed_shell(p_tent, columns_of_p), std::nullopt, nullptr};
  smoothed.p.local.cols = p_tent.local.cols;
  step.emplace("merge_and_download");
  dist::call_collectively(comm, "prolongator smoothing: the device merge", [&] {
    merge_into(d, rows, inv_diag, omega, owned, columns_of_p.to_p, smoothed, outputs, stream);
  });
  return smoothed;
}

DistSmoothing device_smoothing(cudaStream_t stream, cuda::OffloadSpgemm which,
                               std::shared_ptr<cuda::OffloadStats> stats, MergeOutputs outputs) {
  if (!stats) stats = std::make_shared<cuda::OffloadStats>();
  return [=](const dist::Communicator& comm, dist::CompactSpgemm& a_times_p_tent, const dist::DistMatrix& p_tent,
             const Vector& inv_diag, double omega) {
    return dist_device_smoothed_prolongator(comm, a_times_p_tent, p_tent, inv_diag, omega, stream, which, *stats,
                                            outputs);
  };
}

}  // namespace tessera::amg::gpu
