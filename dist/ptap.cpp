#include "dist/ptap.hpp"

#include <algorithm>
#include <climits>
#include <optional>
#include <utility>
#include <vector>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "dist/summed_rows.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/step_trace.hpp"
#include "local/core/stopwatch.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::dist {

namespace {

// The outer product reads a held P only where A_ext is held by the same backend: then A*P's
// host B_ext is not needed before a recompute.
bool reads_held_p(const ExtendedA& a_extended, const std::shared_ptr<HeldOperand>& held_p) {
  return held_p && a_extended.held;
}

}  // namespace

DistPtap::DistPtap(const Communicator& comm, const DistMatrix& a, const DistMatrix& p, LocalSpgemm local,
                   ExtendedA a_extended, std::optional<Csr<double>> p_transposed, std::shared_ptr<HeldOperand> held_p)
    : ap_(comm, a, p, std::move(local), a_extended,
          reads_held_p(a_extended, held_p) ? HostBExtended::at_first_refresh : HostBExtended::at_symbolic) {
  TESSERA_REQUIRE_INPUT(a.row_partition == p.row_partition, "ptap: A's row partition differs from P's");
  const Stopwatch clock;
  std::optional<trace::Step> step(std::in_place, "ptap.transpose_p");
  if (p_transposed)
    take_p_transposed(comm, p, std::move(*p_transposed));
  else
    transpose_p_once(p);
  step.reset();
  std::shared_ptr<HeldOperand> t_on_device;  // T where the backend made it, if it keeps it
  Csr<double> t = outer_product(comm, p, reads_held_p(a_extended, held_p) ? held_p.get() : nullptr, &t_on_device);
  held_p.reset();  // the backend's copies are freed here, before the return exchanges
  const std::vector<std::int64_t>& global_col = ap_.compact_to_global();  // T's columns -> C's
  step.emplace("ptap.return_pattern");
  const std::int64_t n_own = p.local.cols;
  // T's rows are read as sorted and in range below, and sent: a broken local product is an
  // InputError on every rank before any exchange, never garbage.
  const std::string broken = compact_block_error(t, global_col, n_own + p.nonlocal.cols, p.global_cols());
  throw_if_any_rank_failed(comm, broken.empty() ? "" : detail::concat("ptap: rank ", comm.rank(), ": P^T (AP): ", broken));
  owned_partial_ = t.row_ptr[n_own];

  // Symbolic return of the ghost rows of T: lengths, then global columns.
  const ExchangePattern back = p.halo.pattern.reversed();
  std::vector<std::int64_t> send_lengths(static_cast<std::size_t>(back.send_count()));
  for (std::size_t g = 0; g < send_lengths.size(); ++g) send_lengths[g] = t.row_length(n_own + g);
  std::vector<std::int64_t> recv_lengths(static_cast<std::size_t>(back.recv_count()));
  exchange(comm, back, sizeof(std::int64_t), send_lengths.data(), recv_lengths.data());
  return_entries_ = back.expanded(send_lengths, recv_lengths);
  std::vector<std::int64_t> send_cols;
  send_cols.reserve(static_cast<std::size_t>(return_entries_.send_count()));
  for (std::int64_t k = owned_partial_; k < t.nnz(); ++k) send_cols.push_back(global_col[t.col_idx[k]]);
  std::vector<std::int64_t> recv_cols(static_cast<std::size_t>(return_entries_.recv_count()));
  exchange(comm, return_entries_, sizeof(std::int64_t), send_cols.data(), recv_cols.data());

  // C's pattern and each contribution's entry (most rows are T's own rows as they are). Where
  // sum_is_own_rows (one rank), C is T itself, handed over; such a rank sends and receives
  // nothing, so it skips the value exchange (empty messages are never posted).
  step.emplace("ptap.pattern");
  const ReceivedRows received{p.halo.send_local, recv_lengths, recv_cols};
  c_is_own_partial_ = sum_is_own_rows(t, global_col, received, p.col_partition, comm.rank());
  SummedPattern pattern = c_is_own_partial_ ? own_rows_as_sum(comm, std::move(t), p.col_partition)
                                            : summed_pattern(comm, t, global_col, received, p.col_partition);
  c_ = std::move(pattern.sum);
  sum_map_ = std::move(pattern.map);
  if (t_on_device) keep_outer_product(std::move(t_on_device), global_col);
  entries_ = c_.nnz();
  local_entries_ = c_.local.nnz();
  c_partition_ = c_.row_partition;
  if (!c_is_own_partial_) {
    step.emplace("ptap.sum");
    add_contributions(sum_map_, t, received_contributions(comm, t).data(), c_);
  }
  step.reset();

  stats_ = ap_.stats();
  stats_.remote_row_bytes += back.recv_count() * static_cast<std::int64_t>(sizeof(std::int64_t)) +
                             return_entries_.recv_count() * static_cast<std::int64_t>(sizeof(std::int64_t) + sizeof(double));
  stats_.compute_seconds += clock.seconds();  // includes the return exchanges (not overlapped)
  stats_.rows = c_.owned_rows();
  stats_.nnz = c_.nnz();
}

void DistPtap::keep_outer_product(std::shared_ptr<HeldOperand> t, const std::vector<std::int64_t>& global_of) {
  device_result_ = std::make_shared<KeptOuterProduct>();
  device_result_->t = std::move(t);
  device_result_->t_is_c = c_is_own_partial_;
  if (c_is_own_partial_) return;
  device_result_->global_of = global_of;
  device_result_->merged_rows = sum_map_.merged_rows;
}

// T = P_own^T AP_own over AP's compact columns, both products by the local backend's chain:
// AP is never returned (a device backend keeps it on the GPU between the two). With `held_p`,
// P^T and P's rows of B_ext are the backend's own copies (not this P^T, not uploaded). As in
// CompactSpgemm::multiply, a local failure on one rank is agreed before the return exchanges.
Csr<double> DistPtap::outer_product(const Communicator& comm, const DistMatrix& p, HeldOperand* held_p,
                                    std::shared_ptr<HeldOperand>* on_device) {
  TESSERA_TRACE_STEP("ptap.local_products");
  if (!held_p) return ap_.multiply_left(comm, p_transposed_, "ptap: local products");
  ChainedProduct t = ap_.multiply_left(comm, *held_p, p, "ptap: local products");
  if (on_device) *on_device = std::move(t.on_device);
  return std::move(t.product);
}

namespace {

/// P's owned rows over [owned | ghost] columns sorted by column: the counting sort of
/// ref::transpose (rows of P in increasing order, so every row of P^T comes out sorted and the
/// result is exactly ref::transpose(extended_block(p))). In parallel over ranges of P's rows:
/// each range counts its entries per column of P, and places them after the earlier ranges'
/// entries of that column, so the order is the serial one.
class ColumnSort {
 public:
  explicit ColumnSort(const DistMatrix& p)
      : p_(p), rows_(p.owned_rows()), columns_(p.local.cols + p.nonlocal.cols),
        next_(static_cast<std::size_t>(rows_.count())), offsets_(static_cast<std::size_t>(columns_ + 1)) {
    TESSERA_ASSERT(p.owned_rows() <= INT32_MAX, "ptap: ", p.owned_rows(), " rows of P beyond the int32 index of P^T");
    const std::int64_t shift = p.local.cols;
    // next_[range][c]: entries of column c in this range, then where the range's next one goes
    // relative to the column's start. A column holds at most one entry a row of P, so int32.
    rows_.run([&](int range, std::int64_t begin, std::int64_t end) {
      std::vector<std::int32_t>& count = next_[range];
      count.assign(static_cast<std::size_t>(columns_), 0);  // on the range's thread, not all on one
      for (std::int64_t k = p.local.row_ptr[begin]; k < p.local.row_ptr[end]; ++k) ++count[p.local.col_idx[k]];
      for (std::int64_t k = p.nonlocal.row_ptr[begin]; k < p.nonlocal.row_ptr[end]; ++k)
        ++count[shift + p.nonlocal.col_idx[k]];
    });
    // Each column's ranges in order (in parallel over ranges of columns), then the columns' starts.
    offsets_[0] = 0;
    host::for_ranges(columns_, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t c = begin; c < end; ++c) {
        std::int32_t at = 0;
        for (std::vector<std::int32_t>& count : next_) at += std::exchange(count[c], at);
        offsets_[c + 1] = at;
      }
    });
    for (std::int64_t c = 0; c < columns_; ++c) offsets_[c + 1] += offsets_[c];
  }

  /// P^T's row offsets (one a column of P: small beside P's entries).
  const HostArray<std::int64_t>& offsets() const { return offsets_; }

  /// place(dst, row, source, value) for each of P's entries, in parallel: `dst` its position in
  /// P^T, `source` its position among P's [local | nonlocal] values. Once per sort.
  template <class Place>
  void place(Place&& place) {
    const std::int64_t local_entries = p_.local.nnz(), shift = p_.local.cols;
    rows_.run([&](int range, std::int64_t begin, std::int64_t end) {
      std::vector<std::int32_t>& slot = next_[range];
      for (std::int64_t r = begin; r < end; ++r) {
        for (std::int64_t k = p_.local.row_ptr[r]; k < p_.local.row_ptr[r + 1]; ++k) {
          const std::int64_t c = p_.local.col_idx[k];
          place(offsets_[c] + slot[c]++, r, k, p_.local.values[k]);
        }
        for (std::int64_t k = p_.nonlocal.row_ptr[r]; k < p_.nonlocal.row_ptr[r + 1]; ++k) {
          const std::int64_t c = shift + p_.nonlocal.col_idx[k];
          place(offsets_[c] + slot[c]++, r, local_entries + k, p_.nonlocal.values[k]);
        }
      }
    });
  }

 private:
  const DistMatrix& p_;
  const host::RangeSplit rows_;
  const std::int64_t columns_;
  std::vector<std::vector<std::int32_t>> next_;
  HostArray<std::int64_t> offsets_;
};

}  // namespace

// P^T's pattern and values once. Where each entry comes from is left to the first recompute
// (refresh_p_transposed): 8 bytes an entry of scattered writes that a setup never refreshed
// does not need.
void DistPtap::transpose_p_once(const DistMatrix& p) {
  p_entries_ = p.nnz();
  p_local_entries_ = p.local.nnz();
  p_local_cols_ = p.local.cols;
  ColumnSort sort(p);
  p_transposed_ = Csr<double>::empty(p.local.cols + p.nonlocal.cols, p.owned_rows());
  p_transposed_.row_ptr = sort.offsets();
  p_transposed_.col_idx.resize(static_cast<std::size_t>(p.nnz()));
  p_transposed_.values.resize(static_cast<std::size_t>(p.nnz()));
  sort.place([&](std::int64_t dst, std::int64_t row, std::int64_t, double value) {
    p_transposed_.col_idx[dst] = static_cast<std::int32_t>(row);
    p_transposed_.values[dst] = value;
  });
}

void DistPtap::take_p_transposed(const Communicator& comm, const DistMatrix& p, Csr<double>&& p_transposed) {
  const bool fits = p_transposed.rows == p.local.cols + p.nonlocal.cols && p_transposed.cols == p.owned_rows() &&
                    p_transposed.nnz() == p.nnz() &&
                    p_transposed.row_ptr.size() == static_cast<std::size_t>(p_transposed.rows + 1) &&
                    p_transposed.values.size() == p_transposed.col_idx.size();
  throw_if_any_rank_failed(comm, fits ? ""
                                      : detail::concat("ptap: rank ", comm.rank(), ": the given P^T is ",
                                                       p_transposed.rows, "x", p_transposed.cols, " with ",
                                                       p_transposed.nnz(), " entries; P's transpose is ",
                                                       p.local.cols + p.nonlocal.cols, "x", p.owned_rows(), " with ",
                                                       p.nnz()));
  p_entries_ = p.nnz();
  p_local_entries_ = p.local.nnz();
  p_local_cols_ = p.local.cols;
  p_transposed_ = std::move(p_transposed);
}

// New values of P into P^T through each entry's source, which the first refresh records (by
// the same sort, so it matches P^T's entries whoever made them). A P^T handed over
// (take_p_local_transposed) is made anew by that sort, with P's current values.
void DistPtap::refresh_p_transposed(const DistMatrix& p) {
  const bool remake = p_transposed_taken_;
  if (remake) {
    p_transposed_ = Csr<double>::empty(p.local.cols + p.nonlocal.cols, p.owned_rows());
    p_transposed_.col_idx.resize(static_cast<std::size_t>(p_entries_));
    p_transposed_.values.resize(static_cast<std::size_t>(p_entries_));
    p_transposed_taken_ = false;
  }
  if (remake || p_transposed_source_.size() != static_cast<std::size_t>(p_entries_)) {
    ColumnSort sort(p);
    if (remake) p_transposed_.row_ptr = sort.offsets();
    p_transposed_source_.resize(static_cast<std::size_t>(p_entries_));
    sort.place([&](std::int64_t dst, std::int64_t row, std::int64_t source, double value) {
      p_transposed_source_[dst] = source;
      if (remake) {
        p_transposed_.col_idx[dst] = static_cast<std::int32_t>(row);
        p_transposed_.values[dst] = value;
      }
    });
    if (remake) return;
  }
  const std::int64_t local_entries = p.local.nnz();
  host::for_ranges(static_cast<std::int64_t>(p_transposed_source_.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) {
      const std::int64_t source = p_transposed_source_[k];
      p_transposed_.values[k] =
          source < local_entries ? p.local.values[source] : p.nonlocal.values[source - local_entries];
    }
  });
}

Csr<double> DistPtap::p_local_transposed() const {
  TESSERA_ASSERT(!p_transposed_taken_, "ptap: P^T was handed over (take_p_local_transposed) and not made again");
  // Rows below P's owned column count hold P.local's entries only (ghost columns are shifted
  // past them), each row in P's row order: the counting sort ref::transpose makes.
  const auto rows = static_cast<std::size_t>(p_local_cols_);
  const auto entries = static_cast<std::size_t>(p_transposed_.row_ptr[rows]);
  Csr<double> t;
  t.rows = p_local_cols_;
  t.cols = p_transposed_.cols;
  t.row_ptr = copy_on_threads(p_transposed_.row_ptr.data(), rows + 1);
  t.col_idx = copy_on_threads(p_transposed_.col_idx.data(), entries);
  t.values = copy_on_threads(p_transposed_.values.data(), entries);
  return t;
}

Csr<double> DistPtap::take_p_local_transposed() {
  TESSERA_ASSERT(!p_transposed_taken_, "ptap: P^T was handed over already");
  // The rows below P's owned column count are a prefix of every array (see above).
  Csr<double> t = std::exchange(p_transposed_, Csr<double>{});
  const auto entries = static_cast<std::size_t>(t.row_ptr[static_cast<std::size_t>(p_local_cols_)]);
  t.rows = p_local_cols_;
  t.row_ptr.resize(static_cast<std::size_t>(p_local_cols_ + 1));
  t.col_idx.resize(entries);
  t.values.resize(entries);
  p_transposed_taken_ = true;
  return t;
}

std::vector<double> DistPtap::received_contributions(const Communicator& comm, const Csr<double>& t) const {
  std::vector<double> received(static_cast<std::size_t>(return_entries_.recv_count()));
  exchange(comm, return_entries_, sizeof(double), t.values.data() + owned_partial_, received.data());
  return received;
}

std::vector<std::int64_t> DistPtap::contribution_positions(const DistMatrix& c) const {
  return dist::contribution_positions(sum_map_, c);
}

const DistMatrix& DistPtap::result() const {
  TESSERA_ASSERT(!result_taken_, "ptap: C was handed over (take_result): its holder has it");
  return c_;
}

DistMatrix DistPtap::take_result() {
  TESSERA_ASSERT(!result_taken_, "ptap: C was handed over already");
  result_taken_ = true;
  return std::exchange(c_, DistMatrix{});
}

void DistPtap::check_result_shape(const Communicator& comm, const DistMatrix& c) const {
  const bool fits = c.row_partition == c_partition_ && c.col_partition == c_partition_ &&
                    c.local.nnz() == local_entries_ && c.nnz() == entries_;
  throw_if_any_rank_failed(comm, fits ? ""
                                      : detail::concat("ptap recompute: rank ", comm.rank(), "'s C holds ",
                                                       c.owned_rows(), " rows and ", c.local.nnz(), " + ",
                                                       c.nonlocal.nnz(), " entries; the product made ",
                                                       c_partition_.size(comm.rank()), " rows and ", local_entries_,
                                                       " + ", entries_ - local_entries_));
}

void DistPtap::recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& p) {
  TESSERA_ASSERT(!result_taken_, "ptap: C was handed over (take_result): recompute into its holder's C");
  recompute(comm, a, p, c_);
}

void DistPtap::recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& p, DistMatrix& c) {
  check_result_shape(comm, c);
  // P^T's value map reads P's [local | nonlocal] values by position: both blocks' counts must
  // be the symbolic phase's (ap_.refresh then checks A's, collectively too).
  throw_if_any_rank_failed(comm, p.local.nnz() == p_local_entries_ && p.nnz() == p_entries_
                                     ? ""
                                     : detail::concat("ptap recompute: rank ", p.rank, " holds ", p.local.nnz(), " + ",
                                                      p.nonlocal.nnz(), " entries of P, the symbolic phase saw ",
                                                      p_local_entries_, " + ", p_entries_ - p_local_entries_));
  device_result_.reset();  // the symbolic phase's values
  ap_.refresh(comm, a, p);
  const Stopwatch clock;
  refresh_p_transposed(p);
  Csr<double> t = outer_product(comm, p);
  // An internal invariant, but checked on every rank alike: the return exchange comes next.
  const bool same_pattern =
      t.row_ptr[p.local.cols] == owned_partial_ && t.nnz() - owned_partial_ == return_entries_.send_count();
  throw_if_any_rank_failed(comm, same_pattern ? ""
                                              : detail::concat("ptap recompute: rank ", p.rank,
                                                               ": the local outer product changed pattern between "
                                                               "symbolic and numeric (",
                                                               t.nnz(), " entries, the symbolic phase had ",
                                                               owned_partial_ + return_entries_.send_count(), ")"));
  if (c_is_own_partial_)
    c.local.values = std::move(t.values);  // T's entries are C's, in order (counts checked above)
  else
    add_contributions(sum_map_, t, received_contributions(comm, t).data(), c);
  stats_ = ap_.stats();
  stats_.remote_row_bytes += return_entries_.recv_count() * static_cast<std::int64_t>(sizeof(double));
  stats_.compute_seconds += clock.seconds();
  stats_.rows = c.owned_rows();
  stats_.nnz = c.nnz();
}

DistMatrix ptap(const Communicator& comm, const DistMatrix& a, const DistMatrix& p, DistStats* stats) {
  DistPtap product(comm, a, p);
  if (stats) *stats += product.stats();
  return product.take_result();
}

}  // namespace tessera::dist
