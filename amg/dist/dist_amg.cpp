#include "amg/dist/dist_amg.hpp"

#include <cmath>
#include <utility>

#include "amg/dist/dist_cycle.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::amg {
namespace {

SetupTimes max_over_ranks(const dist::Communicator& comm, const SetupTimes& t) {
  std::vector<double> v{t.strength, t.aggregation, t.tentative, t.smoothing, t.galerkin, t.smoother, t.coarse};
  comm.allreduce_in_place(v, dist::ReduceOp::max);
  return SetupTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
}

std::int64_t global_nnz(const dist::Communicator& comm, const dist::DistMatrix& a) {
  return comm.allreduce(a.nnz(), dist::ReduceOp::sum);
}

/// "" when this rank's b and x fit A and are finite and the options are sane; `who` names the
/// solver in the message.
std::string system_error(const char* who, const dist::DistMatrix& a, const std::vector<double>& b,
                         const std::vector<double>& x, const KrylovOptions& o) {
  using tessera::detail::concat;
  if (a.row_partition != a.col_partition) return concat(who, ": A must be square with columns partitioned like its rows");
  if (static_cast<std::int64_t>(b.size()) != a.owned_rows() || x.size() != b.size())
    return concat(who, ": rank ", a.rank, " holds ", b.size(), " entries of b and ", x.size(), " of x for its ",
                  a.owned_rows(), " rows");
  if (!(o.rtol > 0 && o.max_iterations >= 0 && o.restart >= 1 && o.stagnation_window >= 1))
    return concat(who, ": need rtol > 0, max iterations >= 0, restart >= 1, stagnation window >= 1");
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(b[i])) return concat(who, ": b has a non-finite value ", b[i], " at row ", a.row_begin() + std::int64_t(i));
    if (!std::isfinite(x[i]))
      return concat(who, ": the initial x has a non-finite value ", x[i], " at row ", a.row_begin() + std::int64_t(i));
  }
  return "";
}

/// The serial `solver` (pcg or fgmres) on the distributed operations, after a collective check:
/// the serial solvers check locally, and a throw on one rank would leave the others in the next
/// allreduce. After it every decision of the solver is taken on allreduced scalars (dots, and
/// in FGMRES the Hessenberg entries and rotations made from them), so every rank stops at the
/// same iteration with the same status.
template <class Solver>
SolveResult collective_solve(const char* who, Solver&& solver, const dist::Communicator& comm,
                             const dist::DistMatrix& a, const std::vector<double>& b, std::vector<double>& x,
                             const DistAmg& m, const KrylovOptions& options) {
  dist::throw_if_any_rank_failed(comm, system_error(who, a, b, x, options));
  const Preconditioner preconditioner = [&m](const Vector& r, Vector& z) { m.apply(r, z); };
  return solver(a.local, b, x, preconditioner, options, dist_level_ops(comm, a));
}

}  // namespace

DistAmg::DistAmg(const dist::Communicator& comm, const dist::DistMatrix& a, const NearNullSpace& near_null,
                 const AmgOptions& options, DistSetupBackend backend)
    : comm_(&comm),
      hierarchy_(std::make_unique<DistHierarchy>(comm, a, near_null, options, std::move(backend))),
      cycle_([&] { TESSERA_TRACE_STEP("cycle"); return std::make_unique<DistCycle>(comm, *hierarchy_); }()) {}

DistAmg::DistAmg(const dist::Communicator& comm, dist::DistMatrix&& a, const NearNullSpace& near_null,
                 const AmgOptions& options, DistSetupBackend backend)
    : comm_(&comm),
      hierarchy_(std::make_unique<DistHierarchy>(comm, std::move(a), near_null, options, std::move(backend))),
      cycle_([&] { TESSERA_TRACE_STEP("cycle"); return std::make_unique<DistCycle>(comm, *hierarchy_); }()) {}

DistAmg::~DistAmg() = default;
DistAmg::DistAmg(DistAmg&&) noexcept = default;
DistAmg& DistAmg::operator=(DistAmg&&) noexcept = default;

void DistAmg::resetup(const dist::DistMatrix& a) {
  // The cycle reads the levels in place and a re-setup keeps them (dist_cycle.hpp): it and its
  // vectors stay.
  hierarchy_->resetup(*comm_, a);
}

dist::DistMatrix& DistAmg::fine_operator() { return hierarchy_->levels.front().a; }

dist::DistMatrix DistAmg::release_fine_operator() && {
  TESSERA_ASSERT(hierarchy_ != nullptr, "DistAmg: release_fine_operator on an empty preconditioner");
  dist::DistMatrix a = std::move(hierarchy_->levels.front().a);
  cycle_.reset();  // it reads the levels
  hierarchy_.reset();
  return a;
}

void DistAmg::apply(const std::vector<double>& r, std::vector<double>& z) const { cycle_->apply(r, z); }

HierarchyStats DistAmg::statistics() const {
  const DistHierarchy& h = *hierarchy_;
  HierarchyStats s;
  for (const DistLevel& level : h.levels) {
    LevelStats l;
    l.rows = level.a.global_rows();
    l.nnz = global_nnz(*comm_, level.a);
    l.nnz_per_row = l.rows ? double(l.nnz) / double(l.rows) : 0.0;
    l.p_nnz = global_nnz(*comm_, level.p);
    l.lambda_max = level.eigen.safe;
    l.omega = level.omega;
    l.times = max_over_ranks(*comm_, level.times);
    add_level(s, l);
  }
  s.coarse_method = !h.coarse_direct    ? "smoothed (too large for a dense solve)"
                    : h.coarse.factored() ? h.coarse.describe() + ", redundant on every rank"
                                          : "dense, redundant on every rank, host factor on first use";
  s.stop_reason = h.stop_reason;
  return s;
}

std::vector<int> DistAmg::active_ranks() const {
  std::vector<std::int64_t> owning;
  for (const DistLevel& level : hierarchy_->levels) owning.push_back(level.a.owned_rows() > 0);
  comm_->allreduce_in_place(owning, dist::ReduceOp::sum);
  return std::vector<int>(owning.begin(), owning.end());
}

void print(std::FILE* out, const HierarchyStats& s, const std::vector<int>& active_ranks) {
  std::fprintf(out, "%5s %12s %14s %8s %6s %12s %10s %7s %10s\n", "level", "rows", "nnz", "nnz/row", "ranks",
               "nnz(P)", "lambda_max", "omega", "setup s");
  for (std::size_t l = 0; l < s.levels.size(); ++l) {
    const LevelStats& v = s.levels[l];
    std::fprintf(out, "%5zu %12lld %14lld %8.2f %6d %12lld %10.4f %7.4f %10.4f\n", l, (long long)v.rows,
                 (long long)v.nnz, v.nnz_per_row, l < active_ranks.size() ? active_ranks[l] : 0, (long long)v.p_nnz,
                 v.lambda_max, v.omega, v.times.total());
  }
  // The serial trailer: complexities, coarsest level, setup phases ("coarse": its gather, and its
  // host factor unless that waits for its first use, as the coarsest line says).
  std::fprintf(out, "grid complexity %.4f, operator complexity %.4f, nnz(A)+nnz(P) %lld\n", s.grid_complexity,
               s.operator_complexity, (long long)s.nnz_ap);
  std::fprintf(out, "coarsest: %s (%s)\n", s.coarse_method.c_str(), s.stop_reason.c_str());
  const SetupTimes& t = s.times;
  std::fprintf(out,
               "setup phases (s, max over ranks): strength %.4f | aggregation %.4f | P tentative %.4f | "
               "P smoothing %.4f | PtAP %.4f | smoother %.4f | coarse %.4f | total %.4f\n",
               t.strength, t.aggregation, t.tentative, t.smoothing, t.galerkin, t.smoother, t.coarse, t.total());
}

SolveResult dist_pcg(const dist::Communicator& comm, const dist::DistMatrix& a, const std::vector<double>& b,
                     std::vector<double>& x, const DistAmg& m, const KrylovOptions& options) {
  return collective_solve("dist_pcg", pcg, comm, a, b, x, m, options);
}

SolveResult dist_fgmres(const dist::Communicator& comm, const dist::DistMatrix& a, const std::vector<double>& b,
                        std::vector<double>& x, const DistAmg& m, const KrylovOptions& options) {
  return collective_solve("dist_fgmres", fgmres, comm, a, b, x, m, options);
}

}  // namespace tessera::amg
