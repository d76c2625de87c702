#include "dist/staged_transport.hpp"

#include <mpi.h>

#include <algorithm>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist {

StagedTransport::StagedTransport(const Communicator& comm, int device, cudaStream_t stream)
    : comm_(comm.mpi()), host_(comm_), device_(device), stream_(stream) {
  TESSERA_CUDA_CHECK(cudaSetDevice(device_));
  TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
}

StagedTransport::~StagedTransport() {
  cudaStreamSynchronize(stream_);  // no queued copy may still read the pinned buffers
  if (done_) cudaEventDestroy(done_);
}

char* StagedTransport::host_space(cuda::PinnedHostBuffer<char>& buffer, std::size_t bytes) {
  if (buffer.size() < bytes) {
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));  // a queued upload may still read it
    buffer = cuda::PinnedHostBuffer<char>(std::max(bytes, 2 * buffer.size()));
  }
  return buffer.data();
}

void StagedTransport::download(void* host, const void* device, std::size_t bytes) {
  if (bytes > 0) TESSERA_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_));
  // Also waits for what the stream was told to wait for (exchange_after_compute): the sent
  // values, and the last upload out of the host buffers, which MPI overwrites next.
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void StagedTransport::upload(void* device, const void* host, std::size_t bytes) {
  if (bytes > 0) TESSERA_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
}

void StagedTransport::start_exchange(const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
                                     void* recv) {
  const std::size_t sent = static_cast<std::size_t>(pattern.send_count()) * item_bytes;
  const std::size_t received = static_cast<std::size_t>(pattern.recv_count()) * item_bytes;
  char* send_host = host_space(send_host_, sent);
  char* recv_host = host_space(recv_host_, received);
  download(send_host, send, sent);
  host_.start_exchange(pattern, item_bytes, send_host, recv_host);
  host_.finish_exchange();
  upload(recv, recv_host, received);
}

void StagedTransport::finish_exchange() { TESSERA_CUDA_CHECK(cudaEventRecord(done_, stream_)); }

template <class T>
void StagedTransport::reduce_in_place(T* data, std::int64_t count, ReduceOp op) {
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  T* host = reinterpret_cast<T*>(host_space(recv_host_, bytes));
  download(host, data, bytes);
  host_.allreduce(host, count, op);
  upload(data, host, bytes);
}

void StagedTransport::allreduce(double* data, std::int64_t count, ReduceOp op) {
  reduce_in_place(data, count, op);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));  // blocking, as the interface says
}

void StagedTransport::allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) {
  reduce_in_place(data, count, op);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

double StagedTransport::allreduce_sum_to_host(double* value) {
  reduce_in_place(value, 1, ReduceOp::sum);
  // Drained before returning, as NCCL's: callers reuse `value` on another stream at once (the
  // next dot's partial sum), which a late upload of this sum would overwrite.
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return *reinterpret_cast<const double*>(recv_host_.data());
}

void StagedTransport::allreduce_sum_on_device(double* values, std::int64_t count) {
  reduce_in_place(values, count, ReduceOp::sum);
  finish_exchange();
}

void StagedTransport::allgatherv_items(const void* send, void* recv, const std::vector<std::int64_t>& offsets,
                                       std::size_t item_bytes) {
  require_gather_offsets(offsets, comm_.size());
  std::vector<int> counts(static_cast<std::size_t>(comm_.size())), displs(counts.size());
  for (int r = 0; r < comm_.size(); ++r) {
    TESSERA_REQUIRE_INPUT(offsets[r + 1] <= std::int64_t(2147483647),
                          "allgatherv (staged transport): more than 2^31 - 1 items in all");
    counts[r] = static_cast<int>(offsets[r + 1] - offsets[r]);
    displs[r] = static_cast<int>(offsets[r]);
  }
  // One MPI type of item_bytes bytes: the counts stay item counts (within int) at any item size.
  MPI_Datatype item = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(item_bytes), MPI_BYTE, &item);
  MPI_Type_commit(&item);
  const int me = comm_.rank();
  char* whole = host_space(recv_host_, static_cast<std::size_t>(offsets.back()) * item_bytes);
  download(whole + offsets[me] * item_bytes, send, static_cast<std::size_t>(counts[me]) * item_bytes);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, whole, counts.data(), displs.data(), item, comm_.mpi());
  MPI_Type_free(&item);
  upload(recv, whole, static_cast<std::size_t>(offsets.back()) * item_bytes);
}

}  // namespace tessera::dist
