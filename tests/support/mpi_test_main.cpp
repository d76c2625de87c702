// main() for MPI tests: every rank runs every test; only rank 0 prints; the exit code is
// non-zero on every rank if any rank failed, so mpiexec reports the failure. Built with
// TESSERA_GPU_TEST, it first requires a CUDA device on every rank, else exits 77 (skipped).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#if defined(TESSERA_GPU_TEST)
#include <cuda_runtime_api.h>
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#if defined(TESSERA_GPU_TEST)
  int devices = 0, have = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0, all_have = 0;
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_have) {
    if (rank == 0) std::printf("SKIPPED: no CUDA device on some rank; GPU MPI tests not run\n");
    MPI_Finalize();
    return 77;
  }
#endif
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0, any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
