#pragma once
// A distributed matrix gathered whole onto every rank's GPU from its device copies
// (DeviceDistMatrix): what the replicated coarse levels of the device cycle run on
// (amg/cuda/replicated_levels.hpp). Each rank writes its rows in global columns on its GPU, each
// row's entries by global column (the order dist::owned_row_block gives on the host); the device
// transport then gathers every rank's row ends, columns and values in place. Each rank adds the
// entries of the ranks before it to its row ends first, so the gathered ends are the whole row
// offsets: no scan, no pass on the host. The result is amg::allgather_operator's matrix (host,
// MPI) bit for bit. Why: that host gather, with its copies and conversions, took 0.045-0.062 s an
// upload on two ranks at poisson3d:242, for a level of 2.9M entries and its transfers; this one
// 0.012 s through the host-staged transport (docs/performance.md, fifty-seventh session). Built
// only with CUDA.
#include <cstdint>
#include <vector>

#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "local/cuda/device_matrix.hpp"

namespace tessera::dist::gpu {

/// One matrix's gather in three steps, so that a caller gathering several agrees on every
/// allocation (which can fail on one rank alone) before the first transport call.
class WholeMatrixGather {
 public:
  /// Collective (MPI: the ranks' entry counts). Keeps a reference to `a`, which must hold its
  /// host matrix's pattern. Global columns beyond int32 are an InputError on every rank.
  WholeMatrixGather(const Communicator& comm, const DeviceDistMatrix& a);

  /// Local, and it can fail on one rank alone (out of device memory): call it inside
  /// dist::call_collectively. Allocates the whole matrix and writes this rank's rows into it,
  /// on ctx.compute().
  void prepare(DeviceContext& ctx);

  /// Collective (the device transport), after prepare() on every rank: the other ranks' rows.
  /// The whole matrix, ready on ctx.compute().
  tessera::cuda::DeviceCsr<double> finish(DeviceContext& ctx);

  /// The values alone, after `a` took new ones on its pattern (a re-setup), into `whole` (a
  /// gather's result of that pattern), in the same two steps: write_values() local (another
  /// entry count is an InputError, alike on every rank), gather_values() collective over the
  /// device transport. Nothing is allocated.
  void write_values(DeviceContext& ctx, tessera::cuda::DeviceCsr<double>& whole) const;
  void gather_values(DeviceContext& ctx, tessera::cuda::DeviceCsr<double>& whole) const;

 private:
  const DeviceDistMatrix& a_;
  std::vector<std::int64_t> row_offsets_;    // rank r's rows: [row_offsets_[r], row_offsets_[r + 1])
  std::vector<std::int64_t> entry_offsets_;  // rank r's entries, likewise
  tessera::cuda::DeviceCsr<double> whole_;

  /// This rank's rows into `to` on ctx.compute(): their columns too unless `col` is null.
  void write_rows(DeviceContext& ctx, std::int32_t* col, double* val, std::int64_t* row_end) const;
};

/// The three steps for one matrix: collective over ctx's communicator and transport.
tessera::cuda::DeviceCsr<double> gather_whole(DeviceContext& ctx, const DeviceDistMatrix& a);

}  // namespace tessera::dist::gpu
