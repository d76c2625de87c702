#pragma once
// PCTESSERA on one rank with the GPU backend: the one-GPU hierarchy (amg::gpu::device_setup),
// built and re-set up entirely on the device, as `tessera-amg --backend gpu` on one rank does.
// The distributed hierarchy (amg::DistAmg with the GPU setup backend, pc_device_backend.hpp)
// runs its products' symbolic phases, P_tent and the smoother coefficients on the host and then
// uploads the levels: on one H200 at 7.1M rows its setup took 0.9-1.3 s and a re-setup 0.4-0.6 s,
// the one-GPU setup 0.105 s and its re-setup 0.050 s (docs/performance.md, thirty-third
// session). One rank has no halo to exchange, so nothing of the distributed path is needed there;
// `-pc_tessera_hierarchy distributed` keeps it (for comparison).
// The PETSc vectors are host vectors (see pc_device_backend.hpp): r goes down and z comes up
// once per apply. In a build without CUDA every member throws InputError (never chosen there).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "amg/hierarchy_stats.hpp"
#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "amg/petsc/whole_matrix_arrays.hpp"

namespace tessera::dist {
class Communicator;
}

namespace tessera::petsc {

class PcSingleGpu {
 public:
  /// Makes the rank's GPU (dist::rank_device) current and creates the stream the hierarchy and
  /// every apply run on. `comm` must have one rank.
  explicit PcSingleGpu(const dist::Communicator& comm);
  ~PcSingleGpu();
  PcSingleGpu(const PcSingleGpu&) = delete;
  PcSingleGpu& operator=(const PcSingleGpu&) = delete;

  /// Uploads `a`'s arrays as they are (cuda::upload(CsrArrays), which checks them first) and
  /// builds the hierarchy on the device with the products on `spgemm` (tile, cusparse, hash or
  /// auto). InputError as device_setup: a non-finite entry, a missing or non-positive diagonal
  /// (the row named), a near-null space of the wrong size. On any failure no hierarchy is left.
  /// prepare_cycle() follows.
  void setup(const PetscCsrArrays& a, const amg::NearNullSpace& near_null, const amg::AmgOptions& options,
             const std::string& spgemm);
  /// If `a` has the pattern setup() saw (compared on the device): its values uploaded as they
  /// are, every symbolic product kept, values recomputed there (amg::gpu::device_resetup), and
  /// true. False, with the hierarchy and its cycle untouched, if the pattern differs. On a
  /// failure the hierarchy is dropped, so a half-refreshed one is never applied. prepare_cycle()
  /// follows a true.
  bool resetup_if_same_pattern(const PetscCsrArrays& a);
  /// The cycle on the hierarchy as (re)set up; the first one runs once on zeros, so that the
  /// first launch of each of its kernels (CUDA loads modules lazily) is paid here, in PCSetUp,
  /// not in the first PCApply (the distributed path's upload does the same: connect_peers).
  void prepare_cycle();
  /// Set up and its cycle prepared.
  bool ready() const;

  /// z = one cycle applied to r (host vectors of the operator's rows).
  void apply(const std::vector<double>& r, std::vector<double>& z);

  amg::HierarchyStats statistics() const;
  /// Per level with a transfer: the SpGEMM engine of each product ("A*P_tent: tile, ...").
  std::vector<std::string> product_engines() const;
  /// Device bytes held by the hierarchy (with its kept plans) and the cycle's vectors.
  std::int64_t device_bytes() const;
  /// The cycle's CUDA graph, in DeviceAmgPreconditioner::cuda_graph_state's words ("replayed",
  /// "not yet captured", ...), and how many times it was captured: what -ksp_view reports.
  std::string cuda_graph_state() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::petsc
