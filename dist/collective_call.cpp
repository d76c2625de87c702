#include "dist/collective_call.hpp"

#include <cstdint>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"

namespace tessera::dist {

namespace {

// The class of the error travels with its text, so the ranks agree on both.
enum class ErrorKind : std::int64_t { input = 0, device = 1 };

std::string describe(std::exception_ptr failure, ErrorKind& kind) {
  try {
    std::rethrow_exception(failure);
  } catch (const DeviceError& e) {
    kind = ErrorKind::device;
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

void rethrow_if_any_rank_failed(const Communicator& comm, const std::string& what, std::exception_ptr local) {
  ErrorKind kind = ErrorKind::input;
  const std::string text = local ? detail::concat(what, ": rank ", comm.rank(), ": ", describe(local, kind)) : "";
  const std::int64_t first_failed =
      comm.allreduce(static_cast<std::int64_t>(local ? comm.rank() : comm.size()), ReduceOp::min);
  if (first_failed == comm.size()) return;
  const int root = static_cast<int>(first_failed);
  const std::string message = comm.broadcast(text, root);
  const std::int64_t agreed_kind = comm.allreduce(comm.rank() == root ? static_cast<std::int64_t>(kind) : 0, ReduceOp::max);
  if (agreed_kind == static_cast<std::int64_t>(ErrorKind::device)) throw DeviceError(message);
  throw InputError(message);
}

}  // namespace tessera::dist
