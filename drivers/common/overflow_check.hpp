#pragma once
// Rule 4 for results. A driver checks its operands when it loads them (finite, within the
// precision's range), so a product entry that is NaN, infinite or beyond the result type's
// range means the product overflowed in the chosen precision: C = A*A of entries near 1e200 in
// fp64, or near 1e30 with --precision fp32. Timings and a --check of infinities would be a silent
// wrong answer; the driver reports the first such entry instead and exits 2, as for bad input.
// Each function returns "" when every entry fits, else that message: the distributed drivers
// pass it to dist::throw_if_any_rank_failed (every rank throws the same error), the one-rank
// paths to throw_if_overflowed.
#include <cstdint>
#include <string>
#include <vector>

#include "dist/dist_matrix.hpp"
#include "local/core/precision.hpp"
#include "local/formats/csr.hpp"
#include "local/formats/dense.hpp"

namespace tessera::driver {

/// C's rows, numbered from first_row. `product` names it in the message ("C = A*A").
std::string overflowed_entry(const std::string& product, Precision p, const Csr<double>& c,
                             std::int64_t first_row = 0);

/// A rank's rows of a distributed C (local and non-local blocks).
std::string overflowed_entry(const std::string& product, Precision p, const dist::DistMatrix& c);

/// Y (rows x k values in `layout`), its rows numbered from first_row; y = A x is k = 1.
std::string overflowed_entry(const std::string& product, Precision p, const std::vector<double>& y, std::int64_t k,
                             Layout layout, std::int64_t first_row = 0);

/// Throws the InputError `message` unless it is empty (one process; collective callers use
/// dist::throw_if_any_rank_failed).
void throw_if_overflowed(const std::string& message);

}  // namespace tessera::driver
