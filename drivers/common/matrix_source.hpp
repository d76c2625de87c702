#pragma once
// Where a driver's matrix comes from: a Matrix Market file (--A FILE) or a generator spec
// (--gen SPEC). Exactly one must be given.
#include <string>

#include "local/formats/csr.hpp"

namespace tessera::driver {

/// The --gen help of the product drivers: every generator (local/gen/spec.hpp).
inline constexpr const char* kGeneratorHelp =
    "generate A: poisson2d:N poisson3d:N poisson3d27:N elasticity2d:N elasticity3d:N frame2d:N[:L] frame3d:N[:L] "
    "(L: the beams' slenderness, 10 if left out) convdiff3d:N (non-symmetric) rmat:S:E random:N:D";

struct MatrixSource {
  std::string file;  // Matrix Market path (.mtx or .mtx.gz)
  std::string spec;  // generator spec, e.g. poisson3d:64
  bool given() const { return !file.empty() || !spec.empty(); }
  std::string describe() const { return file.empty() ? spec : file; }
};

/// Loads or generates the whole matrix; InputError if neither or both are set.
Csr<double> load_matrix(const MatrixSource& source, const std::string& option_name);

}  // namespace tessera::driver
