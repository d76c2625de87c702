#include "dist/host_threads.hpp"

#include <sched.h>
#include <unistd.h>

#include <vector>

#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"

namespace tessera::dist {

namespace {

// share_node_cpus's decision, for host_threads_summary.
struct Decision {
  bool made = false;
  int cpus = 0;        // this rank's CPU set
  int node_ranks = 1;  // ranks on this rank's node
} decision;

// Node ranks (this one included) whose CPU sets share a CPU with this rank's.
int overlapping_node_ranks(const Communicator& comm) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return 1;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.mpi(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  decision.node_ranks = ranks;
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
    const int overlapping = overlapping_node_ranks(comm);  // collective: every rank calls it
    decision.cpus = host::available_cpus();
    decision.made = true;
    if (!host::threads_set_by_environment()) host::set_threads(decision.cpus / overlapping);
    return host::threads();
  }();
  return decided;
}

std::string host_threads_summary() {
  const int threads = host::threads();
  if (host::threads_set_by_environment()) return detail::concat(threads, " (OMP_NUM_THREADS)");
  std::string s = detail::concat(threads, " (its share of the node's CPUs)");
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (decision.made && decision.cpus == 1 && online > decision.node_ranks)
    s += detail::concat("; this rank may run on 1 of the node's ", online, " CPUs (", decision.node_ranks,
                        " rank(s) there): Open MPI binds up to 2 ranks to a core each by default; "
                        "mpiexec --bind-to none, or --map-by slot:PE=N, gives the setup's host loops more");
  return s;
}

}  // namespace tessera::dist
