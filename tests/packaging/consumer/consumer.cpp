// Uses the installed headers and libraries of all three layers.
#include <cstdio>

#include "amg/hierarchy.hpp"
#include "dist/partition.hpp"
#include "local/gen/generators.hpp"

int main() {
  const auto a = tessera::gen::generate(tessera::gen::parse_spec("poisson3d:16"));
  const auto h = tessera::amg::setup(a, tessera::amg::constant_near_null_space(a.rows));
  const auto p = tessera::dist::RowPartition::balanced_rows(a.rows, 2);
  std::printf("consumer: %lld rows, %zu levels, rank 1 owns from row %lld\n", (long long)a.rows, h.levels.size(),
              (long long)p.begin(1));
  return h.levels.size() >= 2 ? 0 : 1;
}
