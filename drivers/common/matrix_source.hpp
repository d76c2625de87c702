#pragma once
// Where a driver's matrix comes from: a Matrix Market file (--A FILE) or a generator spec
// (--gen SPEC). Exactly one must be given.
#include <string>

#include "local/formats/csr.hpp"

namespace tessera::driver {

struct MatrixSource {
  std::string file;  // Matrix Market path (.mtx or .mtx.gz)
  std::string spec;  // generator spec, e.g. poisson3d:64
  bool given() const { return !file.empty() || !spec.empty(); }
  std::string describe() const { return file.empty() ? spec : file; }
};

/// Loads or generates the whole matrix; InputError if neither or both are set.
Csr<double> load_matrix(const MatrixSource& source, const std::string& option_name);

}  // namespace tessera::driver
