#pragma once
// A rank-local step that may throw on one rank only (a device SpGEMM out of memory, a cuSPARSE
// failure, bad local data) followed by collectives would leave the other ranks waiting
// forever. call_collectively runs the step, catches on each rank and agrees collectively, so
// either every rank continues or every rank throws the same error (the lowest failing rank's
// text, prefixed with `what` and that rank); a DeviceError stays a DeviceError on every rank,
// anything else becomes an InputError.
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tessera::dist {

class Communicator;

/// Collective: every rank passes the exception it caught (nullptr = fine). If any rank failed,
/// every rank throws the lowest failing rank's error, "<what>: rank <r>: <what()>".
void rethrow_if_any_rank_failed(const Communicator& comm, const std::string& what, std::exception_ptr local);

/// Collective: runs step() on this rank, then rethrow_if_any_rank_failed; returns step()'s result.
template <class Step>
auto call_collectively(const Communicator& comm, const std::string& what, Step&& step) -> decltype(step()) {
  using Result = decltype(step());
  std::exception_ptr failure;
  if constexpr (std::is_void_v<Result>) {
    try {
      step();
    } catch (...) {
      failure = std::current_exception();
    }
    rethrow_if_any_rank_failed(comm, what, failure);
  } else {
    std::optional<Result> result;
    try {
      result.emplace(step());
    } catch (...) {
      failure = std::current_exception();
    }
    rethrow_if_any_rank_failed(comm, what, failure);
    return std::move(*result);
  }
}

}  // namespace tessera::dist
