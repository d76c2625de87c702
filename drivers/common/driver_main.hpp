#pragma once
// What every driver shares: MPI start-up, the exit-code contract, timing, JSON output.
// Exit codes: 0 success, 1 a --check failed, 2 bad input or a device error (message on
// stderr, never a crash).
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "local/core/stopwatch.hpp"

namespace tessera::driver {

inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitError = 2;

/// Runs `body` inside MPI; turns exceptions into a message and exit code 2 on every rank.
int run_driver(int argc, char** argv, const char* name, const std::function<int(int, char**)>& body);

using tessera::Stopwatch;  // local/core/stopwatch.hpp

/// The median of repeated timings (the mean of the two middle ones for an even count; 0 for none).
double median(std::vector<double> samples);
/// The median over repeated solves of each one's milliseconds per iteration (solves of no
/// iteration left out; 0 for none).
double median_ms_per_iteration(const std::vector<double>& seconds, const std::vector<int>& iterations);

/// Writes `j` to `path` (pretty-printed); an unwritable path is an InputError.
void write_json(const std::string& path, const nlohmann::json& j);

/// "PASS"/"FAIL" line for --check, e.g. "check: max relative error 1.2e-16 (bound 1e-12) PASS".
bool report_check(const std::string& what, double max_rel_error, double bound);

}  // namespace tessera::driver
