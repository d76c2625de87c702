#include "support/matrix_files.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tessera::testing {

std::string matrix_dir() {
  if (const char* env = std::getenv("TESSERA_MATRIX_DIR")) return env;
  return TESSERA_DEFAULT_MATRIX_DIR;  // the shared/ folder beside the source tree (set by CMake)
}

std::vector<MatrixFile> manifest() {
  std::vector<MatrixFile> out;
  std::ifstream in(matrix_dir() + "/MANIFEST.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    MatrixFile f;
    std::string rows, cols, nnz;
    std::getline(fields, f.name, '\t');
    std::getline(fields, f.group, '\t');
    std::getline(fields, rows, '\t');
    std::getline(fields, cols, '\t');
    std::getline(fields, nnz, '\t');
    std::getline(fields, f.symmetry, '\t');
    std::getline(fields, f.field, '\t');
    if (f.name.empty()) continue;
    f.rows = std::stoll(rows);
    f.cols = std::stoll(cols);
    f.nnz_stored = std::stoll(nnz);
    f.path = matrix_dir() + "/" + f.name + ".mtx.gz";
    out.push_back(f);
  }
  return out;
}

}  // namespace tessera::testing
