#pragma once
// RAII MPI initialisation for drivers and tests: MPI_Init on construction, MPI_Finalize on
// destruction, and an abort-free way to report errors on every rank.
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
};

}  // namespace tessera
