#include "dist/cuda/device_dist_matrix.hpp"

#include <optional>
#include <string>
#include <utility>

#include "dist/communicator.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"
#include "local/cuda/check.hpp"

namespace tessera::dist::gpu {

void require_planned_counts(const Communicator& comm, const char* who, const char* operands,
                            const DeviceDistMatrix& a, const DeviceDistMatrix& b, const DeviceDistMatrix& c,
                            const PlannedCounts& planned) {
  const std::int64_t a_nnz = a.local.nnz + a.nonlocal.nnz, b_nnz = b.local.nnz + b.nonlocal.nnz;
  std::string error;
  if (a_nnz != planned.a || b_nnz != planned.b)
    error = detail::concat(who, ": rank ", comm.rank(), "'s ", operands, " hold ", a_nnz, " and ", b_nnz,
                           " entries, the symbolic phase saw ", planned.a, " and ", planned.b);
  else if (c.local.nnz != planned.c_local || c.nonlocal.nnz != planned.c_nonlocal)
    error = detail::concat(who, ": rank ", comm.rank(), "'s C is not a DeviceDistMatrix of the symbolic result");
  throw_if_any_rank_failed(comm, error);
}

DeviceDistMatrix::DeviceDistMatrix(const DistMatrix& a, cudaStream_t stream)
    : DeviceDistMatrix(a, tessera::cuda::upload(a.local, stream), tessera::cuda::upload(a.nonlocal, stream), stream) {}

namespace {

bool same_shape(const tessera::cuda::DeviceCsr<double>& d, const Csr<double>& h) {
  return d.rows == h.rows && d.cols == h.cols && d.nnz == h.nnz();
}

}  // namespace

DeviceDistMatrix::DeviceDistMatrix(const DistMatrix& a, tessera::cuda::DeviceCsr<double>&& local_block,
                                   tessera::cuda::DeviceCsr<double>&& nonlocal_block, cudaStream_t stream)
    : host(&a), local(std::move(local_block)), nonlocal(std::move(nonlocal_block)) {
  TESSERA_ASSERT(same_shape(local, a.local) && same_shape(nonlocal, a.nonlocal), "rank ", a.rank,
                 ": device blocks of ", local.rows, "x", local.cols, " (", local.nnz, ") and ", nonlocal.rows, "x",
                 nonlocal.cols, " (", nonlocal.nnz, ") entries for host blocks of ", a.local.rows, "x", a.local.cols,
                 " (", a.local.nnz(), ") and ", a.nonlocal.rows, "x", a.nonlocal.cols, " (", a.nonlocal.nnz(), ")");
  TESSERA_REQUIRE_INPUT(a.nonlocal.cols == a.halo.num_ghosts(), "rank ", a.rank, ": the non-local block has ",
                        a.nonlocal.cols, " columns but the halo plan brings ", a.halo.num_ghosts(), " ghosts");
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(a.halo.send_local.size()) == a.halo.num_sent(), "rank ", a.rank,
                        ": the halo plan sends ", a.halo.num_sent(), " items but lists ", a.halo.send_local.size(),
                        " send indices");
  std::optional<trace::Step> step(std::in_place, "device_matrix.spmv_plan");
  send_local.upload(a.halo.send_local, stream);
  local_plan = tessera::cuda::make_spmv_plan(local, {}, stream);
  step.emplace("device_matrix.boundary_rows");
  boundary_rows = tessera::cuda::make_row_subset(nonlocal, stream);  // listed on the device
  // The exchange stream reads send_local: once the constructor returns, every upload is
  // complete and usable from any stream (the plans skip their sync for empty blocks).
  step.emplace("device_matrix.synchronize");
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void DeviceDistMatrix::refresh_values(cudaStream_t stream) {
  TESSERA_REQUIRE_INPUT(host->local.nnz() == local.nnz && host->nonlocal.nnz() == nonlocal.nnz,
                        "refresh_values: the host matrix now has ", host->local.nnz(), " + ", host->nonlocal.nnz(),
                        " stored entries, the device copy ", local.nnz, " + ", nonlocal.nnz,
                        ": a new pattern needs a new DeviceDistMatrix");
  local.values.upload(host->local.values, stream);
  nonlocal.values.upload(host->nonlocal.values, stream);
}

}  // namespace tessera::dist::gpu
