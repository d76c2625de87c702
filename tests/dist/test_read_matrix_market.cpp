// dist::read_matrix_market_rows on 1-4 ranks against the whole-file reader: the same rows, bit for
// bit (duplicates summed in the file's order), for general, symmetric, skew-symmetric, pattern and
// integer files written with comments, blank lines, CRLF and ragged spacing in the data section,
// plain (cut by bytes) and gzip'd (cut by data lines; one gzip member or two), over balanced and
// uneven partitions with an empty rank; real SuiteSparse files; dense arrays, symmetric ones too;
// the fallback (ranges that do not tile the rows), the route each case takes and the switch that
// forces the whole-file read. And every malformed file, plain or gzip'd, a corrupt or truncated
// gzip stream too, is refused on every rank with exactly the whole-file reader's message: its first
// bad line, wherever in the file (and so in whichever rank's range) it lies.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/read_matrix_market.hpp"
#include "dist_test_util.hpp"
#include "local/core/error.hpp"
#include "local/io/gz_line_reader.hpp"
#include "local/io/matrix_market.hpp"
#include "support/matrix_files.hpp"
#include "support/shared_directory.hpp"

namespace tessera::dist {
namespace {

using tessera::testing::SharedDirectory;
using testing::input_error_on_every_rank;

/// Every test's communicator, seed (rank 0's, shared) and scratch directory.
class ParallelMatrixMarket : public ::testing::Test {
 protected:
  const Communicator comm;
  const std::uint64_t seed = testing::shared_seed(comm);
  std::mt19937_64 rng{seed};
  const SharedDirectory dir{comm, "read_matrix_market"};
};

/// `text` gzip'd into `name` by rank 0, through zlib directly (not the library's writer);
/// collective, as SharedDirectory::write.
std::string write_gz(const Communicator& comm, const SharedDirectory& dir, const std::string& name,
                     const std::string& text) {
  const std::string path = dir.file(name);
  if (comm.rank() == 0) {
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    EXPECT_EQ(gzclose(f), Z_OK);
  }
  comm.barrier();
  return path;
}

/// The route a file on `comm` is read by.
std::string route_of(const Communicator& comm, const std::string& by_ranges) {
  return comm.size() > 1 ? by_ranges : "whole file on every rank";
}
const std::string kByBytes = "byte ranges, one a rank";
const std::string kByDataLines = "data-line ranges, one a rank, each read from the start";

/// A coordinate file of `entries` random entries (duplicates among them) of an n x n matrix,
/// in the given field and symmetry (mirrored files: the lower triangle, the diagonal too unless
/// skew), its data section salted with comments, blank lines, CRLF ends, tabs and '+' signs.
std::string random_file(std::mt19937_64& rng, std::int64_t n, int entries, const std::string& field,
                        const std::string& symmetry) {
  std::string text = "%%MatrixMarket matrix coordinate " + field + " " + symmetry + "\n% a comment\n\n";
  text += std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(entries) + "\n";
  std::uniform_int_distribution<std::int64_t> index(1, n);
  for (int k = 0; k < entries;) {
    std::int64_t i = index(rng), j = index(rng);
    if (symmetry != "general" && i < j) std::swap(i, j);
    if (symmetry == "skew-symmetric" && i == j) continue;
    if (rng() % 7 == 0) text += "% a comment between entries\n";
    if (rng() % 11 == 0) text += "   \n";
    text += (rng() % 5 == 0 ? "+" : "") + std::to_string(i) + (rng() % 3 == 0 ? "\t" : "  ") + std::to_string(j);
    if (field == "real") text += " " + std::to_string(std::uniform_real_distribution<double>(-1, 1)(rng)) + "e-3";
    if (field == "integer") text += " " + std::to_string(static_cast<int>(rng() % 19) - 9);
    text += rng() % 4 == 0 ? "\r\n" : "\n";
    ++k;
  }
  return text;
}

/// Each partition's rows read in parallel equal the whole-file reader's rows, bit for bit, read
/// by `route`.
void expect_same_rows(const Communicator& comm, const std::string& path, std::int64_t n, std::uint64_t seed,
                      const std::string& route) {
  const RowPartition balanced = RowPartition::balanced_rows(n, comm.size());
  const RowPartition uneven = testing::uneven_partition(comm, n, seed);
  for (const RowPartition* p : {&balanced, &uneven}) {
    const std::int64_t begin = p->begin(comm.rank()), end = p->end(comm.rank());
    const RowBlock expected = io::read_matrix_market_rows(path, begin, end);
    std::string taken;
    const RowBlock got = read_matrix_market_rows(comm, path, begin, end, &taken);
    EXPECT_EQ(taken, route);
    EXPECT_EQ(got.global_rows, expected.global_rows);
    EXPECT_EQ(got.global_cols, expected.global_cols);
    EXPECT_EQ(got.row_begin, begin);
    EXPECT_EQ(got.row_end, end);
    EXPECT_EQ(std::vector<std::int64_t>(got.row_ptr.begin(), got.row_ptr.end()),
              std::vector<std::int64_t>(expected.row_ptr.begin(), expected.row_ptr.end()));
    EXPECT_EQ(std::vector<std::int64_t>(got.col.begin(), got.col.end()),
              std::vector<std::int64_t>(expected.col.begin(), expected.col.end()));
    EXPECT_EQ(std::vector<double>(got.values.begin(), got.values.end()),
              std::vector<double>(expected.values.begin(), expected.values.end()));  // the same sums, in order
  }
}

TEST_F(ParallelMatrixMarket, EveryFormatReadsAsTheWholeFileReaderReadsIt) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 203;
  for (const auto& [field, symmetry] : std::vector<std::pair<std::string, std::string>>{
           {"real", "general"}, {"real", "symmetric"}, {"real", "skew-symmetric"}, {"pattern", "general"},
           {"integer", "symmetric"}, {"pattern", "symmetric"}}) {
    SCOPED_TRACE(field + " " + symmetry);
    const std::string text = random_file(rng, n, 3001, field, symmetry), name = field + "_" + symmetry + ".mtx";
    expect_same_rows(comm, dir.write(name, text), n, seed, route_of(comm, kByBytes));
    expect_same_rows(comm, write_gz(comm, dir, name + ".gz", text), n, seed, route_of(comm, kByDataLines));
  }
  // Two gzip members one after the other (what `cat a.gz b.gz`, pigz or bgzip write): zlib reads
  // them as one stream, the ranges too.
  const std::string text = random_file(rng, n, 2001, "real", "general");
  const std::string first = write_gz(comm, dir, "first.gz", text.substr(0, text.size() / 2));
  const std::string second = write_gz(comm, dir, "second.gz", text.substr(text.size() / 2));
  std::string members;
  for (const std::string& part : {first, second}) {
    std::ifstream in(part, std::ios::binary);
    members.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  expect_same_rows(comm, dir.write("members.mtx.gz", members), n, seed, route_of(comm, kByDataLines));
  // No final newline, and more ranks than data lines; no entries.
  for (const auto& [name, text, n] : std::vector<std::tuple<std::string, std::string, std::int64_t>>{
           {"short.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n3 2 -2", 3},
           {"empty.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n", 0}}) {
    SCOPED_TRACE(name);
    expect_same_rows(comm, dir.write(name, text), n, seed, route_of(comm, kByBytes));
    expect_same_rows(comm, write_gz(comm, dir, name + ".gz", text), n, seed, route_of(comm, kByDataLines));
  }
}

TEST_F(ParallelMatrixMarket, RealFilesAndTheFallbacks) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  int checked = 0;
  for (const auto& file : tessera::testing::manifest()) {
    if (file.name != "bp_1200" && file.name != "bcsstk02") continue;  // general and symmetric storage
    SCOPED_TRACE(file.name);
    std::string text;  // the file as plain text: read by byte ranges
    io::GzLineReader lines(file.path);
    for (std::string_view line; lines.next(line);) text.append(line).push_back('\n');
    const std::string plain = dir.write(file.name + ".mtx", text);
    const std::int64_t n = io::read_matrix_market_header(plain).rows;
    expect_same_rows(comm, plain, n, seed, route_of(comm, kByBytes));
    expect_same_rows(comm, file.path, n, seed, route_of(comm, kByDataLines));  // gzip'd
    ++checked;
  }
  // Ranges that do not tile the rows (every rank asks for all of them): read whole.
  const std::string path = dir.write("all.mtx", random_file(rng, 40, 300, "real", "general"));
  std::string route;
  const RowBlock all = read_matrix_market_rows(comm, path, 0, 40, &route);
  const RowBlock whole = io::read_matrix_market_rows(path, 0, 40);
  EXPECT_EQ(route, "whole file on every rank");
  EXPECT_EQ(std::vector<std::int64_t>(all.col.begin(), all.col.end()),
            std::vector<std::int64_t>(whole.col.begin(), whole.col.end()));
  EXPECT_EQ(std::vector<double>(all.values.begin(), all.values.end()),
            std::vector<double>(whole.values.begin(), whole.values.end()));
  EXPECT_EQ(checked, 2) << "matrices bp_1200/bcsstk02 missing from " << tessera::testing::matrix_dir();
}

/// An n x k array of random values, salted like random_file: general, or (k = n) symmetric
/// (the lower triangle stored) or skew-symmetric (the strict lower triangle).
std::string random_array(std::mt19937_64& rng, std::int64_t n, int k, const std::string& symmetry = "general") {
  std::string text = "%%MatrixMarket matrix array real " + symmetry + "\n% vectors\n" + std::to_string(n) + " " +
                     std::to_string(k) + "\n";
  const std::int64_t stored = symmetry == "general"     ? n * k
                              : symmetry == "symmetric" ? n * (n + 1) / 2
                                                        : n * (n - 1) / 2;
  for (std::int64_t e = 0; e < stored; ++e) {
    if (rng() % 13 == 0) text += "% between values\n\n";
    text += std::to_string(std::uniform_real_distribution<double>(-1, 1)(rng)) + (rng() % 4 == 0 ? "\r\n" : "\n");
  }
  return text;
}

// Dense files (a right-hand side, near-null vectors): a general array by bytes, a gzip'd one and
// symmetric and skew-symmetric ones by data lines (where each entry sits follows from all before
// it), each rank's rows as the whole-file reader's; a malformed one refused with its message, a
// coordinate file too.
TEST_F(ParallelMatrixMarket, DenseRowsAsTheWholeFileReaderReadsThem) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 301, m = 47;
  const RowPartition uneven = testing::uneven_partition(comm, n, seed);
  const std::int64_t begin = uneven.begin(comm.rank()), end = uneven.end(comm.rank());
  const std::string general = random_array(rng, n, 3);
  std::string route;
  for (const auto& [path, rows, expected_route] : std::vector<std::tuple<std::string, std::int64_t, std::string>>{
           {dir.write("v.mtx", general), n, route_of(comm, kByBytes)},
           {write_gz(comm, dir, "v.mtx.gz", general), n, route_of(comm, kByDataLines)},
           {dir.write("s.mtx", random_array(rng, m, m, "symmetric")), m, route_of(comm, kByDataLines)},
           {dir.write("k.mtx", random_array(rng, m, m, "skew-symmetric")), m, route_of(comm, kByDataLines)},
           {dir.write("s3.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n"), 3,
            route_of(comm, kByDataLines)}}) {
    SCOPED_TRACE(path);
    const RowPartition p = rows == n ? uneven : RowPartition::balanced_rows(rows, comm.size());
    const std::int64_t b = p.begin(comm.rank()), e = p.end(comm.rank());
    const DenseMatrix got = read_matrix_market_dense_rows(comm, path, b, e, &route);
    const DenseMatrix expected = io::read_matrix_market_dense_rows(path, b, e);
    EXPECT_EQ(route, expected_route);
    EXPECT_EQ(got.rows, e - b);
    EXPECT_EQ(got.cols, expected.cols);
    EXPECT_TRUE(got.layout == Layout::col_major);
    EXPECT_EQ(got.data, expected.data);
  }
  std::string bad = random_array(rng, n, 2);
  bad.replace(bad.rfind("\n", bad.size() - 2) + 1, std::string::npos, "0.5x\n");  // the last value
  const std::vector<std::string> malformed{bad, random_array(rng, n, 2).substr(0, 2000),  // a bad value; too few
                                           random_array(rng, n, 2) + "7\n",               // one too many
                                           random_file(rng, n, 10, "real", "general")};    // not an array
  for (std::size_t c = 0; c < malformed.size(); ++c) {
    const std::string name = "malformed_" + std::to_string(c) + ".mtx";
    for (const std::string& path : {dir.write(name, malformed[c]), write_gz(comm, dir, name + ".gz", malformed[c])}) {
      const std::string expected = input_error_on_every_rank(comm, [&] { io::read_matrix_market_dense(path); });
      ASSERT_FALSE(expected.empty()) << path;
      EXPECT_EQ(input_error_on_every_rank(comm, [&] { read_matrix_market_dense_rows(comm, path, begin, end); }),
                expected)
          << path;
    }
  }
}

// Which read each case takes: byte ranges for a plain coordinate file on several ranks, data-line
// ranges for a gzip'd one, the whole file on one rank and when TESSERA_MATRIX_MARKET_READ=whole
// asks; another value of it is refused on every rank.
TEST_F(ParallelMatrixMarket, TheRouteTakenAndItsSwitch) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t n = 57;
  const std::string plain = dir.write("plain.mtx", random_file(rng, n, 400, "real", "general"));
  const RowPartition p = RowPartition::balanced_rows(n, comm.size());
  const std::int64_t begin = p.begin(comm.rank()), end = p.end(comm.rank());
  std::string route;
  const RowBlock by_default = read_matrix_market_rows(comm, plain, begin, end, &route);
  EXPECT_EQ(route, route_of(comm, kByBytes));
  ASSERT_EQ(setenv("TESSERA_MATRIX_MARKET_READ", "whole", 1), 0);
  const RowBlock whole = read_matrix_market_rows(comm, plain, begin, end, &route);
  EXPECT_EQ(route, "whole file on every rank (TESSERA_MATRIX_MARKET_READ=whole)");
  EXPECT_EQ(std::vector<double>(whole.values.begin(), whole.values.end()),
            std::vector<double>(by_default.values.begin(), by_default.values.end()));
  ASSERT_EQ(setenv("TESSERA_MATRIX_MARKET_READ", "fast", 1), 0);
  EXPECT_EQ(input_error_on_every_rank(comm, [&] { read_matrix_market_rows(comm, plain, begin, end); }),
            "TESSERA_MATRIX_MARKET_READ=fast: expected auto or whole");
  ASSERT_EQ(unsetenv("TESSERA_MATRIX_MARKET_READ"), 0);
  for (const auto& file : tessera::testing::manifest()) {
    if (file.name != "bcsstk02") continue;
    const RowPartition q = RowPartition::balanced_rows(io::read_matrix_market_header(file.path).rows, comm.size());
    read_matrix_market_rows(comm, file.path, q.begin(comm.rank()), q.end(comm.rank()), &route);
    EXPECT_EQ(route, route_of(comm, kByDataLines)) << "a gzip'd file";
  }
}

/// A 100 x 100 file declaring `declared` entries and holding `entries` clean lines, one an
/// entry, after its 2 header lines (general: scattered; mirrored: strictly below the diagonal),
/// but line `line_number` (1-based in the file; 0: none) replaced by `bad`.
std::string file_with(const std::string& symmetry, int entries, int declared, int line_number, const std::string& bad) {
  std::string text =
      "%%MatrixMarket matrix coordinate real " + symmetry + "\n100 100 " + std::to_string(declared) + "\n";
  for (int k = 0; k < entries; ++k) {
    const int i = symmetry == "general" ? k % 100 + 1 : k % 99 + 2;
    const int j = symmetry == "general" ? (7 * k) % 100 + 1 : i / 2;
    text += k + 3 == line_number ? bad + "\n" : std::to_string(i) + " " + std::to_string(j) + " 1.0\n";
  }
  return text;
}

// The whole-file reader's message, whichever rank's range holds the problem: early, in the
// middle, at the very end.
TEST_F(ParallelMatrixMarket, MalformedFilesAreRefusedWithTheWholeFileReadersMessage) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    std::string name, text;
  };
  const int m = 2000;
  std::vector<Case> cases;
  for (int line : {3, 1001, m + 2}) {
    const std::string at = std::to_string(line);
    cases.push_back({"bad_value_" + at, file_with("general", m, m, line, "4 5 1.0x")});
    cases.push_back({"nan_" + at, file_with("general", m, m, line, "4 5 nan")});
    cases.push_back({"row_out_of_range_" + at, file_with("general", m, m, line, "101 5 1.0")});
    cases.push_back({"fields_" + at, file_with("general", m, m, line, "4 5 1.0 2.0")});
    cases.push_back({"upper_in_lower_" + at, file_with("symmetric", m, m, line, "2 7 1.0")});
    cases.push_back({"skew_diagonal_" + at, file_with("skew-symmetric", m, m, line, "7 7 1.0")});
  }
  // The upper triangle first, the lower from the next line on: the second line is the conflict.
  std::string upper_first = file_with("symmetric", m, m, 3, "1 2 1.0");
  cases.push_back({"upper_first", upper_first});
  // A bad value after a conflict, and a conflict after a bad value: the earlier line is named.
  cases.push_back({"conflict_then_bad", file_with("symmetric", m, m, 1500, "2 7 1.0") + "x"});
  std::string bad_then_conflict = file_with("symmetric", m, m, 400, "4 5 z");
  bad_then_conflict.replace(bad_then_conflict.rfind("\n", bad_then_conflict.size() - 2) + 1, std::string::npos,
                            "2 9 1.0\n");
  cases.push_back({"bad_then_conflict", bad_then_conflict});
  cases.push_back({"too_many", file_with("general", m, m - 1, 0, "")});
  cases.push_back({"too_many_then_comments", file_with("general", m, m - 5, 0, "") + "% tail\n\n"});
  cases.push_back({"too_few", file_with("general", m, m + 3, 0, "")});
  cases.push_back({"too_few_trailing_comment", file_with("general", m, m + 1, 0, "") + "% the end\n"});
  const RowPartition p = RowPartition::balanced_rows(100, comm.size());
  const std::int64_t begin = p.begin(comm.rank()), end = p.end(comm.rank());
  const auto expect_whole_readers_message = [&](const std::string& path) {
    const std::string expected = input_error_on_every_rank(comm, [&] { io::read_matrix_market(path); });
    ASSERT_FALSE(expected.empty()) << path << ": the case is not malformed";
    EXPECT_EQ(input_error_on_every_rank(comm, [&] { read_matrix_market_rows(comm, path, begin, end); }), expected)
        << path;
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expect_whole_readers_message(dir.write(c.name + ".mtx", c.text));
    expect_whole_readers_message(write_gz(comm, dir, c.name + ".mtx.gz", c.text));  // by data lines
  }
  // A gzip stream cut short, and one with a byte flipped: zlib's complaint (or a bad line, or the
  // checksum's) at the line where the whole-file reader meets it.
  std::ifstream in(write_gz(comm, dir, "clean.mtx.gz", random_file(rng, 100, 20000, "real", "general")),
                   std::ios::binary);
  const std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(gz.size(), 100000u);  // random values: zlib's 32 KiB window cannot shrink it much
  std::string flipped = gz;
  flipped[gz.size() / 2] = static_cast<char>(flipped[gz.size() / 2] ^ 0x5a);
  expect_whole_readers_message(dir.write("truncated.mtx.gz", gz.substr(0, gz.size() / 2)));
  expect_whole_readers_message(dir.write("flipped.mtx.gz", flipped));
}

}  // namespace
}  // namespace tessera::dist
