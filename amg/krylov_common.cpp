#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "amg/krylov.hpp"
#include "local/core/error.hpp"
#include "local/host/entrywise.hpp"

namespace tessera::amg {

const char* to_string(SolveStatus s) {
  switch (s) {
    case SolveStatus::converged: return "converged";
    case SolveStatus::max_iterations: return "max iterations reached";
    case SolveStatus::indefinite_operator: return "operator not positive definite";
    case SolveStatus::indefinite_preconditioner: return "preconditioner not positive definite";
    case SolveStatus::stagnation: return "stagnation";
    case SolveStatus::breakdown: return "breakdown";
    case SolveStatus::accuracy_limit: return "tolerance below the attainable accuracy";
  }
  return "?";
}

namespace {
constexpr std::pair<GramSchmidt, const char*> kGramSchmidtNames[] = {{GramSchmidt::classical_twice, "cgs2"},
                                                                     {GramSchmidt::classical_if_needed, "cgs-ifneeded"},
                                                                     {GramSchmidt::classical_once, "cgs"},
                                                                     {GramSchmidt::modified, "mgs"}};
}  // namespace

const char* to_string(GramSchmidt how) {
  for (const auto& [value, name] : kGramSchmidtNames)
    if (value == how) return name;
  return "?";
}

GramSchmidt parse_gram_schmidt(const std::string& name) {
  for (const auto& [value, known] : kGramSchmidtNames)
    if (name == known) return value;
  throw InputError("unknown Gram-Schmidt '" + name + "' (cgs2, cgs-ifneeded, cgs or mgs)");
}

namespace detail {

namespace {

/// Sizes, options and finiteness (InputError).
void check_system(const Csr<double>& a, const Vector& b, const Vector& x, const KrylovOptions& o) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "Krylov solve: A must be square, it is ", a.rows, "x", a.cols);
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(b.size()) == a.rows && x.size() == b.size(), "Krylov solve: b has ",
                        b.size(), " and x ", x.size(), " entries, A has ", a.rows, " rows");
  TESSERA_REQUIRE_INPUT(o.rtol > 0 && o.max_iterations >= 0 && o.restart >= 1 && o.stagnation_window >= 1,
                        "Krylov solve: need rtol > 0, max iterations >= 0, restart >= 1, stagnation window >= 1");
  for (std::size_t i = 0; i < b.size(); ++i) {
    TESSERA_REQUIRE_INPUT(std::isfinite(b[i]), "Krylov solve: b has a non-finite value ", b[i], " at row ", i);
    TESSERA_REQUIRE_INPUT(std::isfinite(x[i]), "Krylov solve: the initial x has a non-finite value ", x[i], " at row ", i);
  }
}

/// out = 2^k v: one multiplication an entry, as the device's axpby makes it.
void scale(const Vector& v, int k, Vector& out) {
  const double s = std::ldexp(1.0, k);
  host::for_entries(static_cast<std::int64_t>(v.size()), [&](std::int64_t i) { out[i] = s * v[i]; });
}

}  // namespace

int rhs_scale_exponent(const char* who, double bb, const std::function<double(int)>& scaled_bb) {
  if (bb >= 0x1p-512 && bb <= 0x1p512) return 0;
  // Out of range (or NaN): b.b again at 2^-640 b (b.b above 2^512, up to 2^1024 per entry) or
  // 2^640 b (below 2^-512, down to 2^-1074 per entry), both inside the normal range.
  const int probe = bb < 1 ? kProbeExponent : -kProbeExponent;
  const double probed = scaled_bb(probe);
  TESSERA_REQUIRE_INPUT(std::isfinite(probed), who, ": b has a non-finite value (||b||^2 = ", bb, ")");
  if (probed == 0) return 0;  // b = 0: every entry, times 2^640, would have left a square
  int e = 0;
  std::frexp(std::sqrt(probed), &e);  // ||2^probe b|| in [2^(e-1), 2^e)
  return std::clamp(probe - e, -1022, 1022);
}

void require_scaled_guess(const char* who, double probe, int k) {
  TESSERA_REQUIRE_INPUT(std::isfinite(probe), who, ": the initial x times 2^", k,
                        " (b is scaled into double's range by it) overflows: x is too far from b's scale; start "
                        "from 0 or a guess nearer b's magnitude");
}

void check_unscaled_solution(double probe, int k, SolveResult& result) {
  if (std::isfinite(probe)) return;
  result.status = SolveStatus::breakdown;
  result.message = "the solution overflows double precision: the system scaled by 2^" + std::to_string(k) +
                   " was solved (" + result.message + "), its x times 2^" + std::to_string(-k) + " is not finite";
}

SolveResult solve_in_range(const Csr<double>& a, const Vector& b, Vector& x, const KrylovOptions& o,
                           const LevelOps& ops, const InRangeSolve& solve) {
  check_system(a, b, x, o);
  const double bb = ops.dot(b, b);
  Vector scaled;  // sized only off the range: the solve in range allocates nothing more
  const auto scaled_dot = [&](const Vector& v, int t) {
    scaled.resize(v.size());
    scale(v, t, scaled);
    return ops.dot(scaled, scaled);
  };
  const int k = rhs_scale_exponent("Krylov solve", bb, [&](int t) { return scaled_dot(b, t); });
  if (k == 0) return solve(b, x, std::sqrt(bb));
  Vector y(x.size());
  scale(x, k, y);
  require_scaled_guess("Krylov solve", scaled_dot(y, -kProbeExponent), k);  // global: alike on every rank
  scale(b, k, scaled);
  SolveResult result = solve(scaled, y, std::sqrt(ops.dot(scaled, scaled)));
  scale(y, -k, x);
  check_unscaled_solution(scaled_dot(x, -kProbeExponent), k, result);
  return result;
}

void finish(const Csr<double>& a, const Vector& b, const Vector& x, double b_norm, const LevelOps& ops,
            SolveResult& result) {
  Vector r(b.size());
  ops.residual(a, x, b, r);
  const double r_norm = std::sqrt(ops.dot(r, r));
  result.relative_residual = b_norm > 0 ? r_norm / b_norm : r_norm;
  set_final_message(result);
}

void set_final_message(SolveResult& result) {
  if (!result.message.empty()) return;
  char text[160];
  std::snprintf(text, sizeof text, "%s after %d iterations, true relative residual %.3e", to_string(result.status),
                result.iterations, result.relative_residual);
  result.message = text;
}

std::string value_at(int it, const char* what, double value) {
  char text[160];
  std::snprintf(text, sizeof text, "%s = %.3e at iteration %d", what, value, it);
  return text;
}

std::string stagnation_message(int window, double smallest) {
  char text[256];
  // Both causes are met: a singular A with b outside its range, and an SPD A so ill-conditioned
  // that the preconditioner's coarse levels lose it in double precision (frame2d:32:1000 in
  // docs/performance.md: the direct solve reaches 8e-8, the AMG never passes the first residual).
  std::snprintf(text, sizeof text,
                "no new smallest residual in %d iterations (smallest %.3e): a singular or inconsistent system, "
                "or one too ill-conditioned for the preconditioner in double precision?",
                window, smallest);
  return text;
}

bool FailedConfirmations::record(double residual) {
  halved = count == 0 || residual <= 0.5 * smallest;
  const bool new_smallest = count == 0 || residual < smallest;
  if (new_smallest) smallest = residual;
  ++count;
  return new_smallest;
}

std::string FailedConfirmations::limit_message(const char* estimate, double rtol, double last) const {
  char text[400];
  std::snprintf(text, sizeof text,
                "the %s reached rtol %.1e %d times, the true residual did not (last %.3e, smallest %.3e): rtol is "
                "below this system's attainable accuracy in double precision (rounding in A x; an ill-conditioned A)",
                estimate, rtol, count, last, smallest);
  return text;
}

}  // namespace detail
}  // namespace tessera::amg
