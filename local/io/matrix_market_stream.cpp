#include "local/io/matrix_market_stream.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tessera::io {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

/// Splits `line` at spaces/tabs into at most `max` tokens; returns how many there are in all
/// (counting past `max`), so a caller can report "found N fields".
int split(std::string_view line, std::string_view* tokens, int max) {
  int count = 0;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (count < max) tokens[count] = line.substr(start, i - start);
    ++count;
  }
  return count;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Whole-token integer; from_chars does not take a leading '+', Fortran writers emit one.
bool parse_int64(std::string_view token, std::int64_t& out) {
  if (token.size() > 1 && token[0] == '+' && token[1] != '-') token.remove_prefix(1);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  return ec == std::errc() && end == token.data() + token.size();
}

/// Shown in messages: the offending text, cut short.
std::string quoted(std::string_view token) {
  return "'" + std::string(token.substr(0, 40)) + (token.size() > 40 ? "...'" : "'");
}

}  // namespace

bool is_data_line(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_blank(line[i])) ++i;
  return i < line.size() && line[i] != '%';
}

MatrixMarketStream::MatrixMarketStream(const std::string& path) : lines_(path) {
  read_banner();
  read_size_line();
}

MatrixMarketStream::MatrixMarketStream(const std::string& path, const MatrixMarketHeader& header,
                                       const MatrixMarketRange& range)
    : lines_(path, range.begin, range.end, range.first_line), header_(header), read_(range.first_data_line),
      range_(true) {
  TESSERA_ASSERT(is_coordinate() || header.symmetry == "general", path,
                 ": only coordinate and general array files are read by ranges");
  if (!is_coordinate() && header.rows > 0) {  // a general array's data line d is entry (d % rows, d / rows)
    array_row_ = read_ % header.rows;
    array_col_ = read_ / header.rows;
  }
}

void MatrixMarketStream::start_range(const DataLineRange& range) {
  TESSERA_ASSERT(read_ == 0 && 0 <= range.first && range.first <= range.end, lines_.path(), ": data lines [",
                 range.first, ", ", range.end, ")");
  range_ = true;
  range_end_ = range.end;
  std::string_view line;
  while (read_ < range.first && next_data_line(line)) {
    if (!is_coordinate()) advance_array_position();
    ++read_;
  }
}

void MatrixMarketStream::read_banner() {
  std::string_view line;
  if (!lines_.next(line))  // said to be on line 1, where the banner should be
    throw InputError(detail::concat(lines_.path(), ":1: empty file: expected a %%MatrixMarket banner"));
  std::string_view t[5];
  const int n = split(line, t, 5);
  if (n == 0 || lower(t[0]) != "%%matrixmarket")
    fail("not a Matrix Market file: the first line must start with %%MatrixMarket, found ", quoted(line));
  if (n != 5)
    fail("banner has ", n, " fields, expected 5: %%MatrixMarket matrix <format> <field> <symmetry>");
  const std::string object = lower(t[1]), format = lower(t[2]), field = lower(t[3]), symmetry = lower(t[4]);
  if (object != "matrix") fail("unsupported object ", quoted(t[1]), " in the banner (expected 'matrix')");
  if (format != "coordinate" && format != "array")
    fail("unknown format ", quoted(t[2]), " in the banner (expected 'coordinate' or 'array')");
  if (field == "complex")
    fail("field 'complex' is not supported: Tessera is real-valued (fields real, integer, pattern)");
  if (field != "real" && field != "integer" && field != "pattern" && field != "double")
    fail("unknown field ", quoted(t[3]), " in the banner (expected 'real', 'integer' or 'pattern')");
  if (symmetry == "hermitian")
    fail("symmetry 'hermitian' is not supported: it implies complex values and Tessera is real-valued");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    fail("unknown symmetry ", quoted(t[4]), " in the banner (expected 'general', 'symmetric' or 'skew-symmetric')");
  if (format == "array" && field == "pattern") fail("an 'array' file cannot have field 'pattern'");
  header_.format = format;
  header_.field = field == "double" ? "real" : field;  // 'double' is an old synonym some writers use
  header_.symmetry = symmetry;
}

bool MatrixMarketStream::next_data_line(std::string_view& line) {
  while (lines_.next(line))
    if (is_data_line(line)) return true;
  return false;
}

void MatrixMarketStream::read_size_line() {
  std::string_view line;
  if (!next_data_line(line)) fail("missing size line after the banner");
  const bool coordinate = is_coordinate();
  const int expected = coordinate ? 3 : 2;
  std::string_view t[3];
  const int n = split(line, t, 3);
  if (n != expected)
    fail("size line has ", n, " fields, expected ", expected, coordinate ? " (rows columns entries)" : " (rows columns)");
  std::int64_t size[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i)
    if (!parse_int64(t[i], size[i]) || size[i] < 0)
      fail("size line: ", quoted(t[i]), " is not a non-negative integer");
  header_.rows = size[0];
  header_.cols = size[1];
  if (mirrored() && header_.rows != header_.cols)
    fail(header_.symmetry, " matrix must be square, the size line says ", header_.rows, "x", header_.cols);
  if (coordinate) {
    header_.entries = size[2];
    return;
  }
  const std::int64_t r = header_.rows, c = header_.cols;
  if (c != 0 && r > INT64_MAX / c) fail("array of ", r, "x", c, " entries is too large");
  header_.entries = header_.symmetry == "general" ? r * c : header_.symmetry == "symmetric" ? r * (r + 1) / 2 : r * (r - 1) / 2;
  array_row_ = skew() ? 1 : 0;
}

bool MatrixMarketStream::next(MatrixMarketEntry& entry) {
  std::string_view line;
  if (read_ >= range_end_) return false;  // the next range's first data line
  if (read_ >= header_.entries) {  // a range may start past the declared count
    if (next_data_line(line)) fail("more entries than the ", header_.entries, " declared in the size line");
    return false;
  }
  if (!next_data_line(line)) {
    if (range_) return false;  // the next range's lines, or the caller's count, go on
    fail("file ends after ", read_, " of the ", header_.entries, " entries declared in the size line (truncated?)");
  }
  if (is_coordinate())
    parse_coordinate(line, entry);
  else
    parse_array(line, entry);
  ++read_;
  return true;
}

void MatrixMarketStream::parse_coordinate(std::string_view line, MatrixMarketEntry& entry) {
  const bool pattern = header_.field == "pattern";
  const int expected = pattern ? 2 : 3;
  std::string_view t[3];
  const int n = split(line, t, 3);
  // Some pattern files in circulation (SuiteSparse's copy of Pajek/Ragusa16) carry a value
  // anyway: one extra numeric field is checked and ignored, as the banner says pattern.
  const bool pattern_with_value = pattern && n == 3;
  if (n != expected && !pattern_with_value)
    fail("entry has ", n, " fields, expected ", expected, pattern ? " (row column)" : " (row column value)");
  entry.row = parse_index(t[0], "row", header_.rows) - 1;
  entry.col = parse_index(t[1], "column", header_.cols) - 1;
  if (pattern_with_value) parse_value(t[2]);
  entry.value = pattern ? 1.0 : parse_value(t[2]);
  if (mirrored()) check_triangle(entry);
}

void MatrixMarketStream::parse_array(std::string_view line, MatrixMarketEntry& entry) {
  std::string_view t[1];
  const int n = split(line, t, 1);
  if (n != 1) fail("array entry has ", n, " fields, expected 1 (value)");
  entry.row = array_row_;
  entry.col = array_col_;
  entry.value = parse_value(t[0]);
  advance_array_position();
}

void MatrixMarketStream::advance_array_position() {
  // Column-major; symmetric files store the lower triangle, skew-symmetric the strict one.
  if (++array_row_ == header_.rows) {
    ++array_col_;
    array_row_ = header_.symmetry == "general" ? 0 : array_col_ + (skew() ? 1 : 0);
  }
}

std::int64_t MatrixMarketStream::parse_index(std::string_view token, const char* which, std::int64_t bound) {
  std::int64_t index = 0;
  if (!parse_int64(token, index)) fail(which, " index ", quoted(token), " is not an integer");
  if (index < 1 || index > bound) fail(which, " index ", index, " is out of range [1, ", bound, "]");
  return index;
}

double MatrixMarketStream::parse_value(std::string_view token) {
  double value = 0;
  if (header_.field == "integer") {
    std::int64_t integer = 0;
    if (!parse_int64(token, integer)) fail("value ", quoted(token), " is not an integer (the field is 'integer')");
    return static_cast<double>(integer);
  }
  // from_chars: correctly rounded and locale-independent (strtod obeys LC_NUMERIC).
  std::string_view digits = token;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::invalid_argument || end != digits.data() + digits.size())
    fail("value ", quoted(token), " is not a number");
  if (ec == std::errc::result_out_of_range) value = std::strtod(token.data(), nullptr);  // inf, or a tiny value
  if (!std::isfinite(value)) fail("value ", quoted(token), " is not finite (NaN and Inf are not allowed)");
  return value;
}

void MatrixMarketStream::check_triangle(const MatrixMarketEntry& entry) {
  if (entry.row == entry.col) {
    if (skew()) fail("diagonal entry (", entry.row + 1, ", ", entry.col + 1,
                     ") in a skew-symmetric matrix, whose diagonal is zero and not stored");
    return;
  }
  // Either triangle is accepted, but not both: a file holding (i,j) and (j,i) would have them
  // summed twice by the expansion, a silent wrong answer.
  const int triangle = entry.row > entry.col ? +1 : -1;
  TriangleEntry& first = triangle > 0 ? lower_ : upper_;
  if (first.line == 0) first = {lines_.line_number(), entry.row, entry.col};
  const TriangleEntry& other = first_in_triangle(-triangle);
  if (!range_ && other.line != 0)
    throw InputError(triangle_conflict(lines_.path(), header_.symmetry, {lines_.line_number(), entry.row, entry.col},
                                       triangle, other.line));
}

}  // namespace tessera::io
