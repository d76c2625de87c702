#pragma once
// How many CPU threads a rank's host loops use (local/core/host_ranges.hpp). Several ranks of a
// node started without CPU binding all see every CPU; each taking them all would oversubscribe
// the node. So a rank takes its CPUs divided by the ranks of its node whose CPU sets overlap
// its own: `mpirun --bind-to none` with 4 ranks on 64 CPUs gives 16 threads each, Slurm's
// `--cpus-per-task=16 --cpu-bind=cores` gives 16, OpenMPI's default binding (one core a
// rank for 2 ranks or fewer) gives 1. OMP_NUM_THREADS, when set, wins.
#include <string>

#include "dist/communicator.hpp"

namespace tessera::dist {

/// Collective over `comm` on the first call in the process, which decides; later calls return
/// that decision. Returns the threads this rank uses.
int share_node_cpus(const Communicator& comm);

/// Local, for reports after share_node_cpus: "16 (OMP_NUM_THREADS)", "16 (its share of the node's
/// CPUs)"; where a binding left the rank one CPU on a node with more CPUs than ranks, it adds a
/// hint (the host loops of a GPU rank's setup run on those threads).
std::string host_threads_summary();

}  // namespace tessera::dist
