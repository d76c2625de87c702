#pragma once
// RAII MPI initialisation for drivers and tests: MPI_Init on construction unless MPI is
// already initialised, and MPI_Finalize on destruction only if this object initialised it
// (a host such as PETSc that initialised MPI also finalises it). Collective error reporting
// is dist::throw_if_any_rank_failed.
namespace tessera {

class MpiEnvironment {
 public:
  MpiEnvironment(int* argc, char*** argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialized_here_ = false;
};

}  // namespace tessera
