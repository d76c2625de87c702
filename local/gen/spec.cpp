// Problem spec strings: parsing, validation and sizes.
#include <charconv>
#include <limits>

#include "local/core/error.hpp"
#include "local/gen/generators.hpp"

namespace tessera::gen {
namespace {

struct KindInfo {
  const char* name;
  int num_params;
  bool seeded;
  std::int64_t last_param_default = 0;  // > 0: the last parameter may be left out, and is this
};

/// The frames' slenderness (beam length over section side) when the spec leaves it out.
constexpr std::int64_t kDefaultSlenderness = 10;

constexpr KindInfo kKinds[] = {
    {"poisson2d", 1, false},    {"poisson3d", 1, false},    {"poisson3d27", 1, false},
    {"convdiff3d", 1, false},   {"elasticity2d", 1, false}, {"elasticity3d", 1, false},
    {"frame2d", 2, false, kDefaultSlenderness},             {"frame3d", 2, false, kDefaultSlenderness},
    {"rmat", 2, true},          {"random", 2, true},
};

constexpr const char* kAcceptedForms =
    "accepted forms: poisson2d:N, poisson3d:N, poisson3d27:N, convdiff3d:N, elasticity2d:N, elasticity3d:N, "
    "frame2d:N[:L], frame3d:N[:L], rmat:S:E[:seed=K], random:N:D[:seed=K] (N, L, S, E, D positive integers, L the "
    "beams' slenderness, 10 if left out; K a non-negative integer)";

constexpr std::int64_t kMaxRows = std::numeric_limits<std::int64_t>::max();

[[noreturn]] void reject(const std::string& text, const std::string& why) {
  throw InputError(detail::concat("bad problem spec '", text, "': ", why, "; ", kAcceptedForms));
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t pos; (pos = text.find(sep, start)) != std::string::npos; start = pos + 1)
    parts.push_back(text.substr(start, pos - start));
  parts.push_back(text.substr(start));
  return parts;
}

const KindInfo* find_kind(const std::string& name) {
  for (const KindInfo& k : kKinds)
    if (name == k.name) return &k;
  return nullptr;
}

std::int64_t parse_size(const std::string& text, const std::string& field) {
  std::int64_t value = 0;
  const char* first = field.data();
  const char* last = first + field.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) reject(text, "size '" + field + "' does not fit in 64 bits");
  if (field.empty() || ec != std::errc() || ptr != last) reject(text, "size '" + field + "' is not an integer");
  if (value <= 0) reject(text, "size '" + field + "' is not positive");
  return value;
}

std::uint64_t parse_seed(const std::string& text, const std::string& field) {
  std::uint64_t value = 0;
  const char* first = field.data();
  const char* last = first + field.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (field.empty() || ec != std::errc() || ptr != last)
    reject(text, "seed '" + field + "' is not a non-negative 64-bit integer");
  return value;
}

/// The kinds on an N^3 grid of one unknown a node (N^3 rows).
bool scalar_cube(const std::string& kind) {
  return kind == "poisson3d" || kind == "poisson3d27" || kind == "convdiff3d";
}

/// base^exp, or -1 when it passes `limit`.
std::int64_t checked_power(std::int64_t base, int exp, std::int64_t limit) {
  std::int64_t result = 1;
  for (int i = 0; i < exp; ++i)
    if (__builtin_mul_overflow(result, base, &result) || result > limit) return -1;
  return result;
}

/// Rejects specs whose row count (or, for R-MAT, edge count) overflows int64.
void check_sizes(const ProblemSpec& spec) {
  const std::int64_t n = spec.params[0];
  const auto too_big = [&](const char* what) { reject(spec.text, std::string(what) + " overflows int64"); };
  if (spec.kind == "poisson2d" && checked_power(n, 2, kMaxRows) < 0) too_big("the row count N^2");
  if (scalar_cube(spec.kind) && checked_power(n, 3, kMaxRows) < 0)
    too_big("the row count N^3");
  if (spec.kind == "elasticity2d" && checked_power(n, 2, kMaxRows / 2) < 0) too_big("the row count 2 N^2");
  if (spec.kind == "elasticity3d" && checked_power(n, 3, kMaxRows / 3) < 0) too_big("the row count 3 N^3");
  if (spec.kind == "frame2d" && checked_power(n, 2, kMaxRows / 3) < 0) too_big("the row count 3 N^2");
  if (spec.kind == "frame3d" && checked_power(n, 3, kMaxRows / 6) < 0) too_big("the row count 6 N^3");
  if (spec.kind == "rmat") {
    if (n > 62) too_big("the row count 2^S");
    if (spec.params[1] > (kMaxRows >> n)) too_big("the edge count E * 2^S");
  }
  if (spec.kind == "random" && spec.params[1] > n)
    reject(spec.text, "random:N:D needs D <= N (D is the mean number of entries per row)");
}

}  // namespace

ProblemSpec parse_spec(const std::string& text) {
  std::vector<std::string> parts = split(text, ':');
  const KindInfo* kind = find_kind(parts[0]);
  if (!kind) reject(text, "unknown kind '" + parts[0] + "'");
  ProblemSpec spec;
  spec.kind = parts[0];
  spec.text = text;
  if (parts.back().rfind("seed=", 0) == 0) {
    if (!kind->seeded) reject(text, spec.kind + " is not random and takes no seed");
    spec.seed = parse_seed(text, parts.back().substr(5));
    parts.pop_back();
  }
  const int given = static_cast<int>(parts.size()) - 1;
  const bool last_left_out = kind->last_param_default > 0 && given == kind->num_params - 1;
  if (given != kind->num_params && !last_left_out)
    reject(text, detail::concat(spec.kind, " takes ", kind->num_params, " size parameter(s)",
                                kind->last_param_default > 0 ? " (the last one optional)" : "", ", got ", given));
  for (int i = 1; i <= given; ++i) spec.params.push_back(parse_size(text, parts[i]));
  if (last_left_out) spec.params.push_back(kind->last_param_default);
  check_sizes(spec);
  return spec;
}

std::int64_t num_rows(const ProblemSpec& spec) {
  // Specs may be built by hand: an inconsistent one is an input error, not a crash.
  const KindInfo* kind = find_kind(spec.kind);
  TESSERA_REQUIRE_INPUT(kind && static_cast<int>(spec.params.size()) == kind->num_params,
                        "problem spec '", spec.text, "' (kind '", spec.kind, "', ", spec.params.size(),
                        " parameters) was not made by parse_spec; ", kAcceptedForms);
  const std::int64_t n = spec.params[0];
  if (spec.kind == "poisson2d") return n * n;
  if (scalar_cube(spec.kind)) return n * n * n;
  if (spec.kind == "elasticity2d") return 2 * n * n;
  if (spec.kind == "elasticity3d") return 3 * n * n * n;
  if (spec.kind == "frame2d") return 3 * n * n;
  if (spec.kind == "frame3d") return 6 * n * n * n;
  if (spec.kind == "rmat") return std::int64_t{1} << n;
  return n;  // random
}

std::int64_t num_cols(const ProblemSpec& spec) { return num_rows(spec); }

int block_size(const ProblemSpec& spec) {
  if (spec.kind == "elasticity2d") return 2;
  if (spec.kind == "elasticity3d" || spec.kind == "frame2d") return 3;
  return spec.kind == "frame3d" ? 6 : 1;
}

int dimension(const ProblemSpec& spec) {
  if (spec.kind == "rmat" || spec.kind == "random") return 0;
  return spec.kind == "poisson2d" || spec.kind == "elasticity2d" || spec.kind == "frame2d" ? 2 : 3;
}

bool is_symmetric(const ProblemSpec& spec) {
  return spec.kind == "poisson2d" || spec.kind == "poisson3d" || spec.kind == "poisson3d27" ||
         spec.kind == "elasticity2d" || spec.kind == "elasticity3d" || spec.kind == "frame2d" ||
         spec.kind == "frame3d";
}

}  // namespace tessera::gen
