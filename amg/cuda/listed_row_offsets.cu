#include "amg/cuda/listed_row_offsets.hpp"

#include "amg/cuda/setup_phase_kernels.cuh"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::amg::gpu {
namespace {

using detail::kBlock;
using detail::thread_index;

/// counts[rows[i]] = the length of listed row i (counts zeroed before: unlisted rows have none).
__global__ void listed_row_lengths(const std::int64_t* rows, const std::int64_t* ptr, std::int64_t listed,
                                   std::int64_t* counts) {
  const std::int64_t i = thread_index();
  if (i < listed) counts[rows[i]] = ptr[i + 1] - ptr[i];
}

}  // namespace

tessera::cuda::DeviceBuffer<std::int64_t> listed_row_offsets(const std::vector<std::int64_t>& listed,
                                                             const std::vector<std::int64_t>& ptr,
                                                             std::int64_t rows, cudaStream_t s) {
  TESSERA_ASSERT(ptr.size() == listed.size() + 1 && (listed.empty() || (listed.front() >= 0 && listed.back() < rows)),
                 listed.size(), " rows listed with ", ptr.size(), " offsets, for ", rows, " rows");
  tessera::cuda::DeviceBuffer<std::int64_t> offsets(static_cast<std::size_t>(rows) + 1, s);
  tessera::cuda::DeviceBuffer<std::int64_t> counts(offsets.size(), s);  // the last stays 0
  counts.fill_bytes(0, s);
  if (!listed.empty()) {
    tessera::cuda::DeviceBuffer<std::int64_t> rows_d, ptr_d;
    rows_d.upload(listed, s);
    ptr_d.upload(ptr, s);
    const auto n = static_cast<std::int64_t>(listed.size());
    listed_row_lengths<<<tessera::cuda::grid_for(n, kBlock), kBlock, 0, s>>>(rows_d.data(), ptr_d.data(), n,
                                                                              counts.data());
    TESSERA_CHECK_LAUNCH();
  }
  detail::exclusive_scan_with_total(counts.data(), offsets.data(), rows, s);
  return offsets;
}

}  // namespace tessera::amg::gpu
