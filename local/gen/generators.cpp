// Dispatch from a parsed spec to its family's row-range generator, plus node coordinates.
#include "local/gen/generators.hpp"

#include "local/core/error.hpp"
#include "local/gen/kinds.hpp"

namespace tessera::gen {
namespace {

void check_range(const ProblemSpec& spec, std::int64_t begin, std::int64_t end) {
  const std::int64_t rows = num_rows(spec);
  TESSERA_REQUIRE_INPUT(0 <= begin && begin <= end && end <= rows, "row range [", begin, ", ", end,
                        ") is outside the ", rows, "-row problem '", spec.text, "'");
}

bool is_grid(const ProblemSpec& spec) { return spec.kind != "rmat" && spec.kind != "random"; }

}  // namespace

RowBlock generate_rows(const ProblemSpec& spec, std::int64_t begin, std::int64_t end) {
  check_range(spec, begin, end);
  const std::int64_t n = spec.params[0];
  if (spec.kind == "poisson2d") return detail::stencil_rows(2, 5, n, begin, end);
  if (spec.kind == "poisson3d") return detail::stencil_rows(3, 7, n, begin, end);
  if (spec.kind == "poisson3d27") return detail::stencil_rows(3, 27, n, begin, end);
  if (spec.kind == "convdiff3d") return detail::stencil_rows(3, 7, n, begin, end, kConvdiffConvection);
  if (spec.kind == "elasticity2d") return detail::elasticity_rows(2, n, begin, end);
  if (spec.kind == "elasticity3d") return detail::elasticity_rows(3, n, begin, end);
  if (spec.kind == "frame2d") return detail::frame_rows(2, n, spec.params[1], begin, end);
  if (spec.kind == "frame3d") return detail::frame_rows(3, n, spec.params[1], begin, end);
  if (spec.kind == "rmat") return detail::rmat_rows(static_cast<int>(n), spec.params[1], spec.seed, begin, end);
  return detail::random_rows(n, spec.params[1], spec.seed, begin, end);  // num_rows rejected other kinds
}

Csr<double> generate(const ProblemSpec& spec) { return to_csr(generate_rows(spec, 0, num_rows(spec))); }

std::vector<double> coordinates(const ProblemSpec& spec, std::int64_t begin, std::int64_t end) {
  check_range(spec, begin, end);
  TESSERA_REQUIRE_INPUT(is_grid(spec), "problem '", spec.text, "' is a graph and has no node coordinates");
  const std::int64_t n = spec.params[0];
  const int dofs = block_size(spec);
  const bool planar = dimension(spec) == 2;
  std::vector<double> xyz;
  xyz.reserve(static_cast<std::size_t>(3 * (end - begin)));
  for (std::int64_t row = begin; row < end; ++row) {
    const std::int64_t node = row / dofs;
    xyz.push_back(static_cast<double>(node % n));
    xyz.push_back(static_cast<double>((node / n) % n));
    xyz.push_back(planar ? 0.0 : static_cast<double>(node / (n * n)));
  }
  return xyz;
}

}  // namespace tessera::gen
