#include "drivers/common/huge_pages.hpp"

#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "local/core/host_array.hpp"

namespace tessera::driver {
namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb=1";
constexpr const char* kReexecMarker = "TESSERA_HUGE_PAGES_REEXECUTED";

// The kernel's THP mode: the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled
// ("always", "madvise", "never"), or "" where the file is absent (no THP support).
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const auto open = line.find('['), close = line.find(']');
  return open != std::string::npos && close > open ? line.substr(open + 1, close - open - 1) : "";
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool tunable_chosen() { return environment("GLIBC_TUNABLES").find("glibc.malloc.hugetlb") != std::string::npos; }

}  // namespace

void use_transparent_huge_pages(char** argv) {
  // Once only: the marker stops a second re-execution even where glibc drops the tunable
  // (secure-execution programs, which are skipped anyway).
  if (environment("TESSERA_HUGE_PAGES") == "0" || !environment(kReexecMarker).empty() || getauxval(AT_SECURE) ||
      tunable_chosen() || thp_mode() != "madvise")
    return;
  const std::string before = environment("GLIBC_TUNABLES");
  const std::string tunables = before.empty() ? kTunable : before + ":" + kTunable;
  setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  setenv(kReexecMarker, "1", 1);
  execv("/proc/self/exe", argv);  // same process (PID, MPI launcher's environment), new heap settings
  // Only reached if execv failed: go on with 4 KiB pages and the environment as it was.
  unsetenv(kReexecMarker);
  if (before.empty())
    unsetenv("GLIBC_TUNABLES");
  else
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
}

namespace {

// The heap's pages, as host_heap_pages reports them.
std::string pages() {
  const std::string mode = thp_mode();
  if (mode == "always") return "transparent huge pages (kernel THP mode always)";
  if (environment("TESSERA_HUGE_PAGES") == "0" && !tunable_chosen()) return "4 KiB pages (TESSERA_HUGE_PAGES=0)";
  if (mode == "madvise" && tunable_chosen())
    return environment("GLIBC_TUNABLES").find(kTunable) != std::string::npos
               ? "transparent huge pages (kernel THP mode madvise, GLIBC_TUNABLES=" + environment("GLIBC_TUNABLES") + ")"
               : "4 KiB pages (GLIBC_TUNABLES=" + environment("GLIBC_TUNABLES") + ")";
  return "4 KiB pages (kernel THP mode " + (mode.empty() ? std::string("unavailable") : mode) + ")";
}

}  // namespace

std::string host_heap_pages() {
  // The tests' poisoning fills every new host array on one thread (it added 0.24 s to a 0.39 s
  // setup at poisson3d:192 on one H100): a run that has it on is not a timing run, and says so.
  return pages() + (detail::poison_host_arrays()
                        ? "; new host arrays poisoned (TESSERA_POISON_HOST_ARRAYS, a test setting: each is filled "
                          "on one thread first, so setup times read high)"
                        : "");
}

}  // namespace tessera::driver
