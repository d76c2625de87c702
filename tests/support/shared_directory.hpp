#pragma once
// A scratch directory every rank of an MPI test shares (named after rank 0's pid), removed when
// the test is done: for files one rank writes and all ranks then read.
#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "dist/communicator.hpp"

namespace tessera::testing {

class SharedDirectory {
 public:
  /// Collective; `stem` names what the test writes there.
  SharedDirectory(const dist::Communicator& comm, const std::string& stem) : comm_(comm) {
    long pid = static_cast<long>(getpid());
    MPI_Bcast(&pid, 1, MPI_LONG, 0, comm.mpi());
    path_ = std::filesystem::temp_directory_path() / ("tessera_" + stem + "_" + std::to_string(pid));
    if (comm.rank() == 0) std::filesystem::create_directories(path_);
    comm.barrier();
  }
  ~SharedDirectory() {
    comm_.barrier();
    if (comm_.rank() == 0) std::filesystem::remove_all(path_);
  }
  SharedDirectory(const SharedDirectory&) = delete;
  SharedDirectory& operator=(const SharedDirectory&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  /// `text` written to `name` by rank 0; collective: every rank returns once it is there.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = file(name);
    if (comm_.rank() == 0) std::ofstream(path, std::ios::binary) << text;
    comm_.barrier();
    return path;
  }

 private:
  const dist::Communicator& comm_;
  std::filesystem::path path_;
};

}  // namespace tessera::testing
