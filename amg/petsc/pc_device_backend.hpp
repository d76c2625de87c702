#pragma once
// The GPU backend of PCTESSERA: after a setup the DistAmg hierarchy is uploaded to the rank's
// GPU (amg::gpu::DistDeviceAmgPreconditioner: A, P, R per level, NCCL halo exchanges), after a
// re-setup with the same pattern only its values are sent again, and each PCApply runs one
// cycle there. The PETSc vectors this plugin meets are host vectors
// (Debian's PETSc has no CUDA), so the owned entries of r go down and those of z come up once
// per apply; a CUDA-enabled PETSc would hand VecCUDAGetArrayRead/Write pointers to apply_device
// instead (not built here: no such PETSc to compile and test against).
// In a build without CUDA every member throws InputError (the backend is never chosen there).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "amg/dist/dist_setup_backend.hpp"

namespace tessera::dist {
class Communicator;
}
namespace tessera::amg {
class DistAmg;
}

namespace tessera::petsc {

class PcDeviceBackend {
 public:
  /// The setup on the ranks' GPUs (amg::gpu::device_setup_backend): products on the SpGEMM
  /// named `spgemm`, graph phases, eigenvalue estimates, and the products' reads of A from the
  /// levels' device copies, all on this backend's context and compute stream. The copies of A they leave in the hierarchy's
  /// levels (shared with the uploaded cycle) are freed there, so a DistAmg set up with them must
  /// be destroyed before this backend, and must not be set up again after it is gone.
  /// `transfer_on_device`: from the second re-setup on, each level's transfer (P, R, A_c) is
  /// recomputed on the GPUs (amg::gpu::dist_device_transfer; faster re-setups, several times the
  /// device memory: see its header).
  amg::DistSetupBackend setup_backend(const std::string& spgemm, bool transfer_on_device = false);

  /// Collective: the rank's GPU and its device transport (dist::gpu::DeviceContext; once per PC).
  explicit PcDeviceBackend(const dist::Communicator& comm);
  ~PcDeviceBackend();
  PcDeviceBackend(const PcDeviceBackend&) = delete;
  PcDeviceBackend& operator=(const PcDeviceBackend&) = delete;

  /// Collective: (re)uploads the hierarchy of `amg`, which must outlive the next upload.
  void upload(const amg::DistAmg& amg);
  /// Collective: after amg.resetup() (same patterns, new values) re-sends the values into the
  /// hierarchy upload() made from `amg` (DistDeviceAmgPreconditioner::refresh_values: no plan
  /// rebuilt, no NCCL connection remade); uploads it when none is. On a failure the uploaded
  /// hierarchy is dropped on every rank and the error rethrown.
  void refresh(const amg::DistAmg& amg);
  /// Drops the uploaded hierarchy (before the DistAmg it was made from goes away).
  void release();
  /// Collective: z = one cycle applied to r (owned entries, host vectors).
  void apply(const std::vector<double>& r, std::vector<double>& z);
  /// This rank's device bytes held by the uploaded hierarchy.
  std::int64_t device_bytes() const;
  /// The cycle's CUDA graph in DistDeviceAmgPreconditioner::cuda_graph_state's words, how many
  /// times it was captured, the halo route and the device transport, as tessera-amg prints them:
  /// what -ksp_view reports.
  std::string cycle_state() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::petsc
