#include "amg/petsc/pc_device_backend.hpp"

#include <string>

#include "amg/dist/dist_amg.hpp"
#include "local/core/error.hpp"

#if TESSERA_HAVE_CUDA
#include "amg/cuda/device_setup_backend.hpp"
#include "amg/cuda/dist_device_amg.hpp"
#include "amg/cuda/dist_device_transfer.hpp"
#include "dist/collective_call.hpp"
#include "dist/cuda/device_context.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_buffer.hpp"
#endif

namespace tessera::petsc {

#if TESSERA_HAVE_CUDA

struct PcDeviceBackend::Impl {
  explicit Impl(const dist::Communicator& comm) : context(comm) {}
  // Declaration order is destruction order in reverse: the preconditioner and the work
  // vectors (freed stream-ordered on the context's compute stream) go before the context.
  dist::gpu::DeviceContext context;
  std::unique_ptr<amg::gpu::DistDeviceAmgPreconditioner> cycle;
  cuda::DeviceBuffer<double> r, z;
};

amg::DistSetupBackend PcDeviceBackend::setup_backend(const std::string& spgemm, bool transfer_on_device) {
  amg::DistSetupBackend backend = amg::gpu::device_setup_backend(impl_->context, cuda::parse_offload_spgemm(spgemm));
  if (transfer_on_device) backend.transfer_on_device = amg::gpu::dist_device_transfer(impl_->context);
  return backend;
}

PcDeviceBackend::PcDeviceBackend(const dist::Communicator& comm) : impl_(std::make_unique<Impl>(comm)) {}
PcDeviceBackend::~PcDeviceBackend() = default;

void PcDeviceBackend::upload(const amg::DistAmg& amg) {
  impl_->cycle.reset();  // the old levels go first: the new ones may need their memory
  // Collective, and throws the same error on every rank if one rank's upload fails.
  impl_->cycle = std::make_unique<amg::gpu::DistDeviceAmgPreconditioner>(impl_->context, amg.hierarchy());
  const cudaStream_t stream = impl_->context.compute();
  const std::size_t n = static_cast<std::size_t>(impl_->cycle->rows());
  try {
    // The work vectors can fail on one rank alone: agree before the cycle's first exchange.
    dist::call_collectively(impl_->context.comm(), "PCTESSERA: GPU work vectors", [&] {
      impl_->r.allocate(n, stream);
      impl_->z.allocate(n, stream);
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
  } catch (...) {
    impl_->cycle.reset();  // every rank alike: no half-set-up preconditioner is left behind
    throw;
  }
  impl_->cycle->connect_peers();  // NCCL's lazy peer connections: paid in PCSetUp
}

void PcDeviceBackend::refresh(const amg::DistAmg& amg) {
  if (!impl_->cycle) return upload(amg);
  try {
    impl_->cycle->refresh_values();  // collective; the same error on every rank
  } catch (...) {
    impl_->cycle.reset();  // half refreshed: no stale hierarchy is applied later
    throw;
  }
}

void PcDeviceBackend::release() { impl_->cycle.reset(); }

void PcDeviceBackend::apply(const std::vector<double>& r, std::vector<double>& z) {
  TESSERA_REQUIRE_INPUT(impl_->cycle, "PCTESSERA: the GPU hierarchy was not set up before PCApply");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(r.size()) == impl_->cycle->rows(), "PCTESSERA: a vector of ",
                        r.size(), " local entries applied to a hierarchy of ", impl_->cycle->rows(), " local rows");
  const cudaStream_t stream = impl_->context.compute();
  impl_->r.upload(r, stream);
  if (impl_->z.size() != r.size()) impl_->z.allocate(r.size(), stream);
  impl_->cycle->apply(impl_->r.data(), impl_->z.data());
  z = impl_->z.download(stream);
}

std::int64_t PcDeviceBackend::device_bytes() const { return impl_->cycle ? impl_->cycle->device_bytes() : 0; }

std::string PcDeviceBackend::cycle_state() const {
  if (!impl_->cycle) return "no cycle (not uploaded)";
  return "cycle as a CUDA graph: " + impl_->cycle->cuda_graph_state() + " (captured " +
         std::to_string(impl_->cycle->cuda_graph_captures()) + " time(s) since the last upload); halo route: " +
         dist::gpu::halo_route_name(impl_->context.halo_route()) + "; device transport: " +
         impl_->context.transport().name();
}

#else  // no CUDA: the backend is never resolved to gpu; these only say why.

struct PcDeviceBackend::Impl {};

amg::DistSetupBackend PcDeviceBackend::setup_backend(const std::string&, bool) {
  throw InputError("PCTESSERA: -pc_tessera_backend gpu needs a Tessera build with CUDA");
}

PcDeviceBackend::PcDeviceBackend(const dist::Communicator&) {
  throw InputError("PCTESSERA: -pc_tessera_backend gpu needs a Tessera build with CUDA");
}
PcDeviceBackend::~PcDeviceBackend() = default;
void PcDeviceBackend::upload(const amg::DistAmg&) {}
void PcDeviceBackend::refresh(const amg::DistAmg&) {}
void PcDeviceBackend::release() {}
void PcDeviceBackend::apply(const std::vector<double>&, std::vector<double>&) {}
std::int64_t PcDeviceBackend::device_bytes() const { return 0; }
std::string PcDeviceBackend::cycle_state() const { return {}; }

#endif

}  // namespace tessera::petsc
