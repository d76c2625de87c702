#include "drivers/common/dist_source.hpp"

#include "dist/read_matrix_market.hpp"
#include "local/core/error.hpp"
#include "local/core/stopwatch.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"

namespace tessera::driver {

std::pair<std::int64_t, std::int64_t> global_shape(const MatrixSource& source) {
  TESSERA_REQUIRE_INPUT(source.given(), "no matrix given (use a Matrix Market file or --gen SPEC)");
  if (!source.file.empty()) {
    const io::MatrixMarketHeader h = io::read_matrix_market_header(source.file);
    return {h.rows, h.cols};
  }
  const gen::ProblemSpec spec = gen::parse_spec(source.spec);
  return {gen::num_rows(spec), gen::num_cols(spec)};
}

RowBlock source_rows(const MatrixSource& source, std::int64_t begin, std::int64_t end) {
  if (!source.file.empty()) return io::read_matrix_market_rows(source.file, begin, end);
  return gen::generate_rows(gen::parse_spec(source.spec), begin, end);
}

namespace {
/// Collective source_rows: a malformed file or spec seen by one rank (say a bad line inside
/// its rows only) becomes the same InputError on every rank, never a rank hanging in the next
/// collective. A file is read in parallel, each rank parsing a part of it.
RowBlock collective_source_rows(const dist::Communicator& comm, const MatrixSource& source, std::int64_t begin,
                                std::int64_t end, std::string* route = nullptr) {
  if (!source.file.empty()) return dist::read_matrix_market_rows(comm, source.file, begin, end, route);
  RowBlock block;
  std::string error;
  try {
    block = source_rows(source, begin, end);
  } catch (const InputError& e) {
    error = e.what();
  }
  dist::throw_if_any_rank_failed(comm, error);
  return block;
}
}  // namespace

dist::RowPartition choose_partition(const dist::Communicator& comm, const MatrixSource& source,
                                    const std::string& kind) {
  TESSERA_REQUIRE_INPUT(kind == "rows" || kind == "nnz", "unknown --partition '", kind, "' (expected rows or nnz)");
  const std::int64_t rows = global_shape(source).first;
  const dist::RowPartition by_rows = dist::RowPartition::balanced_rows(rows, comm.size());
  if (kind == "rows") return by_rows;
  const int me = comm.rank();
  const RowBlock block = collective_source_rows(comm, source, by_rows.begin(me), by_rows.end(me));
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(block.local_rows()));
  for (std::int64_t r = 0; r < block.local_rows(); ++r) lengths[r] = block.row_ptr[r + 1] - block.row_ptr[r];
  return dist::RowPartition::balanced_nnz(comm, by_rows, lengths);
}

dist::DistMatrix load_distributed(const dist::Communicator& comm, const MatrixSource& source,
                                  const dist::RowPartition& rows, const dist::RowPartition& cols, LoadTimes* times) {
  const int me = comm.rank();
  LoadTimes t;
  Stopwatch clock;
  const RowBlock block = collective_source_rows(comm, source, rows.begin(me), rows.end(me), &t.read_route);
  t.read_seconds = clock.seconds();
  clock.restart();
  dist::DistMatrix a = dist::assemble(comm, block, rows, cols);
  t.assemble_seconds = clock.seconds();
  if (times) *times = t;
  return a;
}

}  // namespace tessera::driver
