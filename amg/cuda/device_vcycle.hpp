#pragma once
// DeviceCycle: amg/cycle.cpp's V/W cycle with amg/smoother.cpp's Chebyshev or l1-Jacobi steps,
// written once over DeviceOperators so that the single-GPU preconditioner (device_cycle.hpp)
// and the distributed one (dist_device_amg.hpp) share it. Every vector lives on the device:
// fused residuals, restriction y = R r, prolongation y = P x_c + y (beta = 1: no temporary),
// the smoothers' D^-1 r updates as one diagonal axpby. Same operations in the same order as the
// host cycles; only the summation order inside a row differs, so results agree to rounding.
//
// The coarsest level, when solved directly, calls back (DeviceCoarseSolve) with its device
// rhs and solution: where and how it is solved is the owner's business (host dense factor on
// one GPU; the redundant allgathered dense solve of DistHierarchy on many ranks).
// With operators of a distributed hierarchy every step is collective; the control flow depends
// only on global data (level count, cycle kind, smoother steps), so all ranks stay in step.
#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "amg/cuda/device_operator.hpp"
#include "amg/options.hpp"
#include "amg/smoother.hpp"
#include "local/cuda/device_buffer.hpp"

namespace tessera::amg::gpu {

/// One level as the cycle sees it; the owner keeps the operators and inv_diag alive.
struct DeviceCycleLevel {
  DeviceOperator* a = nullptr;
  DeviceOperator* p = nullptr;  // coarse -> this level; null on the coarsest
  DeviceOperator* r = nullptr;  // this level -> coarse (R = P^T); null on the coarsest
  const double* inv_diag = nullptr;  // device, a->rows() entries; null if never smoothed
  Smoother smoother;                 // kind, interval, steps (its host inv_diag is not used)
};

/// x = A_c^-1 b on the coarsest level's device vectors (owned entries).
using DeviceCoarseSolve = std::function<void(const double* b, double* x)>;

class DeviceCycle {
 public:
  DeviceCycle() = default;
  /// `coarse` empty: the coarsest level is smoothed instead. InputError for a level that must
  /// be smoothed and has no inv_diag, or transfer operators of the wrong shape.
  DeviceCycle(std::vector<DeviceCycleLevel> levels, CycleKind kind, DeviceCoarseSolve coarse);

  /// z = M^-1 r on device vectors of rows() entries (z may alias nothing of r).
  void apply(const double* r, double* z);

  /// A re-setup's coefficients for level `l` (its Chebyshev interval): the kind and the steps
  /// are the options' and must not change (InputError). The level's inv_diag is refreshed in
  /// place by its owner. A CUDA graph of apply() holds the old coefficients: capture it again.
  void set_smoother(std::size_t l, const Smoother& s);

  std::int64_t rows() const { return levels_.empty() ? 0 : levels_[0].a->rows(); }
  /// Device bytes of the level vectors (b, x, residual, direction per level).
  std::int64_t vector_bytes() const;

 private:
  struct Work {
    tessera::cuda::DeviceBuffer<double> b, x, res, d;
  };
  void cycle(std::size_t level, bool x_is_zero);
  void smooth(std::size_t level, bool x_is_zero);
  void chebyshev(const DeviceCycleLevel& v, Work& w, bool x_is_zero);
  void l1_jacobi(const DeviceCycleLevel& v, Work& w, bool x_is_zero);

  std::vector<DeviceCycleLevel> levels_;
  std::vector<Work> work_;
  CycleKind kind_ = CycleKind::v;
  DeviceCoarseSolve coarse_;
};

}  // namespace tessera::amg::gpu
