#include "dist/device_transport.hpp"

#include <cstdlib>
#include <string>

#include "dist/communicator.hpp"
#include "dist/nccl_transport.hpp"
#include "dist/rank_device.hpp"
#include "dist/staged_transport.hpp"
#include "local/core/error.hpp"

namespace tessera::dist {

void require_gather_offsets(const std::vector<std::int64_t>& offsets, int ranks) {
  TESSERA_REQUIRE_INPUT(offsets.size() == static_cast<std::size_t>(ranks) + 1 && offsets.front() == 0,
                        "allgatherv: offsets need ", ranks + 1, " entries starting at 0, got ", offsets.size());
  for (int r = 0; r < ranks; ++r)
    TESSERA_REQUIRE_INPUT(offsets[r] <= offsets[r + 1], "allgatherv: offsets decrease at rank ", r);
}

DeviceTransportKind choose_device_transport(const Communicator& comm, const RankDevice& device) {
  const char* env = std::getenv("TESSERA_DEVICE_TRANSPORT");
  const std::string asked = env ? env : "";
  // 0 = unset, 1 = nccl, 2 = staged: the maximum over ranks lets staged win a disagreement.
  std::int64_t wish = 0;
  std::string error;
  if (asked == "nccl") wish = 1;
  else if (asked == "staged") wish = 2;
  else if (!asked.empty())
    error = "TESSERA_DEVICE_TRANSPORT: unknown transport '" + asked + "': choose nccl or staged";
  throw_if_any_rank_failed(comm, error);
  wish = comm.allreduce(wish, ReduceOp::max);
  if (wish == 2 || (wish == 0 && device.shared)) return DeviceTransportKind::staged;
  TESSERA_REQUIRE_INPUT(!device.shared,
                        "TESSERA_DEVICE_TRANSPORT=nccl: ranks of one node share a GPU, and NCCL needs one GPU per rank "
                        "(start one rank per GPU, or use the staged transport)");
  return DeviceTransportKind::nccl;
}

std::unique_ptr<DeviceTransport> make_device_transport(const Communicator& comm, const RankDevice& device,
                                                       cudaStream_t stream) {
  if (choose_device_transport(comm, device) == DeviceTransportKind::staged)
    return std::make_unique<StagedTransport>(comm, device.index, stream);
  return std::make_unique<NcclTransport>(comm, device.index, stream);
}

}  // namespace tessera::dist
