#pragma once
// Host page faults of this process so far (minor + major, every thread). A fault is mostly a page
// touched for the first time: the kernel zeroes it (2 MB at once on a transparent huge page, so a
// count says how often, not how many bytes), and on a virtual machine whose memory grows on use
// the hypervisor may back it first. The drivers report a setup's faults, and the step trace each
// step's, to show where fresh memory is touched.
#include <cstdint>

namespace tessera {

std::int64_t host_page_faults();

}  // namespace tessera
