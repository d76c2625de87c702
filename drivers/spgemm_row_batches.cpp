#include "drivers/spgemm_row_batches.hpp"

#include "drivers/spgemm_bench_support.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "local/core/error.hpp"
#if defined(TESSERA_HAVE_CUDA)
#include "local/cuda/hash_spgemm.hpp"
#include "local/cuda/vector_ops.hpp"
#endif

namespace tessera::driver {
namespace {

constexpr double kUnitRoundoff = 0x1p-53;

}  // namespace

ReferenceRow reference_row(const Csr<double>& a, const Csr<double>& b, std::int64_t row) {
  TESSERA_REQUIRE_INPUT(row >= 0 && row < a.rows, "reference_row: row ", row, " outside A's ", a.rows, " rows");
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "reference_row: A is ", a.rows, "x", a.cols, " but B has ", b.rows, " rows");
  // Dense accumulators over B's columns plus the list of columns touched: O(products) for the
  // longest rows of power-law matrices, where a map per entry would take minutes.
  std::vector<double> value(b.cols, 0.0), magnitude(b.cols, 0.0);
  std::vector<char> touched(b.cols, 0);
  ReferenceRow out;
  for (std::int64_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p) {
    const std::int64_t k = a.col_idx[p];
    for (std::int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
      const std::int32_t j = b.col_idx[q];
      if (!touched[j]) touched[j] = 1, out.cols.push_back(j);
      value[j] += a.values[p] * b.values[q];
      magnitude[j] += std::abs(a.values[p]) * std::abs(b.values[q]);
    }
  }
  std::sort(out.cols.begin(), out.cols.end());
  for (const std::int32_t j : out.cols) {
    out.values.push_back(value[j]);
    out.magnitudes.push_back(magnitude[j]);
  }
  return out;
}

std::vector<std::int64_t> sample_rows(const Csr<double>& a, int count) {
  TESSERA_REQUIRE_INPUT(count >= 1, "sample_rows: count must be >= 1, got ", count);
  std::vector<std::int64_t> rows;
  if (a.rows == 0) return rows;
  for (int s = 0; s < count; ++s)  // evenly spread, first and last row included
    rows.push_back(count == 1 ? 0 : std::int64_t((long double)(a.rows - 1) * s / (count - 1)));
  std::int64_t longest = 0;
  for (std::int64_t i = 1; i < a.rows; ++i)
    if (a.row_length(i) > a.row_length(longest)) longest = i;
  rows.push_back(longest);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

SampledRowCheck::SampledRowCheck(const Csr<double>& a, const Csr<double>& b, int count)
    : a_(a), b_(b), rows_(sample_rows(a, count)),
      bound_(2.0 * double(std::max<std::int64_t>(1, longest_row(a))) * kUnitRoundoff) {}

void SampledRowCheck::compare(std::int64_t row, const std::int32_t* cols, const double* values, std::int64_t length) {
  const ReferenceRow want = reference_row(a_, b_, row);
  ++compared_;
  const bool same_pattern =
      std::int64_t(want.cols.size()) == length && std::equal(want.cols.begin(), want.cols.end(), cols);
  if (!same_pattern) {
    if (pattern_mismatches_++ == 0)
      first_mismatch_ = detail::concat("row ", row, ": ", length, " entries, reference ", want.cols.size());
    return;
  }
  for (std::int64_t e = 0; e < length; ++e) {
    const double scale = want.magnitudes[e] > 0 ? want.magnitudes[e] : 1.0;
    const double err = std::abs(values[e] - want.values[e]) / scale;
    worst_ = std::isnan(err) ? err : std::max(worst_, err);  // NaN sticks: a NaN value fails
  }
}

bool SampledRowCheck::pass() const {
  return compared_ == std::int64_t(rows_.size()) && pattern_mismatches_ == 0 && worst_ <= bound_;
}

nlohmann::json SampledRowCheck::json() const {
  nlohmann::json j = {{"rows_sampled", rows_.size()}, {"rows_compared", compared_},
                      {"pattern_mismatches", pattern_mismatches_}, {"max_scaled_error", worst_},
                      {"bound", bound_}, {"pass", pass()}};
  if (!first_mismatch_.empty()) j["first_mismatch"] = first_mismatch_;
  return j;
}

std::string SampledRowCheck::summary() const {
  char line[256];
  std::snprintf(line, sizeof line, "%lld of %zu rows, %lld pattern mismatches, max |c - ref| / (|A||B|) = %.3e, bound %.3e",
                static_cast<long long>(compared_), rows_.size(), static_cast<long long>(pattern_mismatches_), worst_, bound_);
  std::string s = line;
  if (!first_mismatch_.empty()) s += " (first: " + first_mismatch_ + ")";
  return s + (pass() ? ": PASS (sampled rows)" : ": FAIL (sampled rows)");
}

ProductChecksum expected_checksum(const Csr<double>& a, const Csr<double>& b) {
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "expected_checksum: A is ", a.rows, "x", a.cols, " but B has ", b.rows, " rows");
  std::vector<double> col_sum(a.cols, 0.0), col_abs(a.cols, 0.0);
  for (std::int64_t p = 0; p < a.nnz(); ++p) {
    col_sum[a.col_idx[p]] += a.values[p];
    col_abs[a.col_idx[p]] += std::abs(a.values[p]);
  }
  ProductChecksum out;
  for (std::int64_t k = 0; k < b.rows; ++k) {
    double row_sum = 0, row_abs = 0;
    for (std::int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) row_sum += b.values[q], row_abs += std::abs(b.values[q]);
    out.sum += col_sum[k] * row_sum;
    out.magnitude += col_abs[k] * row_abs;
  }
  return out;
}

#if defined(TESSERA_HAVE_CUDA)
namespace {

/// Device sums of a batch's values, accumulated on the host over the batches. The sum is a dot
/// product with a vector of ones, taken in chunks so the ones vector stays small (32 MiB).
class BatchChecksum {
 public:
  BatchChecksum() {
    std::vector<double> ones(kChunk, 1.0);
    ones_.upload(ones);
  }
  void add(std::int64_t n, const double* values) {
    for (std::int64_t begin = 0; begin < n; begin += kChunk)
      sum_ += dot_(std::min(kChunk, n - begin), values + begin, ones_.data());
    sum_of_squares_ += dot_(n, values, values);
  }
  double sum() const { return sum_; }
  double sum_of_squares() const { return sum_of_squares_; }

 private:
  static constexpr std::int64_t kChunk = std::int64_t(1) << 22;
  cuda::DeviceBuffer<double> ones_;
  cuda::DeviceDot dot_;
  double sum_ = 0, sum_of_squares_ = 0;
};

/// A sampled row of C copied back during the batches, compared after the timed run.
struct CopiedRow {
  std::int64_t row = 0;
  std::vector<std::int32_t> cols;
  std::vector<double> values;
};

/// Copies row `local` of a batch back (one row: the batch itself stays on the device).
CopiedRow copy_batch_row(const cuda::DeviceCsr<double>& c, std::int64_t local, std::int64_t row) {
  std::int64_t range[2];
  TESSERA_CUDA_CHECK(cudaMemcpy(range, c.row_ptr.data() + local, sizeof range, cudaMemcpyDeviceToHost));
  CopiedRow out{row, std::vector<std::int32_t>(range[1] - range[0]), std::vector<double>(range[1] - range[0])};
  if (!out.cols.empty()) {
    TESSERA_CUDA_CHECK(cudaMemcpy(out.cols.data(), c.col_idx.data() + range[0], out.cols.size() * sizeof(std::int32_t),
                                  cudaMemcpyDeviceToHost));
    TESSERA_CUDA_CHECK(cudaMemcpy(out.values.data(), c.values.data() + range[0], out.values.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost));
  }
  return out;
}

nlohmann::json checksum_json(const Csr<double>& a, const Csr<double>& b, const BatchChecksum& got, std::int64_t c_nnz) {
  const ProductChecksum want = expected_checksum(a, b);
  const double terms = double(longest_row(a) + longest_row(b) + c_nnz + a.rows + a.cols);
  const double bound = 1.01 * terms * kUnitRoundoff * want.magnitude;
  const double err = std::abs(got.sum() - want.sum);
  return {{"sum", got.sum()}, {"sum_of_squares", got.sum_of_squares()}, {"expected_sum", want.sum},
          {"abs_error", err}, {"bound", bound}, {"pass", err <= bound}};
}

}  // namespace

std::int64_t batch_nnz_from_free_memory() {
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  // free memory and what the pool caches unused (failed lines before this one leave it there)
  return std::clamp<std::int64_t>(cuda::available_device_bytes() / 3 / 12, 1, std::int64_t(1) << 30);
}

nlohmann::json run_hash_row_batches(const Csr<double>& a, const Csr<double>& b, const RowBatchOptions& opt,
                                    double flops, double best_cusparse_ms) {
  TESSERA_REQUIRE_INPUT(opt.max_batch_nnz >= 0, "--row-batches: entries per batch must be >= 0 (0: from free memory)");
  const auto da = cuda::upload(a), db = cuda::upload(b);
  const std::int64_t max_batch = opt.max_batch_nnz > 0 ? opt.max_batch_nnz : batch_nnz_from_free_memory();
  SampledRowCheck sampled(a, b);
  const std::vector<std::int64_t>& wanted = sampled.rows();
  std::size_t next_sample = 0;
  std::vector<CopiedRow> copied;
  BatchChecksum checksum;
  std::int64_t batches = 0, largest_batch = 0;

  // One run, seconds to minutes long, synchronised by every batch's checksum: a host clock
  // around device synchronisations measures it as well as events would.
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::int64_t held = cuda::DeviceMemory::current();
  cuda::DeviceMemory::reset_peak();
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t c_nnz = cuda::hash_spgemm_row_batches(
      da, db, max_batch, [&](std::int64_t first_row, const cuda::DeviceCsr<double>& c) {
        ++batches;
        largest_batch = std::max(largest_batch, c.nnz);
        checksum.add(c.nnz, c.values.data());
        for (; opt.check && next_sample < wanted.size() && wanted[next_sample] < first_row + c.rows; ++next_sample)
          if (wanted[next_sample] >= first_row)  // a row no batch held stays uncompared: the check fails
            copied.push_back(copy_batch_row(c, wanted[next_sample] - first_row, wanted[next_sample]));
      });
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::int64_t peak = cuda::DeviceMemory::peak() - held;

  const double gflops = ms > 0 ? flops / (ms * 1e6) : 0.0;
  char speedup[32] = "-";
  if (best_cusparse_ms > 0 && ms > 0) std::snprintf(speedup, sizeof speedup, "%.2fx", best_cusparse_ms / ms);
  nlohmann::json j = {{"reason", opt.reason}, {"max_batch_nnz", max_batch}, {"batches", batches},
                      {"largest_batch_nnz", largest_batch}, {"c_nnz", c_nnz}, {"ms", ms}, {"gflops", gflops},
                      {"peak_bytes", peak}, {"checksum", checksum_json(a, b, checksum, c_nnz)}};
  if (best_cusparse_ms > 0 && ms > 0) j["speedup_vs_best_cusparse"] = best_cusparse_ms / ms;
  const auto& sum = j["checksum"];
  std::printf("%-26s %10.3f %10.1f %9s %10.1f  %lld batches of <= %lld nnz (%s), C nnz %lld never held; "
              "sum(C) %.6e vs 1'A B1 %.6e (|diff| %.1e, bound %.1e): %s\n",
              "Tessera (hash, batches)", ms, gflops, speedup, peak / kMiB, static_cast<long long>(batches),
              static_cast<long long>(max_batch), opt.reason.c_str(), static_cast<long long>(c_nnz),
              sum["sum"].get<double>(), sum["expected_sum"].get<double>(), sum["abs_error"].get<double>(),
              sum["bound"].get<double>(), sum["pass"].get<bool>() ? "ok" : "FAIL");
  bool pass = sum["pass"].get<bool>();
  if (opt.check) {
    for (const CopiedRow& r : copied) sampled.compare(r.row, r.cols.data(), r.values.data(), std::int64_t(r.cols.size()));
    j["sampled_check"] = sampled.json();
    std::printf("check hash batches vs host rows: %s\n", sampled.summary().c_str());
    pass = pass && sampled.pass();
  }
  j["pass"] = pass;
  return j;
}
#endif

}  // namespace tessera::driver
