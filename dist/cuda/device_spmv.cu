#include "dist/cuda/device_spmv.hpp"

#include <algorithm>
#include <memory>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/fused_smoother.hpp"
#include "local/cuda/row_subset_product.hpp"
#include "local/cuda/spmm.hpp"
#include "local/cuda/spmv.hpp"
#include "local/cuda/vector_ops.hpp"

namespace tessera::dist::gpu {

namespace {

constexpr int kPackThreads = 256;

// out[i, :] = x[index[i], :] for items of k doubles (the host HaloPlan::pack).
__global__ void gather_rows_kernel(std::int64_t items, std::int64_t k, const std::int64_t* __restrict__ index,
                                   const double* __restrict__ x, double* __restrict__ out) {
  const std::int64_t total = items * k;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t item = i / k;
    out[i] = x[index[item] * k + (i - item * k)];
  }
}

void pack(const DeviceDistMatrix& a, const double* x, std::int64_t k, double* send, cudaStream_t stream) {
  gather_rows(static_cast<std::int64_t>(a.send_local.size()), k, a.send_local.data(), x, send, stream);
}

/// One timing event, destroyed with the scope (a pending event is released once it completes);
/// only made when statistics are asked for. Stream ordering uses the context's persistent event.
class Event {
 public:
  Event() {
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDefault));
  }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { TESSERA_CUDA_CHECK(cudaEventRecord(event_, s)); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

double seconds_between(const Event& begin, const Event& end) {
  float ms = 0;
  TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  return 1e-3 * static_cast<double>(ms);
}

/// Timing events of one product; only created when the caller asked for statistics.
struct PhaseEvents {
  Event exchange_begin, exchange_end;
  Event local_begin, local_end;
  Event nonlocal_begin, nonlocal_end;
};

void record_if(PhaseEvents* events, Event PhaseEvents::*which, cudaStream_t s) {
  if (events) (events->*which).record(s);
}

/// The send and ghost buffers hold k doubles per item. Growth frees the old buffers, which the
/// previous product may still be reading on either stream, so it waits for both first; this
/// happens once per new largest k, never in a steady loop.
void reserve_exchange_buffers(DeviceContext& ctx, DeviceDistMatrix& a, std::int64_t k) {
  const std::size_t sent = static_cast<std::size_t>(a.send_local.size() * k);
  const std::size_t ghosts = static_cast<std::size_t>(a.num_ghosts() * k);
  if (a.send.size() >= sent && a.ghosts.size() >= ghosts) return;
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.exchange()));
  // Allocated (and so freed, stream-ordered) on the compute stream: it is the last to use them
  // in every product (it waits for the exchange before reading the ghosts), so a free ordered
  // there never overtakes a read. Both streams were synchronised above, so the exchange stream
  // may write them at once.
  if (a.send.size() < sent) a.send.allocate(sent, ctx.compute());
  if (a.ghosts.size() < ghosts) a.ghosts.allocate(ghosts, ctx.compute());
  ++a.exchange_generation;
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
}

void check_operands(const DeviceDistMatrix& a, std::int64_t k) {
  TESSERA_REQUIRE_INPUT(a.host != nullptr, "distributed device product on a DeviceDistMatrix without a host matrix");
  TESSERA_REQUIRE_INPUT(k >= 1, "distributed device spmm: X needs at least one column, got k = ", k);
}

/// The peer route's exchange of `a` for k columns, made (collectively: every rank calls the
/// product) on first use and remade for a larger k (at least twice the old capacity, so a sweep
/// over k remaps a few times only). Not inside a CUDA graph capture: mapping memory is not a
/// stream operation, so a captured cycle must have run once eagerly.
PeerHaloExchange& ensure_peer_halo(DeviceContext& ctx, DeviceDistMatrix& a, std::int64_t k) {
  if (a.peer_halo && a.peer_halo->k_capacity() >= k) return *a.peer_halo;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  TESSERA_CUDA_CHECK(cudaStreamIsCapturing(ctx.compute(), &capturing));
  TESSERA_REQUIRE_INPUT(capturing == cudaStreamCaptureStatusNone,
                        "the first product on a matrix with the peer halo route (or a larger k) is being "
                        "captured into a CUDA graph: run it once before capturing");
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.compute()));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(ctx.exchange()));
  const std::int64_t capacity = a.peer_halo ? std::max(k, 2 * a.peer_halo->k_capacity()) : k;
  a.peer_halo.reset();  // unmaps, retires its region; the constructor frees it after a barrier
  a.peer_halo =
      std::make_unique<PeerHaloExchange>(ctx.comm(), a.host->halo.pattern, capacity, ctx.retired_peer_regions());
  ++a.exchange_generation;
  return *a.peer_halo;
}

/// The overlap schedule: the exchange on the exchange stream once x is ready on compute;
/// `local(stream)` meanwhile on compute; then compute waits for the ghosts and runs
/// `nonlocal(stream, ghosts)`, which touches only the rows with ghost columns
/// (row_subset_product.hpp: a full pass over y would cost a quarter of the local block on a 3D
/// grid). The non-local block is skipped when it holds no entries.
/// The exchange is the context's halo route: NCCL (a pack kernel, then grouped send/recv) or
/// peer (one kernel that stores into the neighbours' ghost buffers and waits for its own).
/// Host order matters: the local block is queued right after the pack (or peer) kernel and
/// before the NCCL calls, whose host side (group start/end, send/recv descriptors) takes tens of
/// microseconds; queued after them, the GPU would idle for that long on every product. The
/// exchange stream's priority (DeviceContext) still lets the exchange kernels start ahead of
/// the local block's pending thread blocks.
template <class Local, class Nonlocal>
void overlapped_product(DeviceContext& ctx, DeviceDistMatrix& a, const double* x, std::int64_t k, Local&& local,
                        Nonlocal&& nonlocal, DistStats* stats) {
  check_operands(a, k);
  const cudaStream_t compute = ctx.compute(), exchange = ctx.exchange();
  const bool peer = ctx.halo_route() == HaloRoute::peer;
  if (peer) ensure_peer_halo(ctx, a, k);  // collective: before any rank may skip the exchange
  // A rank that neither sends nor receives takes no part in the (point-to-point) exchange.
  const bool exchanges = a.send_local.size() > 0 || a.num_ghosts() > 0;
  if (exchanges && !peer) reserve_exchange_buffers(ctx, a, k);
  const double* ghosts = peer ? a.peer_halo->ghosts() : a.ghosts.data();
  std::unique_ptr<PhaseEvents> events = stats ? std::make_unique<PhaseEvents>() : nullptr;

  if (exchanges) {
    // x is written on compute by the caller, and the previous product's non-local block may
    // still read the ghosts there: the exchange stream starts after both.
    ctx.exchange_after_compute();
    record_if(events.get(), &PhaseEvents::exchange_begin, exchange);
    if (peer)
      a.peer_halo->exchange(a.send_local.data(), x, k, exchange);
    else
      pack(a, x, k, a.send.data(), exchange);
  }
  record_if(events.get(), &PhaseEvents::local_begin, compute);
  local(compute);
  record_if(events.get(), &PhaseEvents::local_end, compute);
  if (exchanges) {
    if (!peer)
      ctx.transport().start_exchange(a.host->halo.pattern, sizeof(double) * static_cast<std::size_t>(k),
                                     a.send.data(), a.ghosts.data());
    ctx.transport().finish_exchange();  // marks the exchange stream's position for compute
    record_if(events.get(), &PhaseEvents::exchange_end, exchange);
    ctx.compute_after_exchange();
  }
  record_if(events.get(), &PhaseEvents::nonlocal_begin, compute);
  if (a.nonlocal.nnz > 0) nonlocal(compute, ghosts);
  record_if(events.get(), &PhaseEvents::nonlocal_end, compute);

  if (!stats) return;
  TESSERA_CUDA_CHECK(cudaEventSynchronize(events->nonlocal_end.get()));
  if (exchanges) {
    TESSERA_CUDA_CHECK(cudaEventSynchronize(events->exchange_end.get()));
    stats->exchange_seconds += seconds_between(events->exchange_begin, events->exchange_end);
  }
  stats->compute_seconds += seconds_between(events->local_begin, events->local_end) +
                            seconds_between(events->nonlocal_begin, events->nonlocal_end);
  stats->rows += a.owned_rows();
  stats->nnz += a.host->nnz();
  stats->halo_bytes += a.num_ghosts() * k * static_cast<std::int64_t>(sizeof(double));
}

/// The local block's SpMM plan for k columns, remade (with one synchronisation) only when k changes.
void ensure_spmm_plan(DeviceContext& ctx, DeviceDistMatrix& a, std::int64_t k) {
  if (a.local_spmm_plan.k == k) return;
  a.local_spmm_plan = tessera::cuda::make_spmm_plan(a.local, k, tessera::cuda::SpmmAlgorithm::automatic, ctx.compute());
}

}  // namespace

void spmv(DeviceContext& ctx, DeviceDistMatrix& a, double alpha, const double* x, double beta, double* y,
          DistStats* stats) {
  overlapped_product(
      ctx, a, x, 1,
      [&](cudaStream_t s) { tessera::cuda::spmv(a.local_plan, alpha, a.local, x, beta, y, s); },
      [&](cudaStream_t s, const double* ghosts) {
        tessera::cuda::spmv_add_on_rows(a.boundary_rows, alpha, a.nonlocal, ghosts, y, s);
      },
      stats);
}

void residual(DeviceContext& ctx, DeviceDistMatrix& a, const double* x, const double* b, double* r) {
  overlapped_product(
      ctx, a, x, 1,
      [&](cudaStream_t s) {
        if (a.local.rows == a.local.cols) {
          tessera::cuda::residual(a.local_plan, a.local, x, b, r, s);  // one fused pass
        } else {  // a rectangular local block (own column partition): r = b, then r -= A_loc x
          tessera::cuda::copy(a.local.rows, b, r, s);
          tessera::cuda::spmv(a.local_plan, -1.0, a.local, x, 1.0, r, s);
        }
      },
      [&](cudaStream_t s, const double* ghosts) {
        tessera::cuda::spmv_add_on_rows(a.boundary_rows, -1.0, a.nonlocal, ghosts, r, s);
      },
      nullptr);
}

void spmm(DeviceContext& ctx, DeviceDistMatrix& a, const double* x, std::int64_t k, double* y, DistStats* stats) {
  check_operands(a, k);
  if (k == 1) return spmv(ctx, a, 1.0, x, 0.0, y, stats);  // one column: the SpMV kernels and plans
  ensure_spmm_plan(ctx, a, k);
  const auto row_major = tessera::Layout::row_major;
  overlapped_product(
      ctx, a, x, k,
      [&](cudaStream_t s) { tessera::cuda::spmm(a.local_spmm_plan, 1.0, a.local, x, 0.0, y, row_major, s); },
      [&](cudaStream_t s, const double* ghosts) {
        tessera::cuda::spmm_add_on_rows(a.boundary_rows, 1.0, a.nonlocal, ghosts, k, y, s);
      },
      stats);
}

void gather_rows(std::int64_t items, std::int64_t k, const std::int64_t* index, const double* x, double* out,
                 cudaStream_t stream) {
  if (items == 0 || k == 0) return;
  const std::int64_t blocks = std::min<std::int64_t>((items * k + kPackThreads - 1) / kPackThreads, 65535);
  gather_rows_kernel<<<static_cast<int>(blocks), kPackThreads, 0, stream>>>(items, k, index, x, out);
  TESSERA_CHECK_LAUNCH();
}

ReplicatedInputSpmv::ReplicatedInputSpmv(DeviceDistMatrix& a, cudaStream_t stream) : a_(a), stream_(stream) {
  check_operands(a, 1);
  first_col_ = a.host->col_begin();
  ghost_cols_.upload(a.host->ghost_cols, stream);
  ghosts_.allocate(a.host->ghost_cols.size(), stream);
}

void ReplicatedInputSpmv::apply(double alpha, const double* x_whole, double beta, double* y) {
  const cudaStream_t stream = stream_;
  // The same two passes as spmv() (local block, then the boundary rows' ghost columns), with
  // the ghosts gathered on this GPU: the same sums in the same order.
  tessera::cuda::spmv(a_.local_plan, alpha, a_.local, x_whole + first_col_, beta, y, stream);
  if (a_.nonlocal.nnz == 0) return;
  gather_rows(a_.num_ghosts(), 1, ghost_cols_.data(), x_whole, ghosts_.data(), stream);
  tessera::cuda::spmv_add_on_rows(a_.boundary_rows, alpha, a_.nonlocal, ghosts_.data(), y, stream);
}

}  // namespace tessera::dist::gpu
