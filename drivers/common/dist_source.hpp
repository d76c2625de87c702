#pragma once
// Distributed assembly for drivers: each rank generates (--gen) or reads (--A FILE) only its
// own rows, under a partition chosen by --partition rows|nnz.
#include <string>

#include "dist/communicator.hpp"
#include "dist/dist_matrix.hpp"
#include "drivers/common/matrix_source.hpp"

namespace tessera::driver {

/// Global shape of the matrix a source describes (reads only a file's header).
std::pair<std::int64_t, std::int64_t> global_shape(const MatrixSource& source);

/// This rank's rows [begin, end) of the source.
RowBlock source_rows(const MatrixSource& source, std::int64_t begin, std::int64_t end);

/// Row partition of the source: "rows" (whole tile-rows dealt evenly) or "nnz" (each rank about
/// nnz/ranks entries; the rows are generated or read twice to measure them). Collective.
dist::RowPartition choose_partition(const dist::Communicator& comm, const MatrixSource& source,
                                    const std::string& kind);

/// Where load_distributed's time went (this rank's): reading or generating the rows, then
/// assembling them; for a file, how it was read (dist::read_matrix_market_rows' route).
struct LoadTimes {
  double read_seconds = 0, assemble_seconds = 0;
  std::string read_route;
};

/// Collective: the distributed matrix, rows partitioned by `rows`, columns by `cols`.
dist::DistMatrix load_distributed(const dist::Communicator& comm, const MatrixSource& source,
                                  const dist::RowPartition& rows, const dist::RowPartition& cols,
                                  LoadTimes* times = nullptr);

}  // namespace tessera::driver
