#include "amg/dist/dist_eigen_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "dist/spmv.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {

double dist_gershgorin_bound(const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& inv_diag) {
  // Each row's sum is the serial one, and a maximum does not depend on the order it is taken in:
  // the bound is the same for any number of ranges.
  const host::RangeSplit rows(a.owned_rows());
  std::vector<double> bound_in(static_cast<std::size_t>(rows.count()), 0.0);
  rows.run([&](int range, std::int64_t begin, std::int64_t end) {
    double bound = 0.0;
    for (std::int64_t i = begin; i < end; ++i) {
      double row = 0.0;
      for (std::int64_t p = a.nonlocal.row_ptr[i]; p < a.nonlocal.row_ptr[i + 1]; ++p) row += std::abs(a.nonlocal.values[p]);
      for (std::int64_t p = a.local.row_ptr[i]; p < a.local.row_ptr[i + 1]; ++p) row += std::abs(a.local.values[p]);
      bound = std::max(bound, row * inv_diag[i]);
    }
    bound_in[range] = bound;
  });
  return comm.allreduce(*std::max_element(bound_in.begin(), bound_in.end()), dist::ReduceOp::max);
}

EigenEstimate dist_estimate_lambda_max(const dist::Communicator& comm, const dist::DistMatrix& a,
                                       const Vector& inv_diag, int steps, double safety) {
  EigenEstimate est;
  est.gershgorin = dist_gershgorin_bound(comm, a, inv_diag);
  if (a.global_rows() == 0) return est;
  const std::size_t n = static_cast<std::size_t>(a.owned_rows());
  Vector sqrt_inv_diag(n), v(n);
  host::for_entries(static_cast<std::int64_t>(n), [&](std::int64_t i) {
    sqrt_inv_diag[i] = std::sqrt(inv_diag[i]), v[i] = lanczos_start_entry(static_cast<std::uint64_t>(a.row_begin() + i));
  });
  std::vector<double> ghosts;
  const auto apply = [&](const Vector& x, Vector& y) { dist::spmv(comm, a, x, ghosts, y); };
  const auto dot = [&](const Vector& x, const Vector& y) { return dist::dot(comm, x, y); };
  lanczos_ritz(std::move(v), sqrt_inv_diag, steps, apply, dot, est);
  est.safe = std::min(safety * est.ritz, est.gershgorin);
  return est;
}

EigenEstimate host_eigen_estimator(const dist::Communicator& comm, const dist::DistMatrix& a, const Vector& inv_diag,
                                   int steps, double safety, DeviceOperatorSlot& /*device_a*/) {
  return dist_estimate_lambda_max(comm, a, inv_diag, steps, safety);
}

}  // namespace tessera::amg
