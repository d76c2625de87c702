// Every SuiteSparse matrix of the test collection (../shared/matrices, MANIFEST.tsv): it loads
// with the manifest's shape and entry count, equals what a slow independent reader (zlib +
// iostreams + std::map) builds from the same file, satisfies the Csr invariant and survives
// Csr -> tiles -> Csr bit for bit. The one complex matrix must be refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <map>
#include <sstream>

#include "local/core/error.hpp"
#include "local/formats/convert.hpp"
#include "local/io/matrix_market.hpp"
#include "support/matrix_files.hpp"

namespace tessera {
namespace testing {
// Names the matrix in test output instead of dumping the struct's bytes.
void PrintTo(const MatrixFile& m, std::ostream* os) { *os << m.name; }
}  // namespace testing

namespace {

using testing::MatrixFile;

constexpr std::size_t kMatrixCount = 151;

/// The reference reader: every line through gzgets and an istringstream, entries in a map.
struct ReferenceMatrix {
  Csr<double> csr;
  std::int64_t stored = 0, diagonal = 0, duplicates = 0;
};

ReferenceMatrix read_reference(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string banner, line;
  std::vector<char> buffer(1 << 16);
  auto next_line = [&](std::string& out) {
    out.clear();
    while (gzgets(f, buffer.data(), static_cast<int>(buffer.size())) != nullptr) {
      out += buffer.data();
      if (!out.empty() && out.back() == '\n') return true;
    }
    return !out.empty();
  };
  next_line(banner);
  for (char& c : banner) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool pattern = banner.find("pattern") != std::string::npos;
  const bool symmetric = banner.find(" symmetric") != std::string::npos;
  while (next_line(line) && line[0] == '%') {}
  ReferenceMatrix ref;
  std::int64_t rows = 0, cols = 0;
  std::istringstream(line) >> rows >> cols >> ref.stored;
  std::map<std::pair<std::int64_t, std::int64_t>, double> entries;
  for (std::int64_t k = 0; k < ref.stored && next_line(line);) {
    if (line[0] == '%') continue;
    std::int64_t i = 0, j = 0;
    double v = 1.0;
    std::istringstream fields(line);
    fields >> i >> j;
    if (!pattern) fields >> v;
    ref.diagonal += i == j;
    ref.duplicates += entries.count({i - 1, j - 1});
    entries[{i - 1, j - 1}] += v;
    if (symmetric && i != j) entries[{j - 1, i - 1}] += v;
    ++k;
  }
  gzclose(f);
  ref.csr = Csr<double>::empty(rows, cols);
  for (const auto& [ij, v] : entries) {
    ++ref.csr.row_ptr[ij.first + 1];
    ref.csr.col_idx.push_back(static_cast<std::int32_t>(ij.second));
    ref.csr.values.push_back(v);
  }
  for (std::int64_t r = 0; r < rows; ++r) ref.csr.row_ptr[r + 1] += ref.csr.row_ptr[r];
  return ref;
}

TEST(RealMatrices, ManifestListsEveryMatrix) {
  const std::vector<MatrixFile> files = testing::manifest();
  ASSERT_EQ(files.size(), kMatrixCount) << "MANIFEST.tsv in '" << testing::matrix_dir()
                                        << "' is missing or incomplete (set TESSERA_MATRIX_DIR)";
}

class RealMatrix : public ::testing::TestWithParam<MatrixFile> {};

TEST_P(RealMatrix, LoadsExactlyAndRoundTripsThroughTiles) {
  const MatrixFile& m = GetParam();
  if (m.field == "complex") {
    const std::string expected = m.path + ":1: field 'complex' is not supported: Tessera is real-valued";
    try {
      io::read_matrix_market(m.path);
      FAIL() << m.name << " is complex and was not refused";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(expected));
    }
    return;
  }
  const io::MatrixMarketHeader h = io::read_matrix_market_header(m.path);
  EXPECT_EQ(h.symmetry, m.symmetry);
  EXPECT_EQ(h.field, m.field);
  EXPECT_EQ(h.entries, m.nnz_stored);

  const Csr<double> a = io::read_matrix_market(m.path);
  ASSERT_NO_THROW(validate(a, m.name));
  EXPECT_EQ(a.rows, m.rows);
  EXPECT_EQ(a.cols, m.cols);
  const ReferenceMatrix ref = read_reference(m.path);
  EXPECT_EQ(ref.stored, m.nnz_stored);
  EXPECT_EQ(ref.duplicates, 0);
  EXPECT_EQ(a.nnz(), m.symmetry == "symmetric" ? 2 * m.nnz_stored - ref.diagonal : m.nnz_stored);
  EXPECT_TRUE(a == ref.csr) << m.name << " differs from the reference reader";

  const TileMatrix<double> t = to_tiles(a);
  ASSERT_NO_THROW(validate(t, m.name));
  EXPECT_EQ(t.nnz(), a.nnz());
  EXPECT_TRUE(to_csr(t) == a) << m.name << " changed in the Csr -> tiles -> Csr round trip";
}

std::string test_name(const ::testing::TestParamInfo<MatrixFile>& info) {
  std::string name = info.param.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(SuiteSparse, RealMatrix, ::testing::ValuesIn(testing::manifest()), test_name);

}  // namespace
}  // namespace tessera
