#pragma once
// Tessera reports every failure by exception; drivers catch it, print it and exit non-zero.
//   InputError  — the user's data or arguments are wrong (bad file, bad partition, NaN, ...).
//   DeviceError — a CUDA/cuSPARSE/NCCL call failed (out of memory included).
//   Error       — anything else (internal invariant broken).
#include <sstream>
#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InputError : public Error {
 public:
  using Error::Error;
};

class DeviceError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

}  // namespace tessera

/// Throws tessera::InputError with the streamed message when `cond` is false.
#define TESSERA_REQUIRE_INPUT(cond, ...) \
  do {                                   \
    if (!(cond)) throw ::tessera::InputError(::tessera::detail::concat(__VA_ARGS__)); \
  } while (0)

/// Throws tessera::Error (an internal bug, not a user error) when `cond` is false.
#define TESSERA_ASSERT(cond, ...)                                                      \
  do {                                                                                 \
    if (!(cond))                                                                       \
      throw ::tessera::Error(::tessera::detail::concat(__FILE__, ":", __LINE__, ": ", \
                                                       "internal error: ", __VA_ARGS__)); \
  } while (0)
