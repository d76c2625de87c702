#pragma once
// AMG test problems shared by the single-GPU AMG tests: a generated matrix, its near-null space
// (rigid-body modes for 3-dof elasticity, the constant vector otherwise) and the options.
#include <cstdint>
#include <string>

#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "local/formats/csr.hpp"
#include "local/gen/generators.hpp"
#include "support/generated_near_null_space.hpp"

namespace tessera::amg::testing_problems {

struct Problem {
  std::string name;
  Csr<double> a;
  NearNullSpace nns;
  AmgOptions options;
};

/// gen spec -> problem, coarsened until `coarse_size` rows.
inline Problem generated(const std::string& spec, std::int64_t coarse_size) {
  const gen::ProblemSpec s = gen::parse_spec(spec);
  Problem p{spec, gen::generate(s), {}, {}};
  p.nns = tessera::testing::generated_near_null_space(s);
  p.options.coarse_size = coarse_size;
  return p;
}

}  // namespace tessera::amg::testing_problems
