#include "drivers/common/matrix_source.hpp"

#include "local/core/error.hpp"
#include "local/gen/generators.hpp"
#include "local/io/matrix_market.hpp"

namespace tessera::driver {

Csr<double> load_matrix(const MatrixSource& source, const std::string& option_name) {
  TESSERA_REQUIRE_INPUT(source.given(), "no matrix given for ", option_name, " (use a Matrix Market file or --gen SPEC)");
  TESSERA_REQUIRE_INPUT(source.file.empty() || source.spec.empty(), "both a file and a generator were given for ",
                        option_name, "; choose one");
  if (!source.file.empty()) return io::read_matrix_market(source.file);
  return gen::generate(gen::parse_spec(source.spec));
}

}  // namespace tessera::driver
