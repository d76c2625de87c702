#include "drivers/baselines/baseline.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "local/core/error.hpp"

namespace tessera::baselines {
namespace {

int comm_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

/// Every rank's (row_begin, row_end), gathered.
std::vector<std::int64_t> gather_ranges(MPI_Comm comm, const RowBlock& my_rows) {
  const std::int64_t mine[2] = {my_rows.row_begin, my_rows.row_end};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(comm_size(comm)));
  MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm);
  return all;
}

/// Both baselines smooth with Jacobi-type sweeps (divide by a_ii) on SPD systems: a missing,
/// zero or negative diagonal would fail inside the library on one rank only and leave the
/// others waiting in its collectives, so it is caught here, before any library call.
std::string nonpositive_diagonal(const RowBlock& rows) {
  for (std::int64_t i = 0; i < rows.local_rows(); ++i) {
    const std::int64_t row = rows.row_begin + i;
    double diagonal = 0;
    for (std::int64_t p = rows.row_ptr[i]; p < rows.row_ptr[i + 1]; ++p)
      if (rows.col[p] == row) diagonal = rows.values[p];
    if (!(diagonal > 0))
      return detail::concat("row ", row, " has diagonal ", diagonal,
                            " (a missing entry counts as 0); the baselines solve SPD systems with Jacobi-type "
                            "smoothers and need a positive diagonal");
  }
  return "";
}

/// The first problem with this rank's arguments, or "".
std::string local_problem(const RowBlock& rows, const std::vector<double>& b, const BaselineOptions& o) {
  const std::int64_t n = rows.local_rows();
  if (rows.global_rows != rows.global_cols)
    return detail::concat("the matrix must be square, it is ", rows.global_rows, " x ", rows.global_cols);
  if (static_cast<std::int64_t>(rows.row_ptr.size()) != n + 1 || rows.row_ptr.back() != rows.nnz())
    return detail::concat("row_ptr has ", rows.row_ptr.size(), " entries for ", n, " rows and ", rows.nnz(), " nonzeros");
  if (static_cast<std::int64_t>(b.size()) != n)
    return detail::concat("b has ", b.size(), " entries for rows [", rows.row_begin, ", ", rows.row_end, ")");
  if (o.block_size < 1 || n % o.block_size != 0)
    return detail::concat(n, " local rows are not whole nodes of block size ", o.block_size);
  if (!o.coordinates.empty() && static_cast<std::int64_t>(o.coordinates.size()) != 3 * n)
    return detail::concat("coordinates has ", o.coordinates.size(), " entries, expected 3 per row (", 3 * n, ")");
  if (o.near_null.cols > 0 && (o.near_null.rows != n || o.near_null.layout != Layout::row_major))
    return detail::concat("near_null has ", o.near_null.rows, " rows for ", n, " local rows (row-major expected)");
  if (o.near_null.cols > 0 && !o.coordinates.empty())
    return "near_null and coordinates both given: the near-null space is one or the other";
  if (o.rtol <= 0 || o.max_iterations < 1)
    return detail::concat("rtol must be > 0 and max_iterations >= 1, got ", o.rtol, " and ", o.max_iterations);
  if (n > INT_MAX) return detail::concat(n, " local rows exceed the 32-bit counts MPI and the libraries use");
  return nonpositive_diagonal(rows);
}

}  // namespace

void check_distribution(MPI_Comm comm, const RowBlock& my_rows, const std::vector<double>& my_b,
                        const BaselineOptions& options) {
  // Agree on failure first, so that every rank throws (none is left waiting in a collective).
  const std::string problem = local_problem(my_rows, my_b, options);
  int bad = problem.empty() ? 0 : 1, any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm);
  TESSERA_REQUIRE_INPUT(!any_bad, "baseline input: ", problem.empty() ? "another rank's rows are invalid" : problem);

  const std::vector<std::int64_t> ranges = gather_ranges(comm, my_rows);
  std::int64_t expected_begin = 0;
  for (std::size_t r = 0; r < ranges.size() / 2; ++r) {
    TESSERA_REQUIRE_INPUT(ranges[2 * r] == expected_begin, "baseline input: rank ", r, " holds rows [", ranges[2 * r],
                          ", ", ranges[2 * r + 1], ") but the ranks' rows must be contiguous in rank order, so it must start at ",
                          expected_begin);
    expected_begin = ranges[2 * r + 1];
  }
  TESSERA_REQUIRE_INPUT(expected_begin == my_rows.global_rows, "baseline input: the ranks hold rows [0, ", expected_begin,
                        ") of a ", my_rows.global_rows, "-row matrix");
}

double true_relative_residual(MPI_Comm comm, const RowBlock& my_rows, const std::vector<double>& my_b,
                              const std::vector<double>& my_x) {
  const int ranks = comm_size(comm);
  const int mine = static_cast<int>(my_x.size());
  std::vector<int> counts(ranks), offsets(ranks, 0);
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<double> x(static_cast<std::size_t>(my_rows.global_cols));
  MPI_Allgatherv(my_x.data(), mine, MPI_DOUBLE, x.data(), counts.data(), offsets.data(), MPI_DOUBLE, comm);

  double sums[2] = {0, 0};  // ||r||^2, ||b||^2
  for (std::int64_t i = 0; i < my_rows.local_rows(); ++i) {
    double ax = 0;
    for (std::int64_t p = my_rows.row_ptr[i]; p < my_rows.row_ptr[i + 1]; ++p) ax += my_rows.values[p] * x[my_rows.col[p]];
    const double r = my_b[i] - ax;
    sums[0] += r * r;
    sums[1] += my_b[i] * my_b[i];
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
}

std::pair<std::int64_t, std::int64_t> node_aligned_range(std::int64_t rows, int block_size, int rank, int ranks) {
  TESSERA_REQUIRE_INPUT(block_size >= 1 && rows % block_size == 0, rows, " rows are not whole nodes of block size ",
                        block_size);
  const std::int64_t nodes = rows / block_size, base = nodes / ranks, extra = nodes % ranks;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  const std::int64_t end = begin + base + (rank < extra ? 1 : 0);
  return {begin * block_size, end * block_size};
}

std::string cpu_ranks(MPI_Comm comm) {
  const int n = comm_size(comm);
  return detail::concat("CPU, ", n, n == 1 ? " MPI rank" : " MPI ranks");
}

}  // namespace tessera::baselines
