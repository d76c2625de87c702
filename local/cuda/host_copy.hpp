#pragma once
// Copies between pageable host memory (the HostArrays and std::vectors of the host formats) and
// the device. The AMG setup moves gigabytes this way (its products' operands and results, the
// levels for the solve), into host arrays it has just sized and never touched.
//
// How a copy of 8 MiB or more runs (HostCopyPath; small copies are plain pageable copies):
//   staged      through two pinned chunks that this process keeps, the rank's host threads
//               copying one chunk while the DMA fills (or drains) the other;
//   registered  the host range pinned with cudaHostRegister for the copy, then unregistered;
//   pageable    cudaMemcpyAsync on the range as it is (the driver stages it itself);
//   automatic   staged where the rank has 4 host threads or more, registered where it has fewer:
//               the default.
// Why (tools/host_copy_cost.cu on H100 hosts, 470 MB downloaded; docs/performance.md,
// forty-fourth session): into fresh memory on huge pages (what the drivers' heap uses) staging on
// 16 threads took 0.046-0.075 s against 0.11-0.20 s registered, since cudaHostRegister faults
// the pages in on one thread; into fresh 4 KiB pages 0.035-0.11 s against 0.14-0.25 s; into
// memory touched already 0.015-0.049 s against 0.033-0.065 s. On 4 threads staging still won
// (0.096 s fresh, 0.025 s touched, against 0.16 and 0.034 s); on one it lost (0.32 and 0.075 s).
// Host memory pinned already (cudaMallocHost, or registered) is copied directly on every path.
//
// TESSERA_HOST_COPIES=auto|staged|registered|pageable chooses for a process (the ablation);
// set_host_copy_path() overrides it (tests run every path).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace tessera::cuda {

enum class HostCopyPath { automatic, staged, registered, pageable };

/// The path of large copies as chosen: set_host_copy_path's, else TESSERA_HOST_COPIES's (read at
/// first use; an unknown name is an InputError), else automatic.
HostCopyPath host_copy_path();
void set_host_copy_path(HostCopyPath path);
/// The path a large copy takes now: the chosen one, automatic resolved by host::threads().
HostCopyPath host_copy_path_taken();
/// "auto", "staged", "registered", "pageable": the names TESSERA_HOST_COPIES takes.
const char* to_string(HostCopyPath path);
/// "auto" -> HostCopyPath::automatic, "staged" -> staged, and so on; anything else is an
/// InputError naming the choices.
HostCopyPath host_copy_path_from_name(const std::string& name);

/// Host-to-device copy of `bytes`, ordered on `stream`; `host` may be reused at return. Copies
/// of 8 MiB and more wait for `stream` to pass them, and so for its earlier work too; a smaller
/// one returns once the driver has staged it (after the stream sync the driver does first).
void copy_to_device(void* device, const void* host, std::size_t bytes, cudaStream_t stream);
/// Device-to-host copy, after `stream`'s earlier work; waits for it.
void copy_to_host(void* host, const void* device, std::size_t bytes, cudaStream_t stream);

}  // namespace tessera::cuda
