#include "drivers/common/trace_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace tessera::driver {
namespace {

// One line a step: path, tab, calls, tab, seconds, tab, page faults (names hold no tabs or newlines).
std::string serialize(const std::vector<trace::StepTotal>& steps) {
  std::ostringstream out;
  out.precision(9);
  for (const trace::StepTotal& s : steps)
    out << s.path << '\t' << s.calls << '\t' << s.seconds << '\t' << s.page_faults << '\n';
  return out.str();
}

// Paths in tree order: a step, then the steps inside it, then its siblings ('/' first).
struct TreeOrder {
  bool operator()(const std::string& x, const std::string& y) const {
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end(), [](char a, char b) {
      return (a == '/' ? '\0' : a) < (b == '/' ? '\0' : b);
    });
  }
};

constexpr double kShownSeconds = 5e-4;  // inner steps faster than this on every rank are not printed

struct StepRow {
  std::vector<long long> calls;        // per rank; 0 where a rank never ran the step
  std::vector<double> seconds;         // per rank
  std::vector<long long> page_faults;  // per rank
};

}  // namespace

bool agree_on_tracing(const dist::Communicator& comm, bool flag) {
  const bool mine = flag || trace::enabled();
  trace::set_enabled(false);
  return comm.allreduce(static_cast<std::int64_t>(mine), dist::ReduceOp::max) != 0;
}

nlohmann::json report_step_trace(const dist::Communicator& comm, const std::string& title,
                                 const std::vector<trace::StepTotal>& mine) {
  const std::string text = serialize(mine);
  const std::vector<char> all = comm.gatherv(std::vector<char>(text.begin(), text.end()), 0);
  const std::vector<std::int64_t> lengths = comm.allgather(static_cast<std::int64_t>(text.size()));
  if (comm.rank() != 0) return nullptr;

  const std::size_t ranks = lengths.size();
  std::map<std::string, StepRow, TreeOrder> rows;
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    std::istringstream in(std::string(all.begin() + at, all.begin() + at + lengths[r]));
    at += static_cast<std::size_t>(lengths[r]);
    std::string path;
    long long calls = 0, faults = 0;
    double seconds = 0;
    while (std::getline(in, path, '\t') && in >> calls >> seconds >> faults && in.ignore(1)) {
      StepRow& row = rows[path];
      if (row.seconds.empty()) {
        row.seconds.assign(ranks, 0.0);
        row.calls.assign(ranks, 0);
        row.page_faults.assign(ranks, 0);
      }
      row.seconds[r] = seconds;
      row.calls[r] = calls;
      row.page_faults[r] = faults;
    }
  }
  std::printf("%s (host wall-clock seconds per step, indented under the step it runs in, which includes it)\n",
              title.c_str());
  std::printf("  %-40s %8s %10s %10s   by rank\n", "step", "calls", "fastest", "slowest");
  std::printf("  (calls: the most on any rank; fastest: among the ranks that ran the step; by rank: 0 = never ran it)\n");
  nlohmann::json out = nlohmann::json::array();
  int omitted = 0;
  for (const auto& [path, row] : rows) {
    double fastest = 0, slowest = 0;
    bool first = true;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (row.calls[r] == 0) continue;
      fastest = first ? row.seconds[r] : std::min(fastest, row.seconds[r]);
      slowest = std::max(slowest, row.seconds[r]);
      first = false;
    }
    const long long calls = *std::max_element(row.calls.begin(), row.calls.end());
    const std::size_t depth = static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
    out.push_back({{"step", path}, {"calls", row.calls}, {"seconds", row.seconds}, {"page_faults", row.page_faults}});
    if (depth > 0 && slowest < kShownSeconds) {
      ++omitted;
      continue;
    }
    const std::size_t leaf = path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1;
    const std::string label = std::string(2 * depth, ' ') + path.substr(leaf);
    std::printf("  %-40s %8lld %10.4f %10.4f  ", label.c_str(), calls, fastest, slowest);
    for (double s : row.seconds) std::printf(" %.4f", s);
    std::printf("\n");
  }
  if (omitted > 0)
    std::printf("  (%d inner steps under %.1f ms on every rank not shown; the JSON output has every step)\n", omitted,
                kShownSeconds * 1e3);
  return out;
}

}  // namespace tessera::driver
