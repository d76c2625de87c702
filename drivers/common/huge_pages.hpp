#pragma once
// Transparent huge pages for the drivers' host heap.
//
// The distributed setup builds its hierarchy in host memory, and the first setup of a process
// touches every page of it for the first time: at 0.9M rows a rank it faults about 1 GiB in 4 KiB
// pages, and on the lent GPU machines (virtual machines) those faults cost a third of the setup
// (docs/performance.md, eleventh session). Where the kernel gives transparent huge pages only to
// memory that asks for them (THP mode "madvise", the common default and the GPU machines'
// setting), glibc's malloc asks when the tunable glibc.malloc.hugetlb=1 is set; tunables are read
// when a program starts, so the drivers re-execute themselves once with it, before MPI starts.
// TESSERA_HUGE_PAGES=0 keeps the 4 KiB pages; a GLIBC_TUNABLES that already names the tunable is
// left as it is. Applications that use the library directly (the PETSc plugin) set
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 themselves.
#include <string>

namespace tessera::driver {

/// Call first in main, before MPI or any thread starts. Returns when no re-execution is wanted
/// (or execv failed, which leaves the program as it was).
void use_transparent_huge_pages(char** argv);

/// What the host heap uses, for the drivers' reports: "transparent huge pages (...)" or "4 KiB
/// pages (...)", with the reason, and whether new host arrays are poisoned (a test setting that
/// makes setup times read high).
std::string host_heap_pages();

}  // namespace tessera::driver
