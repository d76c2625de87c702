#pragma once
// The distributed AMG solve phase on GPUs, one rank per GPU: a DistHierarchy set up on the
// host (amg::DistAmg) is uploaded level by level -- A, P and R = P^T as
// dist::gpu::DeviceDistMatrix, the smoother's diagonal; A is not uploaded again where the
// setup's device phases left a current copy of it in the level (DistLevel::device_a), which
// the preconditioner then shares -- and the shared device cycle
// (device_vcycle.hpp) runs on DistDeviceOperators: every product a device SpMV with its NCCL
// halo exchange, the same V/W cycle and smoothers as the single-GPU preconditioner and as
// amg/dist/dist_cycle.cpp. The coarsest level's direct solve is redundant on every GPU, as
// DistHierarchy's is on every host: at construction each rank factors the gathered coarsest
// operator (DistHierarchy::coarse_operator) with DeviceCoarseSolver (cuSOLVER); each visit
// allgathers the owned rhs through NCCL on the exchange stream, solves on the compute stream
// and keeps the rank's rows -- no host synchronisation, no MPI. Where cuSOLVER cannot factor
// it on some rank (DeviceCoarseSolver's host fallback: singular to working precision), every
// rank keeps DistHierarchy's host solve (rhs down, owned solution up through MPI), whose
// factor the GPU setup defers to that first use (DistSetupBackend::host_coarse_factor).
// Coarse levels of at most `replicate_nnz` nonzeros are not cycled across ranks but replicated
// on every GPU (replicated_levels.hpp; by default on more than one rank only): one allgather a
// cycle instead of six halo exchanges a level; the coarsest direct solve is then part of them,
// and the prolongation out of them gathers its ghosts from the replicated solution instead of
// exchanging them.
// dist_device_pcg is the shared device PCG on the distributed operator.
#include <memory>
#include <string>
#include <vector>

#include "amg/cuda/device_coarse_solver.hpp"
#include "amg/cuda/device_operator.hpp"
#include "amg/cuda/device_pcg.hpp"
#include "amg/cuda/device_vcycle.hpp"
#include "amg/cuda/replicated_levels.hpp"
#include "amg/cuda/timed_operator.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "local/cuda/stream_graph.hpp"

namespace tessera::amg::gpu {

class DistDeviceAmgPreconditioner {
 public:
  /// Collective. Uploads this rank's parts of every level of `h`; a failure on any rank (out
  /// of device memory) throws the same error on every rank. Keeps references to `ctx` and `h`
  /// (the coarse solve and the DeviceDistMatrix plans): both must outlive it. After a
  /// re-setup of `h` call refresh_values() before the next apply (a re-setup refreshes the
  /// shared copies of A in place, so it must not be applied across one without). Levels from
  /// first_replicated_level(comm, h, replicate_nnz) on are replicated (0: none).
  DistDeviceAmgPreconditioner(dist::gpu::DeviceContext& ctx, const DistHierarchy& h,
                              std::int64_t replicate_nnz = kReplicateByDefault);
  DistDeviceAmgPreconditioner(const DistDeviceAmgPreconditioner&) = delete;
  DistDeviceAmgPreconditioner& operator=(const DistDeviceAmgPreconditioner&) = delete;

  /// Collective. After DistHierarchy::resetup of the hierarchy it was made from (same patterns,
  /// new values): re-sends only values -- each distributed level's P, R, smoother diagonal and A
  /// (unless A is the setup's shared copy, which the re-setup's device phases refreshed), the
  /// smoothers' coefficients, the replicated levels' values -- and factors the coarsest level
  /// again. No plan is rebuilt and no operator moves, so no NCCL connection is remade; a
  /// captured CUDA graph (it holds the old coefficients) is dropped and captured again by the
  /// applies that follow. The same InputError on every rank if a level's pattern changed (a new
  /// setup needs a new preconditioner), or DeviceError if a rank fails; after either, build a
  /// new one.
  void refresh_values();

  /// Collective. z = M^-1 r on device vectors of rows() (owned) entries, ordered on ctx.compute().
  /// The second call in a row on the same two vectors (a solver's loop) captures the cycle
  /// into a CUDA graph on every rank, and later calls on them replay it: one launch instead of
  /// one per kernel and per NCCL call (whose host side takes tens of microseconds each). If some rank cannot capture, none replays.
  /// Replays and the solver's eager NCCL calls (its dot products) share one communicator,
  /// which NCCL allows by default (NCCL_GRAPH_MIXING_SUPPORT=1; do not set it to 0).
  void apply(const double* r, double* z);
  /// Collective in effect (call it alike on every rank): off runs every step from the host.
  void set_cuda_graph(bool on);
  /// "replayed" (a graph runs the cycle), "not yet captured", "off" or why capture failed.
  std::string cuda_graph_state() const;
  /// How many times the cycle was captured (again when the vectors or exchange buffers change).
  std::int64_t cuda_graph_captures() const { return graph_captures_; }

  /// One timed part of the cycle: its products' device time summed over the applies since
  /// enable_timeline() (timed_operator.hpp says what a section includes).
  struct TimelineEntry {
    std::string part;  // e.g. "level 0 A", "level 0 R", "level 0 P", "levels 2- replicated"
    std::int64_t calls = 0;
    double seconds = 0;
    // A part of the entry before it (the coarsest solve inside the replicated levels).
    bool within_previous = false;
  };
  /// Call alike on every rank, before the applies to time: from now on each distributed level's
  /// A, R and P products and the replicated levels' visit are timed with CUDA events, and the
  /// cycle runs without a CUDA graph (the timeline is of eager launches; set_cuda_graph(true)
  /// no longer turns it on).
  void enable_timeline();
  /// This rank's timeline so far (synchronises); empty without enable_timeline().
  std::vector<TimelineEntry> timeline();

  std::int64_t rows() const { return cycle_.rows(); }
  /// Collective. One cycle and one dot on zeros, synchronised: NCCL connects a peer pair at its
  /// first send/recv (seconds on some machines), so a first setup pays that here, not inside
  /// the first solve it would otherwise distort.
  void connect_peers();
  /// Level 0's operator on the device, A itself: a solver's products use it rather than a
  /// second upload of A. Valid as long as this preconditioner.
  dist::gpu::DeviceDistMatrix& fine_operator() { return *levels_.front().a; }
  /// Level l's P and R on the device (null on the last distributed level), for tests.
  const dist::gpu::DeviceDistMatrix* prolongator(std::size_t l) const { return levels_.at(l).p.get(); }
  const dist::gpu::DeviceDistMatrix* restriction(std::size_t l) const { return levels_.at(l).r.get(); }
  /// This rank's device bytes: the uploaded levels, their exchange buffers, the level vectors,
  /// the coarse factor and its gathered vectors.
  std::int64_t device_bytes() const;
  /// True when the coarsest level is solved on the GPUs (the same on every rank).
  bool coarse_on_device() const { return coarse_on_device_; }
  /// The first level replicated on every GPU; levels().size() of the hierarchy when none is.
  std::size_t first_replicated() const { return first_replicated_; }
  /// How many replicated operators were gathered on the GPUs from the setup's copies
  /// (ReplicatedLevels::gathered_on_device); 0 when none is replicated.
  int replicated_gathered_on_device() const {
    return replicated_levels_ ? replicated_levels_->gathered_on_device() : 0;
  }
  /// How the coarsest level is solved: DeviceCoarseSolver::method() on the GPUs, the host
  /// solver's method with " (host, DistHierarchy)", or "smoothed" (no direct solve).
  std::string coarse_method() const;

 private:
  struct DeviceLevel {
    std::shared_ptr<dist::gpu::DeviceDistMatrix> a;  // the setup's copy (DistLevel::device_a) if current
    std::shared_ptr<dist::gpu::DeviceDistMatrix> p, r;  // the setup's copies (device_p, device_r) if current
    tessera::cuda::DeviceBuffer<double> inv_diag;
    std::unique_ptr<DeviceOperator> a_op, p_op, r_op;
  };
  void upload_levels();  // rank-local: the constructor agrees on its outcome
  bool replicated() const { return first_replicated_ < h_.levels.size(); }
  std::size_t distributed_levels() const { return replicated() ? first_replicated_ + 1 : h_.levels.size(); }
  void upload_level(std::size_t l, DeviceCycleLevel& c);
  void refresh_level(std::size_t l);  // rank-local, like upload_level
  void fill_smoother_diagonal(const DistLevel& host, tessera::cuda::DeviceBuffer<double>& to);
  bool smoothed_on_device(std::size_t l) const;  // whether level l's smoother diagonal is uploaded
  void factor_coarse_on_device();  // rank-local, like upload_levels
  void choose_coarse_path();       // collective: one path on every rank
  void coarse_solve(const double* b, double* x);
  void coarse_solve_on_device(const double* b, double* x);
  void coarse_solve_on_host(const double* b, double* x);
  void capture_cycle(const double* r, double* z);  // collective
  std::uint64_t exchange_generation() const;        // sum over the levels' DeviceDistMatrix
  void replicated_coarse_solve(const double* b, double* x);  // whole vectors, no communication

  dist::gpu::DeviceContext& ctx_;
  const DistHierarchy& h_;
  std::size_t hierarchy_levels_;     // h_.levels.size() at the upload (a re-setup keeps it)
  std::vector<DeviceLevel> levels_;  // sized once: the operators point into it
  std::vector<DeviceCycleLevel> cycle_levels_;  // cycle_'s untimed parts (enable_timeline wraps them)
  DeviceCoarseSolve cycle_coarse_;
  // enable_timeline(): wrappers of levels_' operators (with their names) and of the coarse
  // visit; declared before cycle_, which refers to them, so they outlive it.
  bool timeline_ = false;
  std::vector<std::unique_ptr<TimedOperator>> timed_;
  std::vector<std::string> timed_parts_;
  std::unique_ptr<StreamTimer> coarse_timer_;
  std::unique_ptr<StreamTimer> replicated_coarse_timer_;  // the coarsest solve within the replicated levels
  DeviceCycle cycle_;
  std::size_t first_replicated_;
  std::unique_ptr<ReplicatedLevels> replicated_levels_;  // levels [first_replicated_, end), if any
  const ReplicatedProlongation* replicated_prolongation_ = nullptr;  // P into the last distributed level
  // CUDA graph of the cycle for one pair of vectors (graph_r_, graph_z_) and the exchange
  // buffers of exchange_generation() at capture (graph_ itself is the last member: destroyed
  // first, before the buffers its nodes refer to).
  bool graph_wanted_ = true;
  std::string graph_failure_;  // why capture failed on some rank ("" if it did not)
  const double* graph_r_ = nullptr;
  double* graph_z_ = nullptr;
  std::uint64_t graph_generation_ = 0;
  std::uint64_t last_generation_ = ~std::uint64_t(0);  // exchange_generation() after the last eager apply
  std::int64_t graph_captures_ = 0;
  const double* last_r_ = nullptr;  // the previous apply's vectors
  double* last_z_ = nullptr;
  // Device coarse solve: the factor, the coarsest level's row offsets per rank (offsets of the
  // gathered vectors), and the gathered rhs / solution (all coarse rows).
  bool coarse_on_device_ = false;
  DeviceCoarseSolver device_coarse_;
  std::vector<std::int64_t> coarse_offsets_;
  tessera::cuda::DeviceBuffer<double> whole_b_, whole_x_;
  Vector coarse_b_, coarse_x_;  // host staging of the host coarse solve (owned rows)
  Vector whole_host_b_, whole_host_x_;  // host staging of the replicated levels' host coarse solve
  tessera::cuda::StreamGraph graph_;
};

/// Collective PCG on the distributed device operator: b and x are device vectors of
/// a.owned_rows() entries; `m` e.g. DistDeviceAmgPreconditioner::apply. InputError on every
/// rank if A's columns are not partitioned like its rows, or for bad options / non-finite data.
/// The relative residual reported is recomputed from x with a distributed product.
SolveResult dist_device_pcg(dist::gpu::DeviceContext& ctx, dist::gpu::DeviceDistMatrix& a, const double* b, double* x,
                            const DevicePreconditioner& m, const KrylovOptions& options);

/// Collective flexible GMRES (device_fgmres.hpp) on the distributed device operator, for a
/// non-symmetric A; the same contract as dist_device_pcg. Its workspace is allocated on every
/// rank or on none (InputError on every rank when one runs out of device memory).
SolveResult dist_device_fgmres(dist::gpu::DeviceContext& ctx, dist::gpu::DeviceDistMatrix& a, const double* b,
                               double* x, const DevicePreconditioner& m, const KrylovOptions& options);

}  // namespace tessera::amg::gpu
