// Matrix Market reader/writer: exact round trips, every format variant against hand-written
// matrices, gzip input, row-block reads, and one test per kind of malformed input checking
// that the InputError names the file, the line and the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "local/core/error.hpp"
#include "local/io/matrix_market.hpp"
#include "support/random_matrix.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// A fresh folder per test, removed afterwards.
class MatrixMarketFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_mm_" + std::to_string(testing::fresh_seed()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_text(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }

  /// Written through zlib directly, independently of the library's writer.
  std::string write_gz(const std::string& name, const std::string& text) const {
    gzFile f = gzopen(path(name).c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    EXPECT_EQ(gzclose(f), Z_OK);
    return path(name);
  }

  fs::path dir_;
};

/// The message of the InputError `f` throws; a test failure if it throws nothing or another type.
std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return "";
}

Csr<double> triplets(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> r, std::vector<std::int64_t> c,
                     std::vector<double> v) {
  return csr_from_triplets<double>(rows, cols, std::move(r), std::move(c), std::move(v));
}

/// Random values over the whole double range (subnormals and huge magnitudes included), the
/// inputs that need all 17 digits to round-trip.
Csr<double> random_wide_range(std::int64_t rows, std::int64_t cols, double density, std::uint64_t seed) {
  Csr<double> a = testing::random_csr({rows, cols, density, 0.1, 0.1}, seed);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::uniform_int_distribution<int> exponent(-1074, 1023);
  for (double& v : a.values) v = std::ldexp(v, exponent(rng));
  if (!a.values.empty()) a.values[0] = std::numeric_limits<double>::denorm_min();
  return a;
}

TEST_F(MatrixMarketFiles, RandomMatricesRoundTripExactly) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t shapes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {7, 9}, {63, 65}, {100, 3}, {3, 100}};
  int i = 0;
  for (auto& s : shapes)
    for (double density : {0.0, 0.1, 1.0})
      for (const char* name : {"a.mtx", "a.mtx.gz"}) {
        SCOPED_TRACE(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " density " + std::to_string(density) + " " + name);
        const Csr<double> a = random_wide_range(s[0], s[1], density, seed + i++);
        io::write_matrix_market(path(name), a);
        EXPECT_EQ(io::read_matrix_market(path(name)), a);
        const io::MatrixMarketHeader h = io::read_matrix_market_header(path(name));
        EXPECT_EQ(h.format, "coordinate");
        EXPECT_EQ(h.field, "real");
        EXPECT_EQ(h.symmetry, "general");
        EXPECT_EQ(h.rows, a.rows);
        EXPECT_EQ(h.cols, a.cols);
        EXPECT_EQ(h.entries, a.nnz());
      }
}

TEST_F(MatrixMarketFiles, WriterNamesTesseraAndUsesOneBasedIndices) {
  io::write_matrix_market(path("a.mtx"), triplets(2, 3, {1}, {2}, {0.1}));
  std::ifstream in(path("a.mtx"));
  std::string banner, comment, size, entry;
  std::getline(in, banner);
  std::getline(in, comment);
  std::getline(in, size);
  std::getline(in, entry);
  EXPECT_EQ(banner, "%%MatrixMarket matrix coordinate real general");
  EXPECT_THAT(comment, HasSubstr("Tessera"));
  EXPECT_EQ(size, "2 3 1");
  EXPECT_EQ(entry, "2 3 0.10000000000000001");
}

TEST_F(MatrixMarketFiles, DenseRoundTripsInEitherLayout) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  for (Layout layout : {Layout::row_major, Layout::col_major})
    for (auto [rows, cols] : {std::pair{0, 0}, {1, 1}, {7, 3}, {1, 9}}) {
      DenseMatrix x(rows, cols, layout);
      for (double& v : x.data) v = u(rng);
      io::write_matrix_market(path("x.mtx"), x);
      const DenseMatrix y = io::read_matrix_market_dense(path("x.mtx"));
      ASSERT_EQ(y.rows, rows);
      ASSERT_EQ(y.cols, cols);
      EXPECT_EQ(y.layout, Layout::col_major);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) EXPECT_EQ(y.at(i, j), x.at(i, j)) << i << "," << j;
    }
}

TEST_F(MatrixMarketFiles, SymmetricIsExpandedToBothTriangles) {
  const std::string file = write_text("s.mtx",
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "4 4 5\n1 1 2.5\n3 1 -1\n4 2 7\n4 4 1e-3\n2 2 3\n");
  const Csr<double> expect = triplets(4, 4, {0, 2, 0, 3, 1, 3, 1}, {0, 0, 2, 1, 3, 3, 1}, {2.5, -1, -1, 7, 7, 1e-3, 3});
  EXPECT_EQ(io::read_matrix_market(file), expect);
  EXPECT_EQ(io::read_matrix_market_header(file).entries, 5);
}

TEST_F(MatrixMarketFiles, UpperTriangleSymmetricFileIsAcceptedToo) {
  const std::string file = write_text("s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 3 4\n2 3 5\n");
  EXPECT_EQ(io::read_matrix_market(file), triplets(3, 3, {0, 2, 1, 2}, {2, 0, 2, 1}, {4, 4, 5, 5}));
}

TEST_F(MatrixMarketFiles, SkewSymmetricMirrorIsNegated) {
  const std::string file = write_text("k.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -4\n");
  EXPECT_EQ(io::read_matrix_market(file), triplets(3, 3, {1, 0, 2, 1}, {0, 1, 1, 2}, {1.5, -1.5, -4, 4}));
}

TEST_F(MatrixMarketFiles, PatternEntriesAreOne) {
  const std::string general = write_text("p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n");
  EXPECT_EQ(io::read_matrix_market(general), triplets(2, 3, {0, 1}, {2, 0}, {1, 1}));
  const std::string symmetric = write_text("ps.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n");
  EXPECT_EQ(io::read_matrix_market(symmetric), triplets(2, 2, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}));
  // A value on a pattern line (seen in real files) is ignored: the banner says pattern.
  const std::string valued = write_text("pv.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1 5\n");
  EXPECT_EQ(io::read_matrix_market(valued), triplets(2, 2, {1}, {0}, {1}));
}

TEST_F(MatrixMarketFiles, IntegerFieldAndDuplicatesSummed) {
  const std::string file = write_text("i.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 4\n1 2 -3\n2 1 +7\n1 2 10\n2 2 0\n");
  EXPECT_EQ(io::read_matrix_market(file), triplets(2, 2, {0, 1, 1}, {1, 0, 1}, {7, 7, 0}));
}

TEST_F(MatrixMarketFiles, ArrayIsColumnMajorAndKeepsZeros) {
  const std::string file = write_text("a.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n0\n4\n5\n6\n");
  EXPECT_EQ(io::read_matrix_market(file), triplets(2, 3, {0, 1, 0, 1, 0, 1}, {0, 0, 1, 1, 2, 2}, {1, 2, 0, 4, 5, 6}));
  const DenseMatrix x = io::read_matrix_market_dense(file);
  EXPECT_EQ(x.data, (std::vector<double>{1, 2, 0, 4, 5, 6}));
  EXPECT_EQ(io::read_matrix_market_header(file).entries, 6);
}

TEST_F(MatrixMarketFiles, DenseRowsAreTheRowsOfTheWholeArray) {
  // 3 x 2, column-major: [[1 4] [2 5] [3 6]].
  const std::string file = write_text("r.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n");
  const DenseMatrix middle = io::read_matrix_market_dense_rows(file, 1, 3);
  EXPECT_EQ(middle.rows, 2);
  EXPECT_EQ(middle.cols, 2);
  EXPECT_EQ(middle.data, (std::vector<double>{2, 3, 5, 6}));  // column-major, as the whole read
  const DenseMatrix none = io::read_matrix_market_dense_rows(file, 2, 2);  // a rank owning no rows
  EXPECT_EQ(none.rows, 0);
  EXPECT_EQ(none.cols, 2);
  EXPECT_EQ(io::read_matrix_market_dense_rows(file, 0, -1).data, io::read_matrix_market_dense(file).data);
  EXPECT_THAT(input_error([&] { io::read_matrix_market_dense_rows(file, 2, 4); }),
              HasSubstr("row range [2, 4) is outside the 3-row array"));
  // An entry of another rank's rows is still checked: every rank refuses a bad file alike.
  const std::string bad = write_text("rb.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\nnan\n");
  EXPECT_THAT(input_error([&] { io::read_matrix_market_dense_rows(bad, 0, 1); }), HasSubstr(bad + ":5:"));
}

TEST_F(MatrixMarketFiles, SymmetricAndSkewArraysStoreOneTriangle) {
  // Column-major lower triangle of [[1 2 3] [2 4 5] [3 5 6]], then the strict one of a skew matrix.
  const std::string sym = write_text("s.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_EQ(io::read_matrix_market_dense(sym).data, (std::vector<double>{1, 2, 3, 2, 4, 5, 3, 5, 6}));
  const std::string skew = write_text("k.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  EXPECT_EQ(io::read_matrix_market_dense(skew).data, (std::vector<double>{0, 1, 2, -1, 0, 3, -2, -3, 0}));
  EXPECT_EQ(io::read_matrix_market(skew).nnz(), 6);
}

TEST_F(MatrixMarketFiles, LenientLexicalDetails) {
  // Any-case banner, comments and blank lines anywhere, CRLF, tabs, '+' signs, no final '\n'.
  const std::string file = write_text("l.mtx",
      "%%matrixmarket MATRIX Coordinate REAL General\r\n%comment\n\n  % indented comment\n"
      "3\t2   2\r\n\n% between entries\n1 1 +1.25E+01\r\n   \n3 2\t-2e-3");
  EXPECT_EQ(io::read_matrix_market(file), triplets(3, 2, {0, 2}, {0, 1}, {12.5, -2e-3}));
}

TEST_F(MatrixMarketFiles, GzipFileReadsLikePlainFile) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  io::write_matrix_market(path("a.mtx"), random_wide_range(50, 40, 0.2, seed));
  std::ifstream in(path("a.mtx"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string gz = write_gz("a.mtx.gz", text);
  EXPECT_EQ(io::read_matrix_market(gz), io::read_matrix_market(path("a.mtx")));
  const std::string gz_named_plain = write_gz("compressed.mtx", text);  // detected by magic bytes, not name
  EXPECT_EQ(io::read_matrix_market(gz_named_plain), io::read_matrix_market(path("a.mtx")));
}

TEST_F(MatrixMarketFiles, RowsSubsetEqualsRowBlockOfWhole) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // A symmetric file (lower triangle of a random matrix, duplicates included) and a general one.
  const Csr<double> a = testing::random_csr({37, 37, 0.15, 0.1, 0}, seed);
  std::string sym = "%%MatrixMarket matrix coordinate real symmetric\n", entries;
  int stored = 0;
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      if (a.col_idx[k] <= r) {
        const int copies = rng() % 4 == 0 ? 2 : 1;  // a duplicate is summed
        for (int c = 0; c < copies; ++c, ++stored)
          entries += std::to_string(r + 1) + " " + std::to_string(a.col_idx[k] + 1) + " " + std::to_string(a.values[k]) + "\n";
      }
  const std::string files[] = {write_text("s.mtx", sym + "37 37 " + std::to_string(stored) + "\n" + entries),
                               (io::write_matrix_market(path("g.mtx.gz"), a), path("g.mtx.gz"))};
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const Csr<double> whole = io::read_matrix_market(file);
    validate(whole);
    for (auto [begin, end] : {std::pair{0, 37}, {0, 0}, {36, 37}, {5, 21}, {37, 37}}) {
      const RowBlock got = io::read_matrix_market_rows(file, begin, end);
      const RowBlock expect = row_block(whole, begin, end);
      EXPECT_EQ(got.global_rows, 37);
      EXPECT_EQ(got.global_cols, 37);
      EXPECT_EQ(got.row_begin, begin);
      EXPECT_EQ(got.row_end, end);
      EXPECT_EQ(got.row_ptr, expect.row_ptr) << begin << ".." << end;
      EXPECT_EQ(got.col, expect.col) << begin << ".." << end;
      EXPECT_EQ(got.values, expect.values) << begin << ".." << end;
    }
  }
}

TEST_F(MatrixMarketFiles, RowsKeepColumnsBeyondInt32) {
  const std::string file = write_text("wide.mtx", "%%MatrixMarket matrix coordinate real general\n2 5000000000 3\n"
                                                  "2 4999999999 1\n1 3000000000 2\n2 1 3\n");
  const RowBlock b = io::read_matrix_market_rows(file, 1, 2);
  EXPECT_EQ(b.row_ptr, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(b.col, (std::vector<std::int64_t>{0, 4999999998}));
  EXPECT_EQ(b.values, (std::vector<double>{3, 1}));
  EXPECT_THAT(input_error([&] { io::read_matrix_market(file); }), HasSubstr("exceed the int32 column index"));
}

// ---- malformed input: one case per problem, each checking "<file>:<line>: <problem>" ----

struct BadFile {
  const char* name;
  std::string text;
  const char* where;    // ":<line>: "
  const char* problem;  // substring of the message
};

void PrintTo(const BadFile& c, std::ostream* os) { *os << c.name; }

const std::string kReal = "%%MatrixMarket matrix coordinate real general\n";

const BadFile kBadFiles[] = {
    {"EmptyFile", "", ":1: ", "empty file"},
    {"NoBanner", "3 3 1\n1 1 1\n", ":1: ", "must start with %%MatrixMarket"},
    {"MisspelledBanner", "%%MatrixMarkt matrix coordinate real general\n1 1 0\n", ":1: ", "must start with %%MatrixMarket"},
    {"ShortBanner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", ":1: ", "banner has 4 fields, expected 5"},
    {"VectorObject", "%%MatrixMarket vector coordinate real general\n1 1 0\n", ":1: ", "unsupported object 'vector'"},
    {"UnknownFormat", "%%MatrixMarket matrix sparse real general\n1 1 0\n", ":1: ", "unknown format 'sparse'"},
    {"UnknownField", "%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n", ":1: ", "unknown field 'quaternion'"},
    {"UnknownSymmetry", "%%MatrixMarket matrix coordinate real upper\n1 1 0\n", ":1: ", "unknown symmetry 'upper'"},
    {"ComplexField", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", ":1: ",
     "field 'complex' is not supported: Tessera is real-valued"},
    {"Hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", ":1: ", "Tessera is real-valued"},
    {"ArrayPattern", "%%MatrixMarket matrix array pattern general\n1 1\n", ":1: ", "cannot have field 'pattern'"},
    {"MissingSizeLine", kReal + "% only a comment\n\n", ":3: ", "missing size line"},
    {"SizeLineTooShort", kReal + "3 3\n", ":2: ", "size line has 2 fields, expected 3 (rows columns entries)"},
    {"SizeLineTooLong", kReal + "3 3 1 1\n", ":2: ", "size line has 4 fields, expected 3"},
    {"NegativeSize", kReal + "3 -1 0\n", ":2: ", "'-1' is not a non-negative integer"},
    {"NonNumericSize", kReal + "% c\n3 x3 0\n", ":3: ", "'x3' is not a non-negative integer"},
    {"FractionalSize", kReal + "3 3 1.5\n", ":2: ", "'1.5' is not a non-negative integer"},
    {"ArraySizeLine", "%%MatrixMarket matrix array real general\n3 3 9\n", ":2: ", "size line has 3 fields, expected 2 (rows columns)"},
    {"NonSquareSymmetric", "%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", ":2: ", "symmetric matrix must be square"},
    {"TooFewEntries", kReal + "3 3 3\n1 1 1\n2 2 2\n", ":4: ", "file ends after 2 of the 3 entries"},
    {"TooFewArrayEntries", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", ":5: ", "file ends after 3 of the 4 entries"},
    {"TooManyEntries", kReal + "3 3 1\n1 1 1\n% fine\n2 2 2\n", ":5: ", "more entries than the 1 declared"},
    {"TrailingGarbage", kReal + "3 3 1\n1 1 1\nend of data\n", ":4: ", "more entries than the 1 declared"},
    {"RowIndexZero", kReal + "3 4 1\n0 1 1\n", ":3: ", "row index 0 is out of range [1, 3]"},
    {"RowIndexTooLarge", kReal + "3 4 2\n1 1 1\n4 1 1\n", ":4: ", "row index 4 is out of range [1, 3]"},
    {"ColumnIndexZero", kReal + "3 4 1\n1 0 1\n", ":3: ", "column index 0 is out of range [1, 4]"},
    {"ColumnIndexTooLarge", kReal + "3 4 1\n1 5 1\n", ":3: ", "column index 5 is out of range [1, 4]"},
    {"NegativeIndex", kReal + "3 4 1\n-1 1 1\n", ":3: ", "row index -1 is out of range [1, 3]"},
    {"NonIntegerIndex", kReal + "3 4 1\n1.0 1 1\n", ":3: ", "row index '1.0' is not an integer"},
    {"MissingValue", kReal + "3 3 1\n1 1\n", ":3: ", "entry has 2 fields, expected 3 (row column value)"},
    {"ExtraField", kReal + "3 3 1\n1 1 1 1\n", ":3: ", "entry has 4 fields, expected 3"},
    {"PatternWithTwoValues", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1 1\n", ":3: ",
     "entry has 4 fields, expected 2 (row column)"},
    {"PatternWithBadValue", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 x\n", ":3: ",
     "value 'x' is not a number"},
    {"ArrayTwoFields", "%%MatrixMarket matrix array real general\n1 1\n1 2\n", ":3: ", "array entry has 2 fields, expected 1"},
    {"NonNumericValue", kReal + "3 3 1\n1 1 abc\n", ":3: ", "value 'abc' is not a number"},
    {"ValueWithTrailingText", kReal + "3 3 1\n1 1 1.5x\n", ":3: ", "value '1.5x' is not a number"},
    {"NaNValue", kReal + "3 3 2\n1 1 1\n2 2 nan\n", ":4: ", "value 'nan' is not finite"},
    {"InfValue", kReal + "3 3 1\n1 1 -inf\n", ":3: ", "value '-inf' is not finite"},
    {"OverflowingValue", kReal + "3 3 1\n1 1 1e400\n", ":3: ", "value '1e400' is not finite"},
    {"FractionalInteger", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n", ":3: ",
     "value '2.5' is not an integer"},
    {"SkewDiagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n", ":4: ",
     "diagonal entry (2, 2) in a skew-symmetric matrix"},
    {"SymmetricBothTriangles", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 2 1\n", ":4: ",
     "entry (1, 2) is above the diagonal but line 3 is below it"},
};

class MalformedFile : public MatrixMarketFiles, public ::testing::WithParamInterface<BadFile> {};

TEST_P(MalformedFile, IsAnInputErrorNamingFileLineAndProblem) {
  const BadFile& c = GetParam();
  const std::string file = write_text("bad.mtx", c.text);
  const std::string message = input_error([&] { io::read_matrix_market(file); });
  EXPECT_THAT(message, HasSubstr(file + c.where));
  EXPECT_THAT(message, HasSubstr(c.problem));
  // The same file read gzip-compressed and by row block fails the same way.
  const std::string gz = write_gz("bad.mtx.gz", c.text);
  const std::string gz_message = input_error([&] { io::read_matrix_market_rows(gz, 0, 0); });
  EXPECT_THAT(gz_message, HasSubstr(gz + c.where));
  EXPECT_THAT(gz_message, HasSubstr(c.problem));
}

INSTANTIATE_TEST_SUITE_P(MatrixMarket, MalformedFile, ::testing::ValuesIn(kBadFiles),
                         [](const ::testing::TestParamInfo<BadFile>& info) { return std::string(info.param.name); });

TEST_F(MatrixMarketFiles, MissingFileIsNamed) {
  const std::string missing = path("no_such_matrix.mtx");
  const std::string message = input_error([&] { io::read_matrix_market(missing); });
  EXPECT_THAT(message, HasSubstr(missing + ": cannot open: No such file or directory"));
}

TEST_F(MatrixMarketFiles, DirectoryIsNotAFile) {
  EXPECT_THAT(input_error([&] { io::read_matrix_market(dir_.string()); }), HasSubstr(dir_.string() + ":1: cannot read"));
}

TEST_F(MatrixMarketFiles, TruncatedGzipStreamIsAnInputError) {
  std::string text = kReal + "1000 1000 20000\n";
  for (int k = 0; k < 20000; ++k) text += std::to_string(k % 1000 + 1) + " " + std::to_string(k / 20 + 1) + " 0.123456789\n";
  const std::string gz = write_gz("t.mtx.gz", text);
  fs::resize_file(gz, fs::file_size(gz) / 2);
  const std::string message = input_error([&] { io::read_matrix_market(gz); });
  EXPECT_THAT(message, HasSubstr(gz + ":"));
  EXPECT_THAT(message, HasSubstr("corrupt or truncated gzip stream"));
}

TEST_F(MatrixMarketFiles, DenseReaderRefusesCoordinateFile) {
  const std::string file = write_text("c.mtx", kReal + "2 2 0\n");
  EXPECT_THAT(input_error([&] { io::read_matrix_market_dense(file); }),
              HasSubstr(file + ":2: a dense matrix needs an 'array' file"));
}

TEST_F(MatrixMarketFiles, RowRangeOutsideMatrix) {
  const std::string file = write_text("c.mtx", kReal + "2 2 0\n");
  EXPECT_THAT(input_error([&] { io::read_matrix_market_rows(file, 1, 3); }),
              HasSubstr("row range [1, 3) is outside the 2-row matrix"));
  EXPECT_THAT(input_error([&] { io::read_matrix_market_rows(file, 2, 1); }), HasSubstr("row range [2, 1)"));
}

TEST_F(MatrixMarketFiles, WriterRefusesNonFiniteValuesAndBadPaths) {
  Csr<double> a = triplets(2, 2, {1}, {0}, {std::numeric_limits<double>::quiet_NaN()});
  EXPECT_THAT(input_error([&] { io::write_matrix_market(path("n.mtx"), a); }), HasSubstr("cannot write entry (2, 1)"));
  a.values[0] = 1;
  const std::string unwritable = path("no_such_dir/a.mtx");
  EXPECT_THAT(input_error([&] { io::write_matrix_market(unwritable, a); }),
              HasSubstr(unwritable + ": cannot open for writing: No such file or directory"));
}

}  // namespace
}  // namespace tessera
