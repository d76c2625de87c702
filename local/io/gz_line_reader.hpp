#pragma once
// GzLineReader: the lines of a text file, plain or gzip'd, read through zlib in large blocks.
// gzread passes a file without the gzip magic bytes through unchanged, so one code path
// serves both. Internal to local/io.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct gzFile_s;  // zlib's handle; kept opaque so zlib.h stays out of this header

namespace tessera::io {

class GzLineReader {
 public:
  /// Opens `path`; InputError naming the file and the OS reason if it cannot be opened.
  explicit GzLineReader(const std::string& path);
  /// The lines that start in bytes [begin, end) of a plain (not gzip'd) file, numbered from
  /// `first_line`: a line that starts before `begin` is the range before's, even where it ends
  /// inside this one. What one rank of a parallel read takes. InputError for a gzip'd file,
  /// whose bytes cannot be sought.
  GzLineReader(const std::string& path, std::int64_t begin, std::int64_t end, std::int64_t first_line);
  ~GzLineReader();
  GzLineReader(const GzLineReader&) = delete;
  GzLineReader& operator=(const GzLineReader&) = delete;

  /// The next line without its "\n" or "\r\n", NUL-terminated in place (so strtod may read
  /// it) and valid until the following call; false at end of file. A read error or a corrupt
  /// or truncated gzip stream is an InputError naming the file and line.
  bool next(std::string_view& line);

  /// 1-based number of the line last returned (0 before the first).
  std::int64_t line_number() const { return line_; }
  /// Byte offset (in the uncompressed text) where the next line starts.
  std::int64_t offset() const { return consumed_ - static_cast<std::int64_t>(end_ - begin_); }
  /// Whether the file is gzip'd (false: plain text, read as it is).
  bool compressed() const;
  const std::string& path() const { return path_; }

 private:
  void open();
  void refill();
  [[noreturn]] void fail_zlib();

  std::string path_;
  gzFile_s* file_ = nullptr;
  std::vector<char> buffer_;         // always one byte larger than the data it holds (the NUL)
  std::size_t begin_ = 0, end_ = 0;  // unread bytes are buffer_[begin_, end_)
  bool eof_ = false;
  std::int64_t line_ = 0;
  std::int64_t consumed_ = 0;           // bytes of text gzread has returned (the seek's start included)
  std::int64_t range_end_ = INT64_MAX;  // no line that starts here or later is returned
};

}  // namespace tessera::io
