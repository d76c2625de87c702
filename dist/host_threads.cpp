#include "dist/host_threads.hpp"

#include <sched.h>

#include <vector>

#include "local/core/host_ranges.hpp"

namespace tessera::dist {

namespace {

// Node ranks (this one included) whose CPU sets share a CPU with this rank's.
int overlapping_node_ranks(const Communicator& comm) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return 1;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.mpi(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  std::vector<cpu_set_t> all(static_cast<std::size_t>(ranks));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
  MPI_Comm_free(&node);
  int overlapping = 0;
  for (cpu_set_t& other : all) {
    cpu_set_t both;
    CPU_AND(&both, &mine, &other);
    if (CPU_COUNT(&both) > 0) ++overlapping;
  }
  return overlapping > 0 ? overlapping : 1;
}

}  // namespace

int share_node_cpus(const Communicator& comm) {
  static const int decided = [&] {
    if (!host::threads_set_by_environment()) host::set_threads(host::available_cpus() / overlapping_node_ranks(comm));
    return host::threads();
  }();
  return decided;
}

}  // namespace tessera::dist
