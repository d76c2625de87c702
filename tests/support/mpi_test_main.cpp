// main() for MPI tests: every rank runs every test; rank 0 prints the report, the other ranks
// their failures only; the exit code is non-zero on every rank if any rank failed, so mpiexec
// reports the failure. Built with TESSERA_GPU_TEST, it first requires a CUDA device on every
// rank, else exits 77 (skipped).
// Ranks may share a GPU (the device code then exchanges through the host-staged transport, so a
// one-GPU machine runs the 2-4 rank tests), except with TESSERA_GPU_TEST_OWN_GPU (or the
// environment's TESSERA_TEST_OWN_GPU=1): tests of NCCL itself or of the peer route need a GPU per
// rank and are skipped without one. A program with a skipped test is skipped (exit 77) unless a
// test failed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dist/host_threads.hpp"
#if defined(TESSERA_GPU_TEST)
#include <cuda_runtime_api.h>
#endif

namespace {

/// On ranks other than 0, which print no report: each failed assertion, with the rank and the test.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  // The test's name is kept here: UnitTest::current_test_info() would wait on the lock that
  // gtest holds while it reports a result.
  void OnTestStart(const ::testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s: %s:%d: failure\n%s\n", rank_, test_.c_str(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }

 private:
  int rank_;
  std::string test_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#if defined(TESSERA_GPU_TEST)
  // A device on every rank, and for TESSERA_GPU_TEST_OWN_GPU one of its own: where the ranks of
  // a node would share a physical GPU (fewer devices than ranks), such a test cannot run, which
  // is a skip, not a pass. Under Slurm --gpus-per-task each rank sees its own device 0.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_rank = 0, node_ranks = 1, devices = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_ranks);
  char bus[32] = "";
  const bool any = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 &&
                   cudaDeviceGetPCIBusId(bus, sizeof bus, node_rank % devices) == cudaSuccess;
  std::vector<char> all(static_cast<std::size_t>(node_ranks) * sizeof bus);
  MPI_Allgather(bus, sizeof bus, MPI_CHAR, all.data(), sizeof bus, MPI_CHAR, node);
  MPI_Comm_free(&node);
  int have = any;
#if defined(TESSERA_GPU_TEST_OWN_GPU)
  const bool own_gpu = true;
#else
  // A variant of a test that shares GPUs may ask for GPUs of their own (the NCCL transport or
  // route: where ranks share a GPU, that variant would only repeat the default).
  const char* own = std::getenv("TESSERA_TEST_OWN_GPU");
  const bool own_gpu = own && std::strcmp(own, "1") == 0;
#endif
  if (own_gpu)
    for (int r = 0; r < node_ranks; ++r)
      if (r != node_rank && std::strncmp(&all[r * sizeof bus], bus, sizeof bus) == 0) have = 0;
  const char* needed = own_gpu ? "a GPU of their own" : "a GPU";
  int all_have = 0;
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_have) {
    if (rank == 0)
      std::printf("SKIPPED: the ranks do not each have %s (%d device(s) visible, %d rank(s) on a node); GPU MPI tests "
                  "not run\n", needed, devices, node_ranks);
    MPI_Finalize();
    return 77;
  }
#endif
  {
    // Ranks of one node share its CPUs (no rank runs more host threads than its share).
    const tessera::dist::Communicator world;
    tessera::dist::share_node_cpus(world);
  }
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));  // the listeners own it
  }
  // ctest sees one result a program: a test that skipped (GTEST_SKIP) on any rank makes the
  // program a skip, unless one failed; it is never counted as passed.
  const int failed = RUN_ALL_TESTS() != 0, skipped = ::testing::UnitTest::GetInstance()->skipped_test_count() > 0;
  int outcome[2] = {failed, skipped}, on_any_rank[2] = {0, 0};
  MPI_Allreduce(outcome, on_any_rank, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const bool any_failed = on_any_rank[0], any_skipped = on_any_rank[1];
  if (!any_failed && any_skipped && rank == 0) std::printf("SKIPPED: a test of this program skipped (above)\n");
  MPI_Finalize();
  return any_failed ? 1 : any_skipped ? 77 : 0;
}
