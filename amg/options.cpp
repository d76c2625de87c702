#include "amg/options.hpp"

#include "local/core/error.hpp"

namespace tessera::amg {

SmootherKind parse_smoother(const std::string& name) {
  if (name == "chebyshev") return SmootherKind::chebyshev;
  if (name == "l1-jacobi") return SmootherKind::l1_jacobi;
  throw InputError("unknown smoother '" + name + "' (use chebyshev or l1-jacobi)");
}

CycleKind parse_cycle(const std::string& name) {
  if (name == "V" || name == "v") return CycleKind::v;
  if (name == "W" || name == "w") return CycleKind::w;
  throw InputError("unknown cycle '" + name + "' (use V or W)");
}

const char* to_string(SmootherKind s) { return s == SmootherKind::chebyshev ? "chebyshev" : "l1-jacobi"; }
const char* to_string(CycleKind c) { return c == CycleKind::v ? "V" : "W"; }

void validate(const AmgOptions& o) {
  TESSERA_REQUIRE_INPUT(o.strength_threshold >= 0 && o.strength_threshold < 1,
                        "AMG strength threshold must be in [0, 1), got ", o.strength_threshold);
  TESSERA_REQUIRE_INPUT(o.coarse_size >= 1, "AMG coarse size must be >= 1, got ", o.coarse_size);
  TESSERA_REQUIRE_INPUT(o.max_levels >= 1, "AMG max levels must be >= 1, got ", o.max_levels);
  TESSERA_REQUIRE_INPUT(o.eigen_iterations >= 1, "AMG eigen iterations must be >= 1, got ", o.eigen_iterations);
  TESSERA_REQUIRE_INPUT(o.eigen_safety >= 1, "AMG eigen safety factor must be >= 1, got ", o.eigen_safety);
  TESSERA_REQUIRE_INPUT(o.chebyshev_degree >= 1, "Chebyshev degree must be >= 1, got ", o.chebyshev_degree);
  TESSERA_REQUIRE_INPUT(o.chebyshev_lower_fraction > 0 && o.chebyshev_lower_fraction < o.eigen_safety,
                        "Chebyshev lower fraction must be in (0, eigen safety), got ", o.chebyshev_lower_fraction);
  TESSERA_REQUIRE_INPUT(o.jacobi_sweeps >= 1, "l1-Jacobi sweeps must be >= 1, got ", o.jacobi_sweeps);
  TESSERA_REQUIRE_INPUT(o.max_dense_rows >= 1, "AMG max dense rows must be >= 1, got ", o.max_dense_rows);
}

}  // namespace tessera::amg
