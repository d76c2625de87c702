#pragma once
// The coarse levels of a distributed device cycle, replicated: levels [first, end) of a
// DistHierarchy gathered whole onto every rank's GPU once, at construction (on the GPUs from the
// setup's device copies, dist/cuda/device_whole_matrix.hpp; else on the host through MPI and
// uploaded), where a single-GPU DeviceCycle runs them with no communication at all.
// A visit allgathers the level-`first` rhs (one NCCL call), cycles, and keeps the rank's rows.
//
// Why: a distributed level costs about six halo exchanges a V-cycle visit (smoothing,
// residual, restriction, prolongation), each tens of microseconds on NVLink however small the
// level; below a few million nonzeros the whole level's work on one GPU is shorter than that
// (the redundancy of PETSc's PCREDUNDANT, taken all the way down: every rank holds the same
// coarse levels, so nothing is sent back). Measured on 4 H200s (docs/performance.md, fifth
// session): 7% off an iteration at poisson3d:96 per GPU (1.03 -> 0.96 ms); replicating a
// 25M-nonzero level made it 46% slower, hence the threshold in nonzeros, not rows: coarse
// operators of 27-point or elasticity problems carry 30-100 nonzeros a row. W-cycles are not
// replicated (the distributed cycle visits its last level once).
// The operators, smoothers and cycle are the same as those of the distributed levels, so the
// preconditioner is unchanged up to rounding (rows are summed in another order).
#include <cstdint>
#include <memory>
#include <vector>

#include "amg/cuda/device_coarse_solver.hpp"
#include "amg/cuda/device_operator.hpp"
#include "amg/cuda/device_vcycle.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "dist/communicator.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/cuda/device_spmv.hpp"

namespace tessera::amg::gpu {

/// Global nonzeros at or below which a level (other than the finest) is replicated by default
/// on more than one rank.
inline constexpr std::int64_t kReplicateBelowNonzeros = 4'000'000;
/// The default of first_replicated_level's max_nnz: kReplicateBelowNonzeros on more than one
/// rank, none on one. One rank has no exchanges to save: the replicated copy would only add its
/// gather and its memory beside the setup's copies (when the gather went through the host, it
/// cost 0.02-0.07 s an upload at poisson3d:192, poisson3d27:128 and elasticity3d:48 on an H100
/// for the same solve times; docs/performance.md, forty-eighth session).
inline constexpr std::int64_t kReplicateByDefault = -1;

/// Collective (MPI): the first level of `h` (>= 1) with at most `max_nnz` nonzeros over all
/// ranks, or h.levels.size() when none is (max_nnz == 0 turns replication off; <0 is
/// kReplicateByDefault). W-cycles are never replicated (a replicated tail would be visited once
/// where the W-cycle visits twice).
std::size_t first_replicated_level(const dist::Communicator& comm, const DistHierarchy& h, std::int64_t max_nnz);

class ReplicatedLevels {
 public:
  /// Collective (MPI and the device transport): gathers levels [first, end) of `h` onto every
  /// rank's GPU, on ctx.compute(): each operator from the setup's device copy where every rank
  /// holds a current one, else through the host. `coarse` solves the coarsest level on whole
  /// vectors (no communication); empty when it is smoothed. Keeps a reference to `ctx`.
  ReplicatedLevels(dist::gpu::DeviceContext& ctx, const DistHierarchy& h, std::size_t first, DeviceCoarseSolve coarse);
  ReplicatedLevels(const ReplicatedLevels&) = delete;
  ReplicatedLevels& operator=(const ReplicatedLevels&) = delete;

  /// Collective (MPI and the device transport): after a re-setup of `h` (same patterns, new
  /// values), gathers its levels [first, end) again, only their values, smoother diagonals and
  /// coefficients (each operator's values on the GPUs where every rank holds a current copy);
  /// no plan is rebuilt and no buffer moves. InputError on every rank if a level's pattern
  /// size changed. The coarsest factor is the owner's (its DeviceCoarseSolve) to refresh.
  void refresh_values(const DistHierarchy& h);
  /// Collective (NCCL): x = M_tail^-1 b on the rank's owned rows of level `first`.
  void solve(const double* b, double* x);
  /// All of level `first`'s solution of the last solve() (every rank holds it), and the owned
  /// slice that solve() wrote it to.
  const double* whole_solution() const { return whole_x_.data(); }
  const double* last_solution() const { return last_x_; }
  /// Level `first`'s rows per rank: rank r owns [offsets()[r], offsets()[r+1]) of the whole vectors.
  const std::vector<std::int64_t>& offsets() const { return offsets_; }

  std::size_t first() const { return first_; }
  std::int64_t device_bytes() const;
  /// How many of the replicated operators (A, P, R of each level) the last gather or
  /// refresh_values() moved on the GPUs from the setup's copies rather than through the host.
  int gathered_on_device() const { return gathered_on_device_; }

 private:
  struct Level {
    tessera::cuda::DeviceCsr<double> a, p, r;
    tessera::cuda::SpmvPlan a_plan, p_plan, r_plan;
    tessera::cuda::DeviceBuffer<double> inv_diag;
    std::unique_ptr<CsrDeviceOperator> a_op, p_op, r_op;
  };
  // The setup's device copies of the replicated operators, in gather order.
  using DeviceCopies = std::vector<std::shared_ptr<dist::gpu::DeviceDistMatrix>>;
  static DeviceCopies agreed_device_copies(const dist::Communicator& comm, const DistHierarchy& h, std::size_t first);
  class WholeOperator;  // one operator gathered whole: on the GPUs, or on the host and uploaded
  struct Gathered;      // a level's operators, smoother diagonal and coefficients
  static Gathered gather(const dist::Communicator& comm, const DistHierarchy& h, std::size_t l, DeviceCopies& copies,
                         std::size_t& next);
  static void plan(const Gathered& g, cudaStream_t stream, Level& v, DeviceCycleLevel& c);
  class WholeValues;      // one operator's new values whole, in the order its gather put them
  struct GatheredValues;  // a level's new values, smoother diagonal and coefficients
  static GatheredValues gather_values(const dist::Communicator& comm, const DistHierarchy& h, std::size_t l,
                                      DeviceCopies& copies, std::size_t& next);
  static void write_values(const GatheredValues& g, dist::gpu::DeviceContext& ctx, Level& v);

  dist::gpu::DeviceContext& ctx_;
  std::size_t first_;
  std::vector<Level> levels_;  // sized once: the operators point into it
  DeviceCycle cycle_;
  std::vector<std::int64_t> offsets_;  // level first's rows per rank: rank r owns [offsets_[r], offsets_[r+1])
  tessera::cuda::DeviceBuffer<double> whole_b_, whole_x_;
  const double* last_x_ = nullptr;
  int gathered_on_device_ = 0;
};

/// The prolongation into the last distributed level, x_f += P x_c, from the replicated levels'
/// whole solution: every rank already holds all of x_c, so P's ghost values are gathered on the
/// GPU (dist::gpu::ReplicatedInputSpmv) instead of brought by a halo exchange -- one exchange
/// fewer per cycle. Valid only for x = levels.last_solution() (the cycle prolongates right
/// after the visit); another x is a logic error (DeviceError), not a silent wrong product.
class ReplicatedProlongation final : public DeviceOperator {
 public:
  /// Keeps references to `ctx`, `p` and `levels`, which must outlive it.
  ReplicatedProlongation(dist::gpu::DeviceContext& ctx, dist::gpu::DeviceDistMatrix& p, const ReplicatedLevels& levels);

  std::int64_t rows() const override { return p_.owned_rows(); }
  std::int64_t cols() const override { return p_.owned_cols(); }
  void apply(double alpha, const double* x, double beta, double* y) override;
  void residual(const double* x, const double* b, double* r) override;
  double dot(std::int64_t n, const double* x, const double* y) override { return ctx_.dot(n, x, y); }
  void dot_into(std::int64_t n, const double* x, const double* y, double* result) override {
    ctx_.dot_into(n, x, y, result);
  }
  void dots_into(std::int64_t n, const double* vectors, std::int64_t stride, int count, const double* w,
                 double* results) override {
    ctx_.dots_into(n, vectors, stride, count, w, results);
  }
  cudaStream_t stream() const override { return ctx_.compute(); }
  std::int64_t bytes() const { return spmv_.bytes(); }

 private:
  dist::gpu::DeviceContext& ctx_;
  dist::gpu::DeviceDistMatrix& p_;
  const ReplicatedLevels& levels_;
  dist::gpu::ReplicatedInputSpmv spmv_;
};

}  // namespace tessera::amg::gpu
