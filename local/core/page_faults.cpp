#include "local/core/page_faults.hpp"

#include <sys/resource.h>

namespace tessera {

std::int64_t host_page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return std::int64_t(u.ru_minflt) + std::int64_t(u.ru_majflt);
}

}  // namespace tessera
