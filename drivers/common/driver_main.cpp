#include "drivers/common/driver_main.hpp"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <fstream>

#include "dist/mpi_env.hpp"
#include "local/core/error.hpp"

namespace tessera::driver {

int run_driver(int argc, char** argv, const char* name, const std::function<int(int, char**)>& body) {
  MpiEnvironment mpi(&argc, &argv);
  try {
    return body(argc, argv);
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "%s: device error: %s\n", name, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
  }
  return kExitError;
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
