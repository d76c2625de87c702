#include "dist/stats.hpp"

#include "dist/communicator.hpp"

namespace tessera::dist {

DistStats& DistStats::operator+=(const DistStats& o) {
  rows += o.rows;
  nnz += o.nnz;
  halo_bytes += o.halo_bytes;
  remote_row_bytes += o.remote_row_bytes;
  exchange_seconds += o.exchange_seconds;
  compute_seconds += o.compute_seconds;
  return *this;
}

namespace {
double imbalance(double max, double total, int ranks) { return total > 0 ? max * ranks / total : 1.0; }
}  // namespace

StatsSummary summarize(const Communicator& comm, const DistStats& mine) {
  std::vector<std::int64_t> counts{mine.rows, mine.nnz, mine.halo_bytes, mine.remote_row_bytes};
  std::vector<double> times{mine.exchange_seconds, mine.compute_seconds};
  std::vector<std::int64_t> count_max = counts;
  std::vector<double> time_max = times;
  comm.allreduce_in_place(counts, ReduceOp::sum);
  comm.allreduce_in_place(times, ReduceOp::sum);
  comm.allreduce_in_place(count_max, ReduceOp::max);
  comm.allreduce_in_place(time_max, ReduceOp::max);
  StatsSummary s;
  s.total = DistStats{counts[0], counts[1], counts[2], counts[3], times[0], times[1]};
  s.max = DistStats{count_max[0], count_max[1], count_max[2], count_max[3], time_max[0], time_max[1]};
  s.rows_imbalance = imbalance(static_cast<double>(s.max.rows), static_cast<double>(s.total.rows), comm.size());
  s.nnz_imbalance = imbalance(static_cast<double>(s.max.nnz), static_cast<double>(s.total.nnz), comm.size());
  s.compute_imbalance = imbalance(s.max.compute_seconds, s.total.compute_seconds, comm.size());
  return s;
}

std::vector<DistStats> gather_stats(const Communicator& comm, const DistStats& mine, int root) {
  return comm.gatherv(std::vector<DistStats>{mine}, root);
}

}  // namespace tessera::dist
