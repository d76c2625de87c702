#pragma once
// Products larger than the device (issue 3: rmat:20:16 A*A has >= 5.7e9 entries, 68+ GB of C):
// tessera-spgemm runs cuda::hash_spgemm_row_batches and copies nothing back. Per batch it only
// accumulates C's entry count and two checksums on the device (sum and sum of squares of the
// values), and with --check takes a sample of rows; the full C is never held, on the device or
// on the host. The checks, both of which scale with A and B rather than with C:
//   * sum of all entries of C = (1^T A)(B 1) = sum_k colsum(A)_k rowsum(B)_k, exact on the
//     host in O(nnz(A) + nnz(B)); checked within (n_A + N + cols) u sum_k colsum|A| rowsum|B|,
//     the worst-case bound of the products (n_A = A's longest row) plus any order of summing
//     the N entries of C;
//   * sampled rows (200 spread over A, plus A's longest row) against a host Gustavson row:
//     exact pattern, values within 2 n u (|A||B|)_ij (the bound of every SpGEMM test).
// The host helpers (reference_row, sample_rows, SampledRowCheck, expected_checksum) need no
// device; the batch runner exists only when TESSERA_HAVE_CUDA is defined.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "local/formats/csr.hpp"

namespace tessera::driver {

/// Row `row` of A*B by the textbook Gustavson loop (a sorted map as the accumulator): the
/// structural pattern (cancelled entries kept), the values, and (|A||B|)_row as error scale.
struct ReferenceRow {
  std::vector<std::int32_t> cols;
  std::vector<double> values, magnitudes;
};
ReferenceRow reference_row(const Csr<double>& a, const Csr<double>& b, std::int64_t row);

/// `count` rows spread evenly over A (first and last included) plus A's longest row: sorted,
/// distinct, all < a.rows (empty when A has no rows).
std::vector<std::int64_t> sample_rows(const Csr<double>& a, int count);

/// Compares rows of a computed C with reference_row, one row at a time (so C need not exist
/// as a whole): exact pattern; values within 2 n u (|A||B|)_ij, n = A's longest row.
class SampledRowCheck {
 public:
  SampledRowCheck(const Csr<double>& a, const Csr<double>& b, int count = 200);
  const std::vector<std::int64_t>& rows() const { return rows_; }
  /// One computed row (columns and values of C's row `row`, `length` entries).
  void compare(std::int64_t row, const std::int32_t* cols, const double* values, std::int64_t length);
  /// Every sampled row compared, every pattern equal, every value within the bound.
  bool pass() const;
  double bound() const { return bound_; }
  nlohmann::json json() const;
  /// "N rows, max |c - ref| / (|A||B|) = e, bound b: PASS/FAIL (sampled rows)".
  std::string summary() const;

 private:
  const Csr<double>& a_;
  const Csr<double>& b_;
  std::vector<std::int64_t> rows_;
  double bound_ = 0, worst_ = 0;
  std::int64_t compared_ = 0, pattern_mismatches_ = 0;
  std::string first_mismatch_;
};

/// sum_ij (A B)_ij and sum_ij (|A||B|)_ij from the column sums of A and row sums of B.
struct ProductChecksum {
  double sum = 0, magnitude = 0;
};
ProductChecksum expected_checksum(const Csr<double>& a, const Csr<double>& b);

#if defined(TESSERA_HAVE_CUDA)
struct RowBatchOptions {
  std::int64_t max_batch_nnz = 0;  // entries of C per batch; 0: sized from free device memory
  bool check = false;              // sampled rows against reference_row
  std::string reason;              // why the batches run ("--row-batches", "one-shot out of memory")
};

/// Entries of C per batch that a third of the free device memory holds (C's columns and
/// values: 12 bytes an entry), capped at 2^30; the rest is left to the hash tables.
std::int64_t batch_nnz_from_free_memory();

/// C = A*B in row batches, timed as a whole (symbolic count, batches, checksums; with check,
/// the copy of the sampled rows, compared after the clock stops), with the printed
/// "Tessera (hash, batches)" line. `best_cusparse_ms` > 0 adds the speedup column.
/// JSON: batches, max_batch_nnz, c_nnz, ms, gflops, peak_bytes, checksum{...}, sampled_check{...},
/// pass (false when a checksum or the sampled rows failed).
nlohmann::json run_hash_row_batches(const Csr<double>& a, const Csr<double>& b, const RowBatchOptions& options,
                                    double flops, double best_cusparse_ms);
#endif

}  // namespace tessera::driver
