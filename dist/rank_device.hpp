#pragma once
// Which GPU a rank uses (built only with CUDA): its rank among the ranks of its node
// (MPI_COMM_TYPE_SHARED) modulo the devices it sees. So a plain mpirun with every GPU visible,
// and Slurm's --gpus-per-task (each rank sees one device, index 0), both give one GPU per rank
// when there are enough of them. When there are not, several ranks of a node share a GPU: the
// products still run there, but NCCL refuses such a layout, so the device transport is then
// the host-staged one (device_transport.hpp).
namespace tessera::dist {

class Communicator;

struct RankDevice {
  int index = -1;       // the CUDA device this rank makes current
  bool shared = false;  // on some node of the job two ranks use one physical GPU (same on every rank)
};

/// Collective. A rank that sees no CUDA device is an InputError on every rank.
RankDevice rank_device(const Communicator& comm);

}  // namespace tessera::dist
