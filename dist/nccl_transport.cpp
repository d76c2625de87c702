#include "dist/nccl_transport.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <nccl.h>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

#define TESSERA_NCCL_CHECK(call)                                                                  \
  do {                                                                                            \
    const ncclResult_t tessera_nccl_status_ = (call);                                             \
    if (tessera_nccl_status_ != ncclSuccess)                                                      \
      throw ::tessera::DeviceError(::tessera::detail::concat(#call, " failed at ", __FILE__, ":", \
                                                             __LINE__, ": ",                      \
                                                             ncclGetErrorString(tessera_nccl_status_))); \
  } while (0)

namespace tessera::dist {

namespace {

ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
  }
  return ncclSum;
}

}  // namespace

int node_local_device(const Communicator& comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.mpi(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  int local_rank = 0, local_ranks = 1;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_ranks);
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  // Slurm's --gpus-per-task shows each rank one device (index 0); otherwise (--gpus-per-node,
  // plain mpirun) every rank sees all of them and takes the one at its node-local rank.
  const int device = (status == cudaSuccess && devices > 0) ? local_rank % devices : -1;
  char bus_id[32] = "none";
  if (device >= 0 && cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess)
    std::snprintf(bus_id, sizeof bus_id, "unknown");
  // Two ranks of one NCCL communicator on one GPU is unsupported (NCCL hangs or fails): compare
  // the physical GPUs chosen on this node and refuse the layout on every rank.
  std::vector<char> all(static_cast<std::size_t>(local_ranks) * sizeof bus_id);
  MPI_Allgather(bus_id, sizeof bus_id, MPI_CHAR, all.data(), sizeof bus_id, MPI_CHAR, node);
  MPI_Comm_free(&node);
  std::string error;
  if (device < 0) error = "a rank sees no CUDA device";
  for (int r = 0; r < local_ranks && error.empty(); ++r)
    if (r != local_rank && std::strncmp(&all[r * sizeof bus_id], bus_id, sizeof bus_id) == 0)
      error = detail::concat("ranks ", std::min(r, local_rank), " and ", std::max(r, local_rank),
                             " of one node would share the GPU ", bus_id, " (", local_ranks, " ranks, ", devices,
                             " visible device(s)): NCCL needs one GPU per rank; start one rank per GPU");
  throw_if_any_rank_failed(comm, error);
  return device;
}

NcclTransport::NcclTransport(const Communicator& comm, cudaStream_t stream)
    : rank_(comm.rank()), ranks_(comm.size()), stream_(stream) {
  device_ = node_local_device(comm);
  TESSERA_CUDA_CHECK(cudaSetDevice(device_));
  // Before the communicator: a throw past its creation would leak it (no destructor runs).
  TESSERA_CUDA_CHECK(cudaMallocHost(&pinned_sum_, sizeof(double)));
  ncclUniqueId id{};
  if (comm.rank() == 0) TESSERA_NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm.mpi());
  TESSERA_NCCL_CHECK(ncclCommInitRank(&nccl_, comm.size(), id, comm.rank()));
  TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
}

NcclTransport::~NcclTransport() {
  if (pinned_sum_) cudaFreeHost(pinned_sum_);
  if (done_) cudaEventDestroy(done_);
  if (nccl_) ncclCommDestroy(nccl_);
}

void NcclTransport::start_exchange(const ExchangePattern& p, std::size_t item_bytes, const void* send, void* recv) {
  // Grouped so NCCL schedules all pairs together: no ordering deadlock between neighbours.
  TESSERA_NCCL_CHECK(ncclGroupStart());
  for (std::size_t i = 0; i < p.recv_ranks.size(); ++i) {
    const std::size_t bytes = static_cast<std::size_t>(p.recv_offsets[i + 1] - p.recv_offsets[i]) * item_bytes;
    if (bytes > 0)
      TESSERA_NCCL_CHECK(ncclRecv(static_cast<char*>(recv) + p.recv_offsets[i] * item_bytes, bytes, ncclUint8,
                                  p.recv_ranks[i], nccl_, stream_));
  }
  for (std::size_t i = 0; i < p.send_ranks.size(); ++i) {
    const std::size_t bytes = static_cast<std::size_t>(p.send_offsets[i + 1] - p.send_offsets[i]) * item_bytes;
    if (bytes > 0)
      TESSERA_NCCL_CHECK(ncclSend(static_cast<const char*>(send) + p.send_offsets[i] * item_bytes, bytes, ncclUint8,
                                  p.send_ranks[i], nccl_, stream_));
  }
  TESSERA_NCCL_CHECK(ncclGroupEnd());
}

void NcclTransport::allgatherv(const double* send, double* recv, const std::vector<std::int64_t>& offsets) {
  // Same check on every rank (offsets are global data): all throw before any NCCL call.
  TESSERA_REQUIRE_INPUT(offsets.size() == static_cast<std::size_t>(ranks_) + 1 && offsets.front() == 0,
                        "allgatherv: offsets need ", ranks_ + 1, " entries starting at 0, got ", offsets.size());
  for (int r = 0; r < ranks_; ++r)
    TESSERA_REQUIRE_INPUT(offsets[r] <= offsets[r + 1], "allgatherv: offsets decrease at rank ", r);
  // One broadcast per root rather than an ncclAllGather of max-count padded blocks: no padding,
  // no compaction kernel, and NCCL fuses the grouped broadcasts into one launch. A root with an
  // empty block is skipped on every rank alike (the offsets agree), so the group matches.
  TESSERA_NCCL_CHECK(ncclGroupStart());
  for (int root = 0; root < ranks_; ++root) {
    const std::size_t count = static_cast<std::size_t>(offsets[root + 1] - offsets[root]);
    if (count == 0) continue;
    double* block = recv + offsets[root];
    // sendbuff is read on the root only; elsewhere NCCL ignores it.
    TESSERA_NCCL_CHECK(ncclBroadcast(root == rank_ ? send : block, block, count, ncclFloat64, root, nccl_, stream_));
  }
  TESSERA_NCCL_CHECK(ncclGroupEnd());
}

void NcclTransport::finish_exchange() { TESSERA_CUDA_CHECK(cudaEventRecord(done_, stream_)); }

void NcclTransport::allreduce(double* data, std::int64_t count, ReduceOp op) {
  TESSERA_NCCL_CHECK(ncclAllReduce(data, data, static_cast<std::size_t>(count), ncclFloat64, to_nccl(op), nccl_, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

double NcclTransport::allreduce_sum_to_host(double* value) {
  TESSERA_NCCL_CHECK(ncclAllReduce(value, value, 1, ncclFloat64, ncclSum, nccl_, stream_));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(pinned_sum_, value, sizeof(double), cudaMemcpyDeviceToHost, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return *pinned_sum_;
}

void NcclTransport::allreduce_sum_on_device(double* values, std::int64_t count) {
  TESSERA_NCCL_CHECK(
      ncclAllReduce(values, values, static_cast<std::size_t>(count), ncclFloat64, ncclSum, nccl_, stream_));
  finish_exchange();
}

void NcclTransport::allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) {
  TESSERA_NCCL_CHECK(ncclAllReduce(data, data, static_cast<std::size_t>(count), ncclInt64, to_nccl(op), nccl_, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace tessera::dist
