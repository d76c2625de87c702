#pragma once
// The real SuiteSparse matrices in ../shared/matrices (gzip'd Matrix Market + MANIFEST.tsv).
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::testing {

struct MatrixFile {
  std::string name, group, symmetry, field, path;
  std::int64_t rows = 0, cols = 0, nnz_stored = 0;
};

/// Folder holding the matrices: $TESSERA_MATRIX_DIR, else ../shared/matrices beside the source tree.
std::string matrix_dir();

/// Every matrix listed in MANIFEST.tsv (empty if the folder is missing).
std::vector<MatrixFile> manifest();

}  // namespace tessera::testing
