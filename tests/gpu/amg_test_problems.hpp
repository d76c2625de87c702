#pragma once
// AMG test problems shared by the single-GPU AMG tests: a generated matrix, its near-null space
// (rigid-body modes for 3-dof elasticity, the constant vector otherwise) and the options; a
// scalar matrix from elsewhere (a file, tests/support's builders) with the constant vector.
#include <cstdint>
#include <string>
#include <utility>

#include "amg/near_null_space.hpp"
#include "amg/options.hpp"
#include "local/formats/csr.hpp"
#include "local/gen/generators.hpp"
#include "support/generated_near_null_space.hpp"
#include "support/random_matrix.hpp"

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

/// Scalar problem `a` with the constant near-null space, coarsened until `coarse_size` rows.
inline Problem with_constant_space(std::string name, Csr<double> a, std::int64_t coarse_size) {
  Problem p{std::move(name), std::move(a), {}, {}};
  p.nns = constant_near_null_space(p.a.rows, 1);
  p.options.coarse_size = coarse_size;
  return p;
}

/// The power-law SPD matrix of rmat:10:8 on `seed` (tessera::testing::power_law_spd; the seed is
/// in the name): 1024 rows, hub rows of ~350 entries, ~220 rows coupled to nothing.
inline Problem power_law(std::uint64_t seed, std::int64_t coarse_size) {
  return with_constant_space("power-law SPD rmat:10:8:seed=" + std::to_string(seed),
                             tessera::testing::power_law_spd(10, 8, seed), coarse_size);
}

}  // namespace tessera::amg::testing_problems
