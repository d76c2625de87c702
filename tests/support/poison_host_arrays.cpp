// Compiled into every test program (cmake/TesseraTesting.cmake): new host arrays hold 0xff
// bytes (local/core/host_array.hpp), so an entry that a producer sized and never wrote reads as
// NaN or -1 in every test, host or GPU, however the program is started, instead of as the zero
// a fresh page happens to hold. An explicit TESSERA_POISON_HOST_ARRAYS=0 still turns it off.
#include <cstdlib>

namespace {
const bool poison_requested = setenv("TESSERA_POISON_HOST_ARRAYS", "1", /*overwrite=*/0) == 0;
}  // namespace
