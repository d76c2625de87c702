// The writers: `coordinate real general` and `array real general`, values printed with 17
// significant digits so that reading the file back gives the same doubles bit for bit.
// A path ending in ".gz" is written gzip-compressed.
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "local/core/error.hpp"
#include "local/io/matrix_market.hpp"

namespace tessera::io {
namespace {

/// Buffered text output through zlib ("wT" writes a plain file through the same calls).
class GzTextWriter {
 public:
  explicit GzTextWriter(const std::string& path) : path_(path) {
    const bool gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    errno = 0;
    file_ = gzopen(path.c_str(), gz ? "wb1" : "wT");  // level 1: 2.7x faster than 6, 7% larger (8.4M entries)
    if (file_ == nullptr)
      throw InputError(detail::concat(path, ": cannot open for writing: ", errno ? std::strerror(errno) : "zlib error"));
    buffer_.reserve(kFlushBytes + 256);
  }
  ~GzTextWriter() {
    if (file_ != nullptr) gzclose_w(file_);
  }
  GzTextWriter(const GzTextWriter&) = delete;
  GzTextWriter& operator=(const GzTextWriter&) = delete;

  template <class... Args>
  void printf(const char* format, Args... args) {
    char line[256];
    const int n = std::snprintf(line, sizeof line, format, args...);
    buffer_.append(line, static_cast<std::size_t>(n));
    if (buffer_.size() >= kFlushBytes) flush();
  }

  /// Flushes and closes; a write error (disk full, ...) is an InputError naming the file.
  void close() {
    flush();
    const int status = gzclose_w(file_);
    file_ = nullptr;
    if (status != Z_OK) throw InputError(detail::concat(path_, ": write failed (zlib status ", status, ")"));
  }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

  void flush() {
    if (buffer_.empty()) return;
    if (gzwrite(file_, buffer_.data(), static_cast<unsigned>(buffer_.size())) != static_cast<int>(buffer_.size())) {
      int code = Z_OK;
      const char* message = gzerror(file_, &code);
      throw InputError(detail::concat(path_, ": write failed: ", code == Z_ERRNO ? std::strerror(errno) : message));
    }
    buffer_.clear();
  }

  std::string path_;
  gzFile file_ = nullptr;
  std::string buffer_;
};

/// The reader refuses NaN/Inf, so the writer does too: a file it writes always reads back.
void require_finite(double v, const std::string& path, std::int64_t i, std::int64_t j) {
  TESSERA_REQUIRE_INPUT(std::isfinite(v), path, ": cannot write entry (", i + 1, ", ", j + 1, ") = ", v,
                        ": Matrix Market files read by Tessera hold finite values only");
}

constexpr const char* kComment = "% written by Tessera (values with 17 significant digits)\n";

}  // namespace

void write_matrix_market(const std::string& path, const Csr<double>& a) {
  validate(a, path);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) require_finite(a.values[k], path, r, a.col_idx[k]);
  GzTextWriter out(path);
  out.printf("%%%%MatrixMarket matrix coordinate real general\n");
  out.printf("%s", kComment);
  out.printf("%lld %lld %lld\n", static_cast<long long>(a.rows), static_cast<long long>(a.cols),
             static_cast<long long>(a.nnz()));
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      out.printf("%lld %d %.17g\n", static_cast<long long>(r + 1), a.col_idx[k] + 1, a.values[k]);
  out.close();
}

void write_matrix_market(const std::string& path, const DenseMatrix& x) {
  TESSERA_REQUIRE_INPUT(x.rows >= 0 && x.cols >= 0 && static_cast<std::int64_t>(x.data.size()) == x.rows * x.cols,
                        path, ": dense matrix ", x.rows, "x", x.cols, " holds ", x.data.size(), " values");
  for (std::int64_t j = 0; j < x.cols; ++j)
    for (std::int64_t i = 0; i < x.rows; ++i) require_finite(x.at(i, j), path, i, j);
  GzTextWriter out(path);
  out.printf("%%%%MatrixMarket matrix array real general\n");
  out.printf("%s", kComment);
  out.printf("%lld %lld\n", static_cast<long long>(x.rows), static_cast<long long>(x.cols));
  for (std::int64_t j = 0; j < x.cols; ++j)  // the format is column-major whatever x's layout
    for (std::int64_t i = 0; i < x.rows; ++i) out.printf("%.17g\n", x.at(i, j));
  out.close();
}

}  // namespace tessera::io
