#pragma once
// Where a computation runs. `auto` picks the GPU when this build has the CUDA backend and a
// device is visible, else the host reference backend: the same programs run everywhere.
#include <string>

namespace tessera {

enum class Backend { host, gpu };

/// True when built with CUDA and at least one device is usable.
bool gpu_available();

/// "auto" | "host" | "gpu" -> Backend. "gpu" without a usable device is an InputError with the
/// reason (no CUDA in this build / no device / driver error).
Backend resolve_backend(const std::string& name);

const char* to_string(Backend b);

}  // namespace tessera
