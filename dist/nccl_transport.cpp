#include "dist/nccl_transport.hpp"

#include <mpi.h>

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

NcclTransport::NcclTransport(const Communicator& comm, int device, cudaStream_t stream)
    : rank_(comm.rank()), ranks_(comm.size()), stream_(stream), device_(device) {
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

void NcclTransport::allgatherv_items(const void* send, void* recv, const std::vector<std::int64_t>& offsets,
                                     std::size_t item_bytes) {
  require_gather_offsets(offsets, ranks_);  // global data: all ranks throw before any NCCL call
  // One broadcast per root rather than an ncclAllGather of max-count padded blocks: no padding,
  // no compaction kernel, and NCCL fuses the grouped broadcasts into one launch. A root with an
  // empty block is skipped on every rank alike (the offsets agree), so the group matches. A
  // broadcast only copies, so bytes serve every item type.
  TESSERA_NCCL_CHECK(ncclGroupStart());
  for (int root = 0; root < ranks_; ++root) {
    const std::size_t bytes = static_cast<std::size_t>(offsets[root + 1] - offsets[root]) * item_bytes;
    if (bytes == 0) continue;
    char* block = static_cast<char*>(recv) + offsets[root] * item_bytes;
    // sendbuff is read on the root only; elsewhere NCCL ignores it.
    TESSERA_NCCL_CHECK(ncclBroadcast(root == rank_ ? send : block, block, bytes, ncclUint8, root, nccl_, stream_));
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
