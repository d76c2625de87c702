#include "local/io/gz_line_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "local/core/error.hpp"

namespace tessera::io {
namespace {
constexpr std::size_t kBlockBytes = std::size_t{1} << 22;  // 4 MiB per gzread
}  // namespace

GzLineReader::GzLineReader(const std::string& path) : path_(path), buffer_(kBlockBytes + 1) { open(); }

GzLineReader::GzLineReader(const std::string& path, std::int64_t begin, std::int64_t end, std::int64_t first_line)
    : path_(path), buffer_(kBlockBytes + 1) {
  open();
  if (compressed()) {
    gzclose_r(file_);
    throw InputError(detail::concat(path, ": a gzip'd file cannot be sought: it is cut by data lines, not bytes"));
  }
  TESSERA_ASSERT(0 <= begin && begin <= end, "byte range [", begin, ", ", end, ") of ", path);
  if (begin > 0) {  // the rest of the line holding byte begin - 1 is the range before's ('\n' if one starts here)
    if (gzseek(file_, begin - 1, SEEK_SET) != begin - 1) fail_zlib();
    consumed_ = begin - 1;
    std::string_view earlier;
    next(earlier);
  }
  line_ = first_line - 1;
  range_end_ = end;
}

void GzLineReader::open() {
  errno = 0;
  file_ = gzopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    const char* reason = errno != 0 ? std::strerror(errno) : "zlib could not allocate its state";
    throw InputError(detail::concat(path_, ": cannot open: ", reason));
  }
  gzbuffer(file_, 1u << 20);  // larger than zlib's 8 KiB default: fewer system calls
}

GzLineReader::~GzLineReader() { gzclose_r(file_); }

bool GzLineReader::compressed() const { return gzdirect(file_) == 0; }

bool GzLineReader::next(std::string_view& line) {
  if (offset() >= range_end_) return false;  // the next line starts in the range after
  for (;;) {
    char* const start = buffer_.data() + begin_;
    const std::size_t available = end_ - begin_;
    char* newline = static_cast<char*>(std::memchr(start, '\n', available));
    if (newline == nullptr && eof_) {
      if (available == 0) return false;
      newline = start + available;  // last line has no '\n'; buffer_ has room for the NUL
    }
    if (newline != nullptr) {
      std::size_t length = static_cast<std::size_t>(newline - start);
      *newline = '\0';
      begin_ += length + (begin_ + length < end_ ? 1 : 0);
      if (length > 0 && start[length - 1] == '\r') start[--length] = '\0';
      line = std::string_view(start, length);
      ++line_;
      return true;
    }
    refill();
  }
}

void GzLineReader::refill() {
  const std::size_t kept = end_ - begin_;
  std::memmove(buffer_.data(), buffer_.data() + begin_, kept);
  begin_ = 0;
  end_ = kept;
  if (buffer_.size() - 1 - end_ < kBlockBytes / 2) buffer_.resize(buffer_.size() + kBlockBytes);  // long line
  const std::size_t room = std::min<std::size_t>(buffer_.size() - 1 - end_, INT_MAX);
  const int got = gzread(file_, buffer_.data() + end_, static_cast<unsigned>(room));
  if (got < 0) fail_zlib();
  if (got == 0) {
    int code = Z_OK;
    gzerror(file_, &code);
    if (code != Z_OK) fail_zlib();  // a truncated stream ends in Z_BUF_ERROR, not in -1
    eof_ = true;
  }
  end_ += static_cast<std::size_t>(got);
  consumed_ += got;
}

void GzLineReader::fail_zlib() {
  int code = Z_OK;
  const char* message = gzerror(file_, &code);
  const std::string reason = code == Z_ERRNO ? std::strerror(errno) : message;
  throw InputError(detail::concat(path_, ":", line_ + 1, ": cannot read: ", reason,
                                  code == Z_ERRNO ? "" : " (corrupt or truncated gzip stream)"));
}

}  // namespace tessera::io
