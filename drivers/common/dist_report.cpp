#include "drivers/common/dist_report.hpp"

#include <cstdio>

namespace tessera::driver {

nlohmann::json report_dist_stats(const dist::Communicator& comm, const std::string& what, const dist::DistStats& mine) {
  const std::vector<dist::DistStats> all = dist::gather_stats(comm, mine);
  const dist::StatsSummary sum = dist::summarize(comm, mine);
  nlohmann::json j = {{"what", what}, {"ranks", nlohmann::json::array()}};
  if (comm.rank() != 0) return j;
  std::printf("%s, per rank:\n  rank        rows          nnz   halo bytes  remote-row bytes exchange ms compute ms\n",
              what.c_str());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const dist::DistStats& s = all[r];
    std::printf("  %4zu %11lld %12lld %12lld %17lld %11.3f %10.3f\n", r, (long long)s.rows, (long long)s.nnz,
                (long long)s.halo_bytes, (long long)s.remote_row_bytes, 1e3 * s.exchange_seconds, 1e3 * s.compute_seconds);
    j["ranks"].push_back({{"rows", s.rows}, {"nnz", s.nnz}, {"halo_bytes", s.halo_bytes},
                          {"remote_row_bytes", s.remote_row_bytes}, {"exchange_seconds", s.exchange_seconds},
                          {"compute_seconds", s.compute_seconds}});
  }
  std::printf("  total %10lld %12lld %12lld %17lld | max exchange %.3f ms, max compute %.3f ms\n",
              (long long)sum.total.rows, (long long)sum.total.nnz, (long long)sum.total.halo_bytes,
              (long long)sum.total.remote_row_bytes, 1e3 * sum.max.exchange_seconds, 1e3 * sum.max.compute_seconds);
  std::printf("  load imbalance (max/mean): rows %.3f, nnz %.3f, compute %.3f\n", sum.rows_imbalance, sum.nnz_imbalance,
              sum.compute_imbalance);
  j["total"] = {{"rows", sum.total.rows}, {"nnz", sum.total.nnz}, {"halo_bytes", sum.total.halo_bytes},
                {"remote_row_bytes", sum.total.remote_row_bytes}};
  j["max_exchange_seconds"] = sum.max.exchange_seconds;
  j["max_compute_seconds"] = sum.max.compute_seconds;
  j["imbalance"] = {{"rows", sum.rows_imbalance}, {"nnz", sum.nnz_imbalance}, {"compute", sum.compute_imbalance}};
  return j;
}

}  // namespace tessera::driver
