#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "amg/krylov.hpp"
#include "local/core/error.hpp"

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

double check_system(const Csr<double>& a, const Vector& b, const Vector& x, const KrylovOptions& o, const LevelOps& ops) {
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "Krylov solve: A must be square, it is ", a.rows, "x", a.cols);
  TESSERA_REQUIRE_INPUT(static_cast<std::int64_t>(b.size()) == a.rows && x.size() == b.size(), "Krylov solve: b has ",
                        b.size(), " and x ", x.size(), " entries, A has ", a.rows, " rows");
  TESSERA_REQUIRE_INPUT(o.rtol > 0 && o.max_iterations >= 0 && o.restart >= 1 && o.stagnation_window >= 1,
                        "Krylov solve: need rtol > 0, max iterations >= 0, restart >= 1, stagnation window >= 1");
  for (std::size_t i = 0; i < b.size(); ++i) {
    TESSERA_REQUIRE_INPUT(std::isfinite(b[i]), "Krylov solve: b has a non-finite value ", b[i], " at row ", i);
    TESSERA_REQUIRE_INPUT(std::isfinite(x[i]), "Krylov solve: the initial x has a non-finite value ", x[i], " at row ", i);
  }
  return std::sqrt(ops.dot(b, b));
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
