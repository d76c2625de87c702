#include "dist/rank_device.hpp"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"

namespace tessera::dist {

RankDevice rank_device(const Communicator& comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.mpi(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  int local_rank = 0, local_ranks = 1;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_ranks);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky error: "no device" is answered below
    devices = 0;
  }
  RankDevice mine;
  mine.index = devices > 0 ? local_rank % devices : -1;
  // Physical GPUs are compared by PCI bus id: under per-rank CUDA_VISIBLE_DEVICES two ranks may
  // both say "device 0" and still use different GPUs.
  char bus_id[32] = "none";
  if (mine.index >= 0 && cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, mine.index) != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(bus_id, sizeof bus_id, "unknown rank %d", comm.rank());  // never equal to another's
  }
  std::vector<char> all(static_cast<std::size_t>(local_ranks) * sizeof bus_id);
  MPI_Allgather(bus_id, sizeof bus_id, MPI_CHAR, all.data(), sizeof bus_id, MPI_CHAR, node);
  MPI_Comm_free(&node);
  bool shared_here = false;
  for (int r = 0; r < local_ranks; ++r)
    if (r != local_rank && std::strncmp(&all[r * sizeof bus_id], bus_id, sizeof bus_id) == 0) shared_here = true;
  throw_if_any_rank_failed(comm, mine.index < 0 ? "a rank sees no CUDA device" : "");
  mine.shared = comm.allreduce(std::int64_t(shared_here), ReduceOp::max) == 1;
  return mine;
}

}  // namespace tessera::dist
