#include "amg/petsc/pc_single_gpu.hpp"

#include <string>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"

#if TESSERA_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "amg/cuda/device_cycle.hpp"
#include "amg/cuda/device_hierarchy.hpp"
#include "dist/rank_device.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/csr_arrays_upload.hpp"
#include "local/cuda/device_buffer.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/cuda/offload_spgemm.hpp"
#endif

namespace tessera::petsc {

#if TESSERA_HAVE_CUDA

struct PcSingleGpu::Impl {
  cudaStream_t stream = nullptr;
  // Reset in reverse order: the cycle points into the hierarchy; both free stream-ordered.
  std::unique_ptr<amg::gpu::DeviceHierarchy> hierarchy;
  std::unique_ptr<amg::gpu::DeviceAmgPreconditioner> cycle;
  cuda::DeviceBuffer<double> values, r, z;  // re-setup values, the apply's vectors
  bool warmed_up = false;                    // a cycle has run: its kernels are loaded

  void drop() {
    cycle.reset();
    hierarchy.reset();
  }
  /// Runs `step`; on any failure leaves no hierarchy behind, then rethrows.
  template <class Step>
  void or_drop(Step&& step) {
    try {
      step();
    } catch (...) {
      drop();
      throw;
    }
  }
};

PcSingleGpu::PcSingleGpu(const dist::Communicator& comm) : impl_(std::make_unique<Impl>()) {
  TESSERA_REQUIRE_INPUT(comm.size() == 1, "PCTESSERA: the one-GPU hierarchy runs on one rank; this PC has ",
                        comm.size());
  // Streams belong to the device current at their creation: the device first.
  TESSERA_CUDA_CHECK(cudaSetDevice(dist::rank_device(comm).index));
  TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
}

PcSingleGpu::~PcSingleGpu() {
  impl_->drop();
  impl_->values = cuda::DeviceBuffer<double>();
  impl_->r = cuda::DeviceBuffer<double>();
  impl_->z = cuda::DeviceBuffer<double>();
  cudaStreamSynchronize(impl_->stream);  // the buffers above are freed on it; no throw from here
  cudaStreamDestroy(impl_->stream);
}

void PcSingleGpu::setup(const PetscCsrArrays& a, const amg::NearNullSpace& near_null, const amg::AmgOptions& options,
                        const std::string& spgemm) {
  const cuda::OffloadSpgemm engine = cuda::parse_offload_spgemm(spgemm);  // checks the name first
  impl_->drop();  // the old levels go first: the new ones may need their memory
  impl_->or_drop([&] {
    // device_setup copies A into level 0, so this upload is freed on return.
    const cuda::DeviceCsr<double> device_a = cuda::upload(a, "PCTESSERA: A", impl_->stream);
    impl_->hierarchy = std::make_unique<amg::gpu::DeviceHierarchy>(
        amg::gpu::device_setup(device_a, near_null, options, engine, impl_->stream));
  });
}

bool PcSingleGpu::resetup_if_same_pattern(const PetscCsrArrays& a) {
  TESSERA_REQUIRE_INPUT(impl_->hierarchy, "PCTESSERA: a re-setup of a one-GPU hierarchy that was never set up");
  if (!cuda::same_pattern(impl_->hierarchy->levels[0].a, a, impl_->stream)) return false;
  impl_->cycle.reset();  // made for the old values (its interval and coarse factor change)
  impl_->or_drop([&] {
    const auto n = static_cast<std::size_t>(a.nnz());
    if (impl_->values.size() != n) impl_->values.allocate(n, impl_->stream);
    if (n) cuda::copy_to_device(impl_->values.data(), a.values, n * sizeof(double), impl_->stream);
    amg::gpu::device_resetup(*impl_->hierarchy, impl_->values.data());
  });
  return true;
}

void PcSingleGpu::prepare_cycle() {
  TESSERA_REQUIRE_INPUT(impl_->hierarchy, "PCTESSERA: a one-GPU cycle without a hierarchy");
  impl_->or_drop([&] {
    Impl& m = *impl_;
    m.cycle.reset();
    m.cycle = std::make_unique<amg::gpu::DeviceAmgPreconditioner>(*m.hierarchy, m.stream);
    m.r.allocate(static_cast<std::size_t>(m.cycle->rows()), m.stream);
    m.z.allocate(static_cast<std::size_t>(m.cycle->rows()), m.stream);
    if (!m.warmed_up) {
      m.r.fill_bytes(0, m.stream);
      m.cycle->apply(m.r.data(), m.z.data());
      m.warmed_up = true;
    }
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(m.stream));  // an asynchronous failure surfaces here, in PCSetUp
  });
}

bool PcSingleGpu::ready() const { return impl_->hierarchy && impl_->cycle; }

void PcSingleGpu::apply(const std::vector<double>& r, std::vector<double>& z) {
  TESSERA_REQUIRE_INPUT(ready(), "PCTESSERA: the GPU hierarchy was not set up before PCApply");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(r.size()) == impl_->cycle->rows(), "PCTESSERA: a vector of ",
                        r.size(), " entries applied to a hierarchy of ", impl_->cycle->rows(), " rows");
  impl_->r.upload(r, impl_->stream);
  impl_->cycle->apply(impl_->r.data(), impl_->z.data());
  z = impl_->z.download(impl_->stream);
}

amg::HierarchyStats PcSingleGpu::statistics() const {
  return impl_->hierarchy ? amg::gpu::statistics(*impl_->hierarchy) : amg::HierarchyStats{};
}

std::vector<std::string> PcSingleGpu::product_engines() const {
  return impl_->hierarchy ? amg::gpu::product_engines(*impl_->hierarchy) : std::vector<std::string>{};
}

std::int64_t PcSingleGpu::device_bytes() const {
  if (!ready()) return 0;
  // The cycle on a DeviceHierarchy holds plans and level vectors only; the matrices are the hierarchy's.
  return amg::gpu::device_bytes(*impl_->hierarchy) + impl_->cycle->device_bytes();
}

std::string PcSingleGpu::cuda_graph_state() const {
  if (!ready()) return "no cycle (not set up)";
  return impl_->cycle->cuda_graph_state() + " (captured " + std::to_string(impl_->cycle->cuda_graph_captures()) +
         " time(s) since the last setup)";
}

#else  // no CUDA: never chosen (the backend resolves to host); these only say why.

struct PcSingleGpu::Impl {};

PcSingleGpu::PcSingleGpu(const dist::Communicator&) {
  throw InputError("PCTESSERA: the one-GPU hierarchy needs a Tessera build with CUDA");
}
PcSingleGpu::~PcSingleGpu() = default;
void PcSingleGpu::setup(const PetscCsrArrays&, const amg::NearNullSpace&, const amg::AmgOptions&, const std::string&) {}
bool PcSingleGpu::resetup_if_same_pattern(const PetscCsrArrays&) { return false; }
void PcSingleGpu::prepare_cycle() {}
bool PcSingleGpu::ready() const { return false; }
void PcSingleGpu::apply(const std::vector<double>&, std::vector<double>&) {}
amg::HierarchyStats PcSingleGpu::statistics() const { return {}; }
std::vector<std::string> PcSingleGpu::product_engines() const { return {}; }
std::int64_t PcSingleGpu::device_bytes() const { return 0; }
std::string PcSingleGpu::cuda_graph_state() const { return {}; }

#endif

}  // namespace tessera::petsc
