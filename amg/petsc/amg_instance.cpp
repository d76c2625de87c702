#include "amg/petsc/amg_instance.hpp"

#include "local/core/error.hpp"

#ifdef TESSERA_PETSC_HAVE_DIST_AMG
#include "amg/dist/dist_amg.hpp"
#else
#include "amg/cycle.hpp"
#include "amg/hierarchy.hpp"
#endif

namespace tessera::petsc {

#ifdef TESSERA_PETSC_HAVE_DIST_AMG

struct AmgInstance::Impl {
  amg::DistAmg amg;
};

AmgInstance::AmgInstance(const dist::Communicator& comm, const dist::DistMatrix& a,
                         const amg::NearNullSpace& near_null, const amg::AmgOptions& options)
    : impl_(new Impl{amg::DistAmg(comm, a, near_null, options)}) {}
void AmgInstance::resetup(const dist::DistMatrix& a) { impl_->amg.resetup(a); }
void AmgInstance::apply(const std::vector<double>& r, std::vector<double>& z) { impl_->amg.apply(r, z); }
amg::HierarchyStats AmgInstance::statistics() const { return impl_->amg.statistics(); }
const char* AmgInstance::kind() const { return "distributed (tessera::amg::DistAmg)"; }

#else

struct AmgInstance::Impl {
  amg::Hierarchy hierarchy;
  std::unique_ptr<amg::AmgPreconditioner> cycle;  // refers to hierarchy
};

namespace {

Csr<double> whole_matrix(const dist::DistMatrix& a) { return to_csr(dist::owned_row_block(a)); }

}  // namespace

AmgInstance::AmgInstance(const dist::Communicator& comm, const dist::DistMatrix& a,
                         const amg::NearNullSpace& near_null, const amg::AmgOptions& options)
    : impl_(new Impl) {
  TESSERA_REQUIRE_INPUT(comm.size() == 1, "PCTESSERA: this build of libtessera_petsc carries the serial AMG only ",
                        "(tessera_amg was built without amg/dist); run on 1 rank, not ", comm.size());
  impl_->hierarchy = amg::setup(whole_matrix(a), near_null, options);
  impl_->cycle = std::make_unique<amg::AmgPreconditioner>(impl_->hierarchy);
}
void AmgInstance::resetup(const dist::DistMatrix& a) { amg::resetup(impl_->hierarchy, whole_matrix(a)); }
void AmgInstance::apply(const std::vector<double>& r, std::vector<double>& z) { impl_->cycle->apply(r, z); }
amg::HierarchyStats AmgInstance::statistics() const { return amg::statistics(impl_->hierarchy); }
const char* AmgInstance::kind() const { return "serial (tessera::amg::setup, 1 rank)"; }

#endif

AmgInstance::~AmgInstance() = default;

}  // namespace tessera::petsc
