#include "dist/compact_spgemm.hpp"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <utility>

#include "dist/collective_call.hpp"
#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/host_ranges.hpp"
#include "local/core/host_sort_unique.hpp"
#include "local/core/step_trace.hpp"
#include "local/core/stopwatch.hpp"
#include "local/host/spgemm.hpp"

namespace tessera::dist {

namespace {

// The compact column space of the local product, sorted: B's owned column range whole, and the
// columns outside it that this rank touches (B's ghosts that an entry uses, the received rows'
// columns), which alone are sorted and searched. An owned column no entry uses stays in the space
// as an empty column: the products' results are the same, and finding the used ones took a pass
// over B's entries (the Galerkin product's compact_columns step fell from 0.012-0.016 s a setup to
// 0.002 s without it at poisson3d:192 on one rank; docs/performance.md, fifty-sixth session).
// Where B is an AMG level's P_tent or P, every owned column has an entry anyway (its aggregate's
// root has one).
class CompactColumns {
 public:
  CompactColumns(const DistMatrix& b, const std::vector<std::int64_t>& remote_cols)
      : begin_(b.col_begin()),
        end_(b.col_begin() + b.local.cols),
        of_owned_(static_cast<std::size_t>(b.local.cols), 0) {
    // Outside columns: B's ghosts that an entry uses, and received columns outside the range.
    std::vector<char> ghost_used(b.ghost_cols.size(), 0);
    for (std::int32_t g : b.nonlocal.col_idx) ghost_used[g] = 1;
    for (std::size_t g = 0; g < ghost_used.size(); ++g)
      if (ghost_used[g]) outside_.push_back(b.ghost_cols[g]);
    for (std::int64_t c : remote_cols)
      if (c < begin_ || c >= end_) outside_.push_back(c);
    host::sort_unique(outside_);  // the received columns repeat: hundreds of thousands on a 3D surface
    left_ = std::lower_bound(outside_.begin(), outside_.end(), begin_) - outside_.begin();
    global_.reserve(outside_.size() + of_owned_.size());
    global_.resize(static_cast<std::size_t>(left_) + of_owned_.size());
    std::copy(outside_.begin(), outside_.begin() + left_, global_.begin());
    host::for_ranges(static_cast<std::int64_t>(of_owned_.size()), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t j = first; j < last; ++j) {
        of_owned_[j] = static_cast<std::int32_t>(left_ + j);
        global_[left_ + j] = begin_ + j;
      }
    });
    touched_owned_ = static_cast<std::int64_t>(of_owned_.size());
    global_.insert(global_.end(), outside_.begin() + left_, outside_.end());
  }

  /// A numbering made before (a product's compact_to_global, over B's owned range [begin, end)).
  CompactColumns(std::vector<std::int64_t> global, std::int64_t begin, std::int64_t end)
      : begin_(begin), end_(end), of_owned_(static_cast<std::size_t>(end - begin), -1), global_(std::move(global)) {
    for (std::size_t i = 0; i < global_.size(); ++i) {
      const std::int64_t c = global_[i];
      if (c >= begin_ && c < end_) {
        of_owned_[c - begin_] = static_cast<std::int32_t>(i);
        ++touched_owned_;
      } else {
        outside_.push_back(c);
        left_ += c < begin_;
      }
    }
  }

  /// Compact index -> global column, increasing.
  std::vector<std::int64_t>& global() { return global_; }
  /// Global column (one this rank touches) -> compact index.
  std::int32_t operator()(std::int64_t c) const {
    if (c >= begin_ && c < end_) return of_owned_[c - begin_];
    const std::int64_t i = std::lower_bound(outside_.begin(), outside_.end(), c) - outside_.begin();
    return static_cast<std::int32_t>(i < left_ ? i : i + touched_owned_);
  }
  std::int32_t owned(std::int32_t local_col) const { return of_owned_[local_col]; }

 private:
  std::int64_t begin_, end_;               // B's owned column range
  std::vector<std::int32_t> of_owned_;     // owned column - begin_ -> compact (-1: not in the space)
  std::vector<std::int64_t> outside_;      // touched columns outside [begin_, end_), sorted
  std::int64_t left_ = 0;                  // outside_ entries left of begin_
  std::int64_t touched_owned_ = 0;
  std::vector<std::int64_t> global_;
};

// B's owned rows then the received rows, over compact columns (B's row order is global column
// order, and the compact numbering is monotone, so each row stays sorted). Row r of B starts
// at row_order_offset(b, r): ranges of rows fill their part in parallel.
HostArray<std::int32_t> compact_b_columns(const DistMatrix& b, const RemoteRows& remote,
                                          const CompactColumns& compact) {
  HostArray<std::int32_t> cols(static_cast<std::size_t>(b.nnz()) + remote.cols().size());  // all written below
  std::vector<std::int32_t> ghost(b.ghost_cols.size());
  for (std::size_t g = 0; g < ghost.size(); ++g) ghost[g] = compact(b.ghost_cols[g]);
  host::for_ranges(b.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    std::int32_t* out = cols.data() + row_order_offset(b, begin);
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t k = b.nonlocal.row_ptr[r];
      const std::int64_t nonlocal_end = b.nonlocal.row_ptr[r + 1];
      for (; k < nonlocal_end && b.ghost_cols[b.nonlocal.col_idx[k]] < b.col_begin(); ++k)
        *out++ = ghost[b.nonlocal.col_idx[k]];
      for (std::int64_t j = b.local.row_ptr[r]; j < b.local.row_ptr[r + 1]; ++j) *out++ = compact.owned(b.local.col_idx[j]);
      for (; k < nonlocal_end; ++k) *out++ = ghost[b.nonlocal.col_idx[k]];
    }
  });
  const std::vector<std::int64_t>& received = remote.cols();
  host::for_ranges(static_cast<std::int64_t>(received.size()), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) cols[b.nnz() + k] = compact(received[k]);
  });
  return cols;
}

// B_ext's pattern over `compact` (its values left to fill_extended_b_values).
Csr<double> extended_b_pattern(const DistMatrix& b, const RemoteRows& remote, const CompactColumns& compact,
                               std::int64_t columns) {
  Csr<double> ext;
  ext.rows = b.owned_rows() + remote.rows();
  ext.cols = columns;
  ext.row_ptr.resize(static_cast<std::size_t>(ext.rows) + 1);  // every offset written below, once
  ext.row_ptr[0] = 0;
  host::for_ranges(b.owned_rows(), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) ext.row_ptr[r + 1] = row_order_offset(b, r + 1);
  });
  for (std::int64_t r = 0; r < remote.rows(); ++r) ext.row_ptr[b.owned_rows() + r + 1] = b.nnz() + remote.row_ptr()[r + 1];
  ext.col_idx = compact_b_columns(b, remote, compact);
  return ext;
}

// The compact renumbering is monotone, so row order of B is B_ext's entry order.
void fill_extended_b_values(const DistMatrix& b, const RemoteRows& remote, Csr<double>& ext) {
  ext.values.resize(static_cast<std::size_t>(b.nnz()) + remote.values().size());
  copy_values_in_row_order(b, ext.values.data());
  std::copy(remote.values().begin(), remote.values().end(), ext.values.begin() + b.nnz());
}

// Whether `ext` has extended_block(a)'s pattern (owned columns, then ghost g as local.cols + g),
// compared in place (no copy of A), by ranges of rows in parallel.
bool is_extended_pattern_of(const Csr<double>& ext, const DistMatrix& a) {
  if (ext.rows != a.owned_rows() || ext.cols != a.local.cols + a.nonlocal.cols || ext.nnz() != a.nnz()) return false;
  const auto shift = static_cast<std::int32_t>(a.local.cols);
  const host::RangeSplit rows(a.owned_rows());
  std::vector<char> same(static_cast<std::size_t>(rows.count()), 1);
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t k = ext.row_ptr[r];
      bool row_same = k == row_order_offset(a, r);
      for (std::int64_t j = a.local.row_ptr[r]; row_same && j < a.local.row_ptr[r + 1]; ++j)
        row_same = ext.col_idx[k++] == a.local.col_idx[j];
      for (std::int64_t j = a.nonlocal.row_ptr[r]; row_same && j < a.nonlocal.row_ptr[r + 1]; ++j)
        row_same = ext.col_idx[k++] == shift + a.nonlocal.col_idx[j];
      if (!row_same) {
        same[range] = 0;
        return;
      }
    }
  });
  return std::all_of(same.begin(), same.end(), [](char s) { return s != 0; });
}

}  // namespace

Csr<double> host_local_spgemm(const Csr<double>& a, const Csr<double>& b) {
  return host::spgemm(a, b, ref::SpgemmOptions{true});
}

Csr<double> compact_extended_rows(const ExtendedBSource& source) {
  const DistMatrix& b = source.b;
  const CompactColumns compact(source.compact_to_global, b.col_begin(), b.col_begin() + b.local.cols);
  Csr<double> ext = extended_b_pattern(b, source.remote, compact, static_cast<std::int64_t>(source.compact_to_global.size()));
  fill_extended_b_values(b, source.remote, ext);
  return ext;
}

ChainedProduct LocalSpgemm::chain(const Csr<double>& l, const Csr<double>& a, const Csr<double>& b) const {
  if (chain_) return chain_(l, a, b);
  const Csr<double> ab = multiply_(a, b);
  return {multiply_(l, ab), ab.nnz()};
}

CompactSpgemm::CompactSpgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, LocalSpgemm local,
                             ExtendedA a_extended, HostBExtended host_b, std::shared_ptr<HeldOperand> held_b)
    : local_(std::move(local)),
      a_ext_(std::move(a_extended.host)),
      held_a_(std::move(a_extended.held)),
      a_entries_(a.nnz()) {
  // Partitions are replicated, so this check fails on every rank alike.
  TESSERA_REQUIRE_INPUT(a.col_partition == b.row_partition, "spgemm: A's column partition (", a.global_cols(),
                        " columns) differs from B's row partition (", b.global_rows(), " rows)");
  TESSERA_ASSERT(!held_a_ || (!a_ext_ && &held_a_->source() == &a),
                 "spgemm: a held extended block must be this A's, and not given with a host copy");
  Stopwatch clock;
  {
    TESSERA_TRACE_STEP("spgemm.remote_rows");
    remote_ = RemoteRows(comm, b, a.halo);
  }
  stats_ = DistStats{};
  stats_.remote_row_bytes = remote_.symbolic_bytes();
  stats_.exchange_seconds = clock.seconds();

  clock.restart();
  std::optional<trace::Step> step(std::in_place, "spgemm.compact_columns");
  CompactColumns compact(b, remote_.cols());
  compact_to_global_ = std::move(compact.global());
  throw_if_any_rank_failed(comm, compact_to_global_.size() <= INT32_MAX
                                     ? ""
                                     : detail::concat("spgemm: rank ", comm.rank(), " touches ", compact_to_global_.size(),
                                                      " columns of B, beyond the int32 local index; use more ranks"));
  step.emplace("spgemm.extended_blocks");
  std::optional<trace::Step> part;  // the parts, nested under it
  b_ext_made_ = host_b == HostBExtended::at_symbolic && !held_b;
  if (held_b) {
    held_b_ = std::move(held_b);
    b_of_held_ = &b;
  }
  if (b_ext_made_) {
    part.emplace("b_pattern");
    b_ext_ = extended_b_pattern(b, remote_, compact, static_cast<std::int64_t>(compact_to_global_.size()));
  }
  part.emplace("a");
  if (held_a_) {
    // Nothing to copy: the backend holds A_ext.
  } else if (a_ext_) {
    // Another product's copy: it must be this A's pattern (checked on every rank alike), and
    // it may hold the values that product saw last.
    throw_if_any_rank_failed(comm, is_extended_pattern_of(*a_ext_, a)
                                       ? ""
                                       : detail::concat("spgemm: rank ", comm.rank(),
                                                        ": the shared extended block is not this A's pattern"));
    fill_extended_values(a, *a_ext_);
  } else {
    a_ext_ = std::make_shared<Csr<double>>(extended_block(a));
  }
  if (b_ext_made_) {
    part.emplace("b_values");
    fill_b_values(b);
  }
  b_entries_ = b.nnz();
  stats_.compute_seconds = clock.seconds();
}

const Csr<double>& CompactSpgemm::a_extended() const {
  TESSERA_ASSERT(a_ext_, "spgemm: A_ext is held by the backend, not on the host");
  return *a_ext_;
}

const Csr<double>& CompactSpgemm::b_extended() const {
  TESSERA_ASSERT(b_ext_made_, "spgemm: B_ext is made on the host at the first refresh, and none has run");
  return b_ext_;
}

void CompactSpgemm::fill_b_values(const DistMatrix& b) { fill_extended_b_values(b, remote_, b_ext_); }

void CompactSpgemm::make_b_extended_for_held_b() {
  TESSERA_TRACE_STEP("spgemm.make_b_extended");
  b_ext_ = compact_extended_rows(ExtendedBSource{*b_of_held_, remote_, compact_to_global_});
  b_ext_made_ = true;
  held_b_.reset();
  b_of_held_ = nullptr;
}

// The local kernel may throw on this rank alone (device out of memory, cuSPARSE failure), or
// break the invariant that the numeric phase keeps the symbolic pattern: agree before the next
// collective (assembly, the outer product's return) so that no rank waits.
Csr<double> CompactSpgemm::multiply(const Communicator& comm) {
  TESSERA_TRACE_STEP("spgemm.local_product");
  if (!b_ext_made_ && b_of_held_) make_b_extended_for_held_b();
  TESSERA_ASSERT(b_ext_made_, "spgemm: a host product before the first refresh made B_ext");
  Csr<double> product = call_collectively(comm, "spgemm: local product", [&] {
    Csr<double> c = held_a_ ? held_a_->times(b_ext_) : local_(*a_ext_, b_ext_);
    TESSERA_ASSERT(product_entries_ < 0 || c.nnz() == product_entries_, "the local product has ", c.nnz(),
                   " entries, the symbolic phase had ", product_entries_);
    return c;
  });
  if (product_entries_ < 0) product_entries_ = product.nnz();
  return product;
}

std::int64_t CompactSpgemm::multiply_with(const Communicator& comm, const char* step,
                                         const std::function<std::int64_t(const Operands&)>& product) {
  const bool b_held = held_b_ != nullptr;
  if (!b_ext_made_ && !b_held && b_of_held_) make_b_extended_for_held_b();  // the held B was read once already
  TESSERA_ASSERT(b_ext_made_ || b_held, "spgemm: a host product before the first refresh made B_ext");
  const std::int64_t entries = call_collectively(comm, step, [&] {
    std::optional<ExtendedBSource> source;
    if (b_held) source.emplace(ExtendedBSource{*b_of_held_, remote_, compact_to_global_});
    const std::int64_t n = product(Operands{a_ext_.get(), held_a_.get(), b_held ? nullptr : &b_ext_, held_b_.get(),
                                            source ? &*source : nullptr});
    TESSERA_ASSERT(product_entries_ < 0 || n == product_entries_, "the local product has ", n,
                   " entries, the symbolic phase had ", product_entries_);
    return n;
  });
  held_b_.reset();  // the backend's blocks, which `product` may have freed
  if (product_entries_ < 0) product_entries_ = entries;
  return entries;
}

template <class Chain>
ChainedProduct CompactSpgemm::chained(const Communicator& comm, const char* step, Chain&& chain) {
  ChainedProduct c = call_collectively(comm, step, [&] {
    ChainedProduct product = chain();
    TESSERA_ASSERT(product_entries_ < 0 || product.inner_entries == product_entries_, "the local product has ",
                   product.inner_entries, " entries, the symbolic phase had ", product_entries_);
    return product;
  });
  if (product_entries_ < 0) product_entries_ = c.inner_entries;  // once every rank has agreed
  return c;
}

Csr<double> CompactSpgemm::multiply_left(const Communicator& comm, const Csr<double>& l, const char* step) {
  if (!b_ext_made_ && b_of_held_) make_b_extended_for_held_b();
  TESSERA_ASSERT(b_ext_made_, "spgemm: a host product before the first refresh made B_ext");
  return chained(comm, step, [&] { return held_a_ ? held_a_->chain(l, b_ext_) : local_.chain(l, *a_ext_, b_ext_); })
      .product;
}

ChainedProduct CompactSpgemm::multiply_left(const Communicator& comm, HeldOperand& held, const DistMatrix& b,
                                            const char* step) {
  TESSERA_ASSERT(held_a_, "spgemm: operands held by a backend need A_ext held by it too");
  TESSERA_ASSERT(b.nnz() == b_entries_, "spgemm: the held operand's B has ", b.nnz(), " entries, the symbolic phase's ",
                 b_entries_);
  return chained(comm, step, [&] { return held_a_->chain(held, ExtendedBSource{b, remote_, compact_to_global_}); });
}

void CompactSpgemm::refresh(const Communicator& comm, const DistMatrix& a, const DistMatrix& b) {
  // A held A_ext is read from its source, which the holder keeps current: it must be this `a`.
  TESSERA_ASSERT(!held_a_ || &held_a_->source() == &a, "spgemm recompute: A is not the matrix whose A_ext is held");
  std::string changed;
  if (a.nnz() != a_entries_)
    changed = detail::concat("spgemm recompute: rank ", a.rank, " holds ", a.nnz(), " entries of A, the symbolic phase saw ",
                             a_entries_);
  else if (b.nnz() != b_entries_)
    changed = detail::concat("spgemm recompute: rank ", b.rank, " holds ", b.nnz(), " entries of B, the symbolic phase saw ",
                             b_entries_);
  throw_if_any_rank_failed(comm, changed);
  stats_ = DistStats{};
  Stopwatch clock;
  remote_.refresh_values(comm, b);
  stats_.remote_row_bytes = remote_.numeric_bytes();
  stats_.exchange_seconds = clock.seconds();
  clock.restart();
  // A shared host copy is refilled too (the other product may have seen other values); a held
  // one is its holder's to keep current.
  if (!held_a_) fill_extended_values(a, *a_ext_);
  if (b_ext_made_) {
    fill_b_values(b);
  } else {
    TESSERA_TRACE_STEP("spgemm.make_b_extended");
    b_ext_ = compact_extended_rows(ExtendedBSource{b, remote_, compact_to_global_});
    b_ext_made_ = true;
    held_b_.reset();
    b_of_held_ = nullptr;
  }
  stats_.compute_seconds = clock.seconds();
}

}  // namespace tessera::dist
