#pragma once
// C = A*B on the rank's CPU threads: the host backend's SpGEMM, behind the distributed
// products' local multiplies when no GPU runs them (dist::host_local_spgemm).
//
// A's rows are cut into ranges of about equal entries of A (local/core/host_ranges.hpp); each
// range repeats ref::spgemm's row step (local/reference/gustavson_row.hpp) into its own piece,
// and stack_rows joins the pieces in order. So C is ref::spgemm's bit for bit on any thread
// count, which the tests check, and ref::spgemm stays the simple serial oracle beside it (the
// split Ginkgo makes between its reference and omp executors).
//
// Memory: each range's dense accumulator holds 16 bytes per column of B.
#include "local/formats/csr.hpp"
#include "local/reference/kernels.hpp"  // ref::SpgemmOptions

namespace tessera::host {

/// ref::spgemm(a, b, options), computed by ranges of rows in parallel.
Csr<double> spgemm(const Csr<double>& a, const Csr<double>& b, const ref::SpgemmOptions& options = {});

}  // namespace tessera::host
