#include "local/core/backend.hpp"

#include "local/core/error.hpp"
#if defined(TESSERA_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace tessera {

namespace {
std::string gpu_unavailable_reason() {
#if defined(TESSERA_HAVE_CUDA)
  int n = 0;
  const cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess) return std::string("CUDA reports: ") + cudaGetErrorString(status);
  if (n == 0) return "no CUDA device is visible";
  return "";
#else
  return "this build has no CUDA backend (nvcc was not found at configure time)";
#endif
}
}  // namespace

bool gpu_available() { return gpu_unavailable_reason().empty(); }

Backend resolve_backend(const std::string& name) {
  if (name == "host") return Backend::host;
  if (name == "auto") return gpu_available() ? Backend::gpu : Backend::host;
  if (name == "gpu") {
    const std::string why = gpu_unavailable_reason();
    TESSERA_REQUIRE_INPUT(why.empty(), "--backend gpu requested but ", why);
    return Backend::gpu;
  }
  throw InputError("unknown backend '" + name + "' (expected auto, host or gpu)");
}

const char* to_string(Backend b) { return b == Backend::gpu ? "gpu" : "host"; }

}  // namespace tessera
