#pragma once
// A^T on the rank's CPU threads: ref::transpose's counting sort by ranges of A's rows. Each
// range counts its entries per column of A; a column's ranges then take their places in row
// order of A, so every row of A^T is sorted and the result is ref::transpose's bit for bit on
// any thread count (tests compare the two). Memory: one int32 count per column of A a range.
#include "local/formats/csr.hpp"

namespace tessera::host {

/// ref::transpose(a), in parallel.
Csr<double> transpose(const Csr<double>& a);

}  // namespace tessera::host
