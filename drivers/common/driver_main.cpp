#include "drivers/common/driver_main.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <thread>

#include "dist/host_threads.hpp"
#include "dist/mpi_env.hpp"
#include "drivers/common/huge_pages.hpp"
#include "local/core/error.hpp"

namespace tessera::driver {

namespace {

// How long a failed rank waits for the others to fail too before ending the job.
constexpr double kAgreeSeconds = 30.0;

// Input errors are raised collectively (every rank throws the same InputError), so every rank
// arrives here and the job ends cleanly with exit code 2. An error raised on one rank only
// would leave the others waiting in a collective forever: if the other ranks do not arrive
// within kAgreeSeconds, abort the job with the same exit code instead of hanging. `agree` is a
// private communicator, so this barrier never matches a collective of the program itself.
void end_failed_rank(MPI_Comm agree, int code) {
  int size = 1;
  MPI_Comm_size(agree, &size);
  if (size == 1) return;
  MPI_Request request;
  MPI_Ibarrier(agree, &request);
  const double deadline = MPI_Wtime() + kAgreeSeconds;
  int done = 0;
  while (!done && MPI_Wtime() < deadline) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!done) {
    std::fprintf(stderr, "the other ranks did not fail with this one: aborting the job\n");
    MPI_Abort(MPI_COMM_WORLD, code);
  }
}

}  // namespace

int run_driver(int argc, char** argv, const char* name, const std::function<int(int, char**)>& body) {
  use_transparent_huge_pages(argv);  // may re-execute this program; before MPI starts
  MpiEnvironment mpi(&argc, &argv);
  {
    const dist::Communicator world;
    dist::share_node_cpus(world);  // the host loops' threads: this rank's share of its node's CPUs
  }
  MPI_Comm agree = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &agree);
  try {
    const int status = body(argc, argv);
    MPI_Comm_free(&agree);
    return status;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "%s: device error: %s\n", name, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
  }
  std::fflush(stdout);
  end_failed_rank(agree, kExitError);
  MPI_Comm_free(&agree);
  return kExitError;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

double median_ms_per_iteration(const std::vector<double>& seconds, const std::vector<int>& iterations) {
  std::vector<double> ms;
  for (std::size_t k = 0; k < seconds.size() && k < iterations.size(); ++k)
    if (iterations[k] > 0) ms.push_back(1e3 * seconds[k] / iterations[k]);
  return median(ms);
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  TESSERA_REQUIRE_INPUT(out.good(), "cannot write JSON output '", path, "'");
  out << j.dump(2) << "\n";
  TESSERA_REQUIRE_INPUT(out.good(), "failed writing JSON output '", path, "'");
}

bool report_check(const std::string& what, double max_rel_error, double bound) {
  const bool pass = max_rel_error <= bound;  // NaN compares false: a NaN error fails
  std::printf("check: %s: max relative error %.3e (bound %.1e) %s\n", what.c_str(), max_rel_error, bound,
              pass ? "PASS" : "FAIL");
  return pass;
}

}  // namespace tessera::driver
