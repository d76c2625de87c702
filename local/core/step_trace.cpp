#include "local/core/step_trace.hpp"

#include <cstdlib>
#include <cstring>
#include <map>

#include "local/core/page_faults.hpp"

namespace tessera::trace {
namespace {

struct State {
  bool on = false;
  std::string path;  // the open steps' names, joined by '/'
  std::map<std::string, StepTotal> totals;
  State() {
    const char* env = std::getenv("TESSERA_TRACE");
    on = env && *env && std::strcmp(env, "0") != 0;
  }
};

State& state() {
  static State s;
  return s;
}

}  // namespace

bool enabled() { return state().on; }
void set_enabled(bool on) { state().on = on; }
void reset() { state().totals.clear(); }

std::vector<StepTotal> totals() {
  std::vector<StepTotal> out;
  for (const auto& [path, total] : state().totals) out.push_back(total);
  return out;
}

Step::Step(const char* name) : on_(enabled()) {
  if (!on_) return;
  std::string& path = state().path;
  parent_length_ = path.size();
  if (!path.empty()) path += '/';
  path += name;
  start_faults_ = host_page_faults();
  start_ = std::chrono::steady_clock::now();
}

Step::~Step() {
  if (!on_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const long long faults = host_page_faults() - start_faults_;
  State& s = state();
  try {
    StepTotal& t = s.totals[s.path];
    if (t.path.empty()) t.path = s.path;
    ++t.calls;
    t.seconds += seconds;
    t.page_faults += faults;
  } catch (...) {  // out of host memory: lose this record rather than terminate (destructors are noexcept)
  }
  s.path.resize(parent_length_);
}

}  // namespace tessera::trace
