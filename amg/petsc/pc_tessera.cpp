// PCTESSERA: Tessera's smoothed-aggregation AMG as a PETSc preconditioner. The operator's
// owned rows become a dist::DistMatrix on PETSc's ownership ranges, the hierarchy is built
// once, and PCApply is one cycle. Re-setup with SAME_NONZERO_PATTERN moves values only.
// One rank with the GPU backend builds the one-GPU hierarchy instead (pc_single_gpu.hpp: the
// whole setup and re-setup on the device), unless -pc_tessera_hierarchy distributed.
#include <petsc/private/pcimpl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amg/dist/dist_amg.hpp"
#include "amg/petsc/pc_device_backend.hpp"
#include "amg/petsc/pc_single_gpu.hpp"
#include "amg/petsc/pc_tessera.hpp"
#include "amg/petsc/petsc_boundary.hpp"
#include "amg/petsc/petsc_operator.hpp"
#include "amg/petsc/separate_kinds_operator.hpp"
#include "amg/petsc/whole_matrix_arrays.hpp"
#include "dist/backend_choice.hpp"
#include "dist/host_threads.hpp"

PetscLogEvent TESSERA_PCReadA = 0, TESSERA_PCHierarchy = 0, TESSERA_PCUpload = 0;

namespace tessera::petsc {
namespace {

/// A -log_view event around a scope that may throw (ended on the way out either way).
class LoggedEvent {
 public:
  explicit LoggedEvent(PetscLogEvent event) : event_(event) { (void)PetscLogEventBegin(event_, 0, 0, 0, 0); }
  ~LoggedEvent() { (void)PetscLogEventEnd(event_, 0, 0, 0, 0); }
  LoggedEvent(const LoggedEvent&) = delete;
  LoggedEvent& operator=(const LoggedEvent&) = delete;

 private:
  PetscLogEvent event_;
};

const char* const kSmootherNames[] = {"chebyshev", "l1-jacobi"};
const char* const kCycleNames[] = {"v", "w"};
const char* const kSpgemmNames[] = {"tile", "cusparse", "auto", "hash"};
const char* const kBackendNames[] = {"auto", "host", "gpu"};
const char* const kTransferNames[] = {"host", "device"};
const char* const kHierarchyNames[] = {"auto", "distributed"};

struct PcTessera {
  amg::AmgOptions options;
  int spgemm = 0;  // index into kSpgemmNames; only the GPU backend distinguishes them
  int backend_option = 0;  // index into kBackendNames
  int resetup_transfer = 0;  // index into kTransferNames: where later re-setups recompute P, R and A_c
  int hierarchy_option = 0;  // index into kHierarchyNames: auto = the one-GPU hierarchy on one rank with the gpu backend
  Backend backend = Backend::host;  // resolved at the first setup, the same on every rank
  std::unique_ptr<dist::Communicator> comm;
  // gpu backend; declared before amg: destroyed after it. amg's levels hold copies of A on the
  // device, freed on the backend's stream, and its setup phases refer to the backend's context.
  // The backend's uploaded cycle refers to amg's levels: release() it before amg goes.
  std::unique_ptr<PcDeviceBackend> device;
  std::unique_ptr<amg::DistAmg> amg;
  // Or, on one rank with the gpu backend, the one-GPU hierarchy (then device and amg stay empty).
  std::unique_ptr<PcSingleGpu> single;
  std::vector<double> r, z;  // host staging of the PETSc vectors
  PetscInt full_setups = 0, value_setups = 0;
  // PCSetCoordinates (GAMG's interface): the rank's nodes, `coordinate_dim` numbers each; read
  // at the next setup, which is then a full one. `near_null` says what the last setup used.
  PetscInt coordinate_dim = 0;
  std::vector<double> coordinates;
  bool coordinates_changed = false;
  std::string near_null = "none yet";
  // -pc_tessera_separate_kinds: the hierarchy from the operator without the couplings between
  // its kinds of dof (separate_kinds_operator.hpp). `separated_kinds`: the block size the last
  // full setup separated (1: none), which its numeric re-setups separate alike.
  PetscBool separate_kinds = PETSC_FALSE;
  int separated_kinds = 1;

  ~PcTessera() {
    if (device) device->release();  // then amg, then device: the members' order
  }
};

PcTessera& data(PC pc) { return *static_cast<PcTessera*>(pc->data); }

// The rigid-body modes of the rank's rows from PCSetCoordinates' nodes (dim numbers each; the
// block size, dim or with rotations 3 in 2D and 6 in 3D, dofs a node), about the global centroid
// (collective: every rank calls it, whatever its `error`).
amg::NearNullSpace rigid_body_modes_of(const dist::Communicator& comm, const PcTessera& d, std::int64_t owned_rows,
                                       amg::NodeDofs dofs, std::string& error) {
  const int dim = static_cast<int>(d.coordinate_dim), per_node = amg::node_dof_count(dim, dofs);
  const std::int64_t nodes = static_cast<std::int64_t>(d.coordinates.size()) / dim;
  if (error.empty() && per_node * nodes != owned_rows)
    error = tessera::detail::concat("PCTESSERA: PCSetCoordinates gave ", nodes, " nodes on rank ", PetscGlobalRank,
                                    ", the operator owns ", owned_rows, " rows there (", per_node, " dofs a node)");
  std::vector<double> per_dof;  // x y z a row, z = 0 in 2D (amg::rigid_body_modes' layout)
  if (error.empty())
    for (std::int64_t row = 0; row < owned_rows; ++row)
      for (int c = 0; c < 3; ++c) per_dof.push_back(c < dim ? d.coordinates[dim * (row / per_node) + c] : 0.0);
  std::vector<double> sums(4, 0.0);  // x, y, z over the dofs, and the dofs
  for (std::size_t i = 0; i < per_dof.size(); ++i) sums[i % 3] += per_dof[i];
  sums[3] = static_cast<double>(per_dof.size() / 3);
  comm.allreduce_in_place(sums, dist::ReduceOp::sum);
  if (!error.empty()) return {};
  const double n = std::max(1.0, sums[3]);
  return amg::rigid_body_modes(per_dof, owned_rows, dim, {sums[0] / n, sums[1] / n, sums[2] / n}, dofs);
}

// The operator's near-null space (MatSetNearNullSpace) first, as GAMG; else PCSetCoordinates'
// rigid-body modes for 2- or 3-dof nodes in as many dimensions (a scalar operator keeps the
// constant, as GAMG does); else one constant a component. A vector of the wrong local size sets
// `error` (and the result is not to be used): the check is local, the caller reports it
// collectively so that no rank is left in the setup's collectives.
amg::NearNullSpace near_null_space(Mat a, const dist::Communicator& comm, PcTessera& d, std::int64_t owned_rows,
                                   std::string& error) {
  MatNullSpace space = nullptr;
  PetscInt block_size = 1;
  TESSERA_PETSC_THROW(MatGetNearNullSpace(a, &space));
  TESSERA_PETSC_THROW(MatGetBlockSize(a, &block_size));
  d.coordinates_changed = false;
  if (d.separated_kinds > 1) {  // a scalar AMG of each kind: the constant (amg/separate_kinds.hpp)
    d.near_null = tessera::detail::concat(
        "the constant (block size 1) on the operator without the couplings between its ", d.separated_kinds,
        " kinds of dof (-pc_tessera_separate_kinds)", space ? "; the operator's MatSetNearNullSpace not used" : "",
        d.coordinate_dim > 0 ? "; PCSetCoordinates' nodes not used" : "");
    return amg::constant_near_null_space(owned_rows, 1);
  }
  const bool rigid = !space && d.coordinate_dim > 0 && block_size > 1;
  const int dim = static_cast<int>(d.coordinate_dim);
  // GAMG's rule: dim dofs a node are displacements; 3 in 2D or 6 in 3D also rotations (shells).
  const bool solid = (dim == 2 || dim == 3) && block_size == dim;
  const bool rotating = (dim == 2 || dim == 3) && block_size == amg::rigid_body_mode_count(dim);
  if (rigid && !solid && !rotating)
    error = tessera::detail::concat("PCTESSERA: PCSetCoordinates makes the rigid-body modes of 2D or 3D elasticity "
                                    "(2 or 3 coordinates a node, the block size as many, or 3 in 2D and 6 in 3D "
                                    "with the rotations); got ", d.coordinate_dim,
                                    " coordinates a node with block size ", block_size,
                                    ": attach the near-null space with MatSetNearNullSpace");
  if (rigid) {
    const amg::NodeDofs dofs = solid ? amg::NodeDofs::displacements : amg::NodeDofs::with_rotations;
    if (error.empty())
      d.near_null = tessera::detail::concat(amg::rigid_body_mode_count(dim), " rigid-body modes from PCSetCoordinates",
                                            solid ? "" : " (the nodes' rotations too)");
    return rigid_body_modes_of(comm, d, owned_rows, dofs, error);
  }
  if (!space) {
    d.near_null =
        tessera::detail::concat(block_size, " constant vector(s), one a component (block size ", block_size, ")");
    return amg::constant_near_null_space(owned_rows, static_cast<int>(block_size));
  }
  PetscBool has_constant = PETSC_FALSE;
  PetscInt count = 0;
  const Vec* vectors = nullptr;
  TESSERA_PETSC_THROW(MatNullSpaceGetVecs(space, &has_constant, &count, &vectors));
  const std::int64_t k = count + (has_constant ? 1 : 0);
  TESSERA_REQUIRE_INPUT(k > 0, "PCTESSERA: the near-null space attached to the operator is empty");
  amg::NearNullSpace b{DenseMatrix(owned_rows, k, Layout::row_major, 0.0), static_cast<int>(block_size)};
  std::int64_t column = 0;
  if (has_constant) {
    for (std::int64_t i = 0; i < owned_rows; ++i) b.vectors.at(i, column) = 1.0;
    ++column;
  }
  for (PetscInt v = 0; v < count; ++v, ++column) {
    PetscInt local = 0;
    TESSERA_PETSC_THROW(VecGetLocalSize(vectors[v], &local));
    if (local != owned_rows) {
      error = tessera::detail::concat("PCTESSERA: near-null space vector ", v, " has ", local,
                                      " local entries on rank ", PetscGlobalRank, ", the operator owns ", owned_rows,
                                      " rows there");
      return b;
    }
    const PetscScalar* x = nullptr;
    TESSERA_PETSC_THROW(VecGetArrayRead(vectors[v], &x));
    for (std::int64_t i = 0; i < owned_rows; ++i) b.vectors.at(i, column) = to_double(x[i]);
    TESSERA_PETSC_THROW(VecRestoreArrayRead(vectors[v], &x));
  }
  d.near_null = tessera::detail::concat(k, " vector(s) from MatSetNearNullSpace");
  return b;
}

bool one_gpu_hierarchy(const PcTessera& d) {
  return d.backend == Backend::gpu && d.comm->size() == 1 && d.hierarchy_option == 0;
}

// One rank, gpu backend: A's arrays as PETSc keeps them (whole_matrix_arrays.hpp: PETSc's rows
// have sorted, unique columns, so they are a valid CSR in the row order value_setup reads),
// uploaded as they are and the hierarchy built on the device.
void full_setup_one_gpu(Mat a, PcTessera& d) {
  std::optional<LoggedEvent> event(std::in_place, TESSERA_PCReadA);
  const WholeMatrixArrays whole(a, d.separated_kinds);
  std::string error;
  const amg::NearNullSpace near_null = near_null_space(a, *d.comm, d, whole.arrays().rows, error);
  TESSERA_REQUIRE_INPUT(error.empty(), error);
  event.emplace(TESSERA_PCHierarchy);  // the upload, and the CUDA context's creation at the first setup
  if (!d.single) d.single = std::make_unique<PcSingleGpu>(*d.comm);
  d.single->setup(whole.arrays(), near_null, d.options, kSpgemmNames[d.spgemm]);
  event.emplace(TESSERA_PCUpload);
  d.single->prepare_cycle();
}

// false (the hierarchy untouched) if A's pattern changed.
bool value_setup_one_gpu(Mat a, PcTessera& d) {
  std::optional<LoggedEvent> event(std::in_place, TESSERA_PCReadA);
  const WholeMatrixArrays whole(a, d.separated_kinds);
  event.emplace(TESSERA_PCHierarchy);  // the pattern compared and the values uploaded, then the re-setup
  if (!d.single->resetup_if_same_pattern(whole.arrays())) return false;
  event.emplace(TESSERA_PCUpload);
  d.single->prepare_cycle();
  ++d.value_setups;
  return true;
}

void full_setup(PC pc, PcTessera& d) {
  Mat a = pc->pmat;
  if (d.device) d.device->release();  // the uploaded levels refer to the hierarchy reset next
  d.amg.reset();
  if (!d.comm) {
    d.comm = std::make_unique<dist::Communicator>(PetscObjectComm(reinterpret_cast<PetscObject>(pc)));
    d.backend = dist::resolve_distributed_backend(*d.comm, kBackendNames[d.backend_option]);
    dist::share_node_cpus(*d.comm);  // the setup's host loops: this rank's share of its node's CPUs
  }
  // gpu: the setup's numeric steps on the rank's GPU (products, graph phases, eigenvalue
  // estimates, QR, merges, transposes; the symbolic ones on the host), the hierarchy kept there
  // for the cycles.
  const bool gpu = d.backend == Backend::gpu;
  const bool transfer_on_device = d.resetup_transfer == 1;
  TESSERA_REQUIRE_INPUT(gpu || !transfer_on_device,  // the backend is the same on every rank
                        "PCTESSERA: -pc_tessera_resetup_transfer device recomputes the levels on the GPUs; it needs "
                        "-pc_tessera_backend gpu (this run's backend is host)");
  d.separated_kinds = d.separate_kinds ? kinds_to_separate(a) : 1;  // the block size: the same on every rank
  if (one_gpu_hierarchy(d)) {
    full_setup_one_gpu(a, d);
    ++d.full_setups;
    return;
  }
  d.single.reset();  // -pc_tessera_hierarchy may have changed since the last full setup
  std::optional<LoggedEvent> event(std::in_place, TESSERA_PCReadA);
  dist::DistMatrix operator_a =
      d.separated_kinds > 1 ? read_separated_dist_matrix(*d.comm, a, d.separated_kinds) : read_dist_matrix(*d.comm, a);
  std::string error;
  const amg::NearNullSpace near_null = near_null_space(a, *d.comm, d, operator_a.owned_rows(), error);
  dist::throw_if_any_rank_failed(*d.comm, error);
  event.emplace(TESSERA_PCHierarchy);  // with the CUDA context and the device transport at the first setup
  if (gpu && !d.device) d.device = std::make_unique<PcDeviceBackend>(*d.comm);
  amg::DistSetupBackend backend;  // the host's
  if (gpu)
    backend = d.device->setup_backend(kSpgemmNames[d.spgemm], transfer_on_device);
  else
    backend.products = dist::local_spgemm_for(*d.comm, d.backend, kSpgemmNames[d.spgemm]);  // checks the name
  // The hierarchy takes A over as its level 0: the PC keeps no copy (a re-setup refreshes
  // the hierarchy's own).
  d.amg = std::make_unique<amg::DistAmg>(*d.comm, std::move(operator_a), near_null, d.options, std::move(backend));
  event.emplace(TESSERA_PCUpload);
  if (gpu) d.device->upload(*d.amg);
  ++d.full_setups;
}

// false if some rank's rows changed pattern (then nothing was touched).
bool value_setup(PC pc, PcTessera& d) {
  if (d.single) return value_setup_one_gpu(pc->pmat, d);  // one rank: nothing to agree on
  std::optional<LoggedEvent> event(std::in_place, TESSERA_PCReadA);
  dist::DistMatrix& fine = d.amg->fine_operator();
  const bool same = d.separated_kinds > 1
                        ? refresh_separated_values_if_same_pattern(*d.comm, pc->pmat, d.separated_kinds, fine)
                        : refresh_values_if_same_pattern(*d.comm, pc->pmat, fine);
  if (!same) return false;
  event.emplace(TESSERA_PCHierarchy);
  try {
    d.amg->resetup(fine);  // collective: it fails on every rank alike
  } catch (...) {
    // Level 0 now holds the refused values and the coarser levels may be half updated: drop
    // the hierarchy, so that the next PCSetUp sets up afresh and PCApply refuses meanwhile.
    if (d.device) d.device->release();
    d.amg.reset();
    throw;
  }
  event.emplace(TESSERA_PCUpload);
  if (d.device) d.device->refresh(*d.amg);  // new values into the uploaded levels, no plan rebuilt
  ++d.value_setups;
  return true;
}

PetscErrorCode check_operator(PC pc) {
  Mat a = pc->pmat;
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(pc));
  PetscInt m = 0, n = 0;
  PetscBool aij = PETSC_FALSE;
  PetscFunctionBegin;
  PetscCheck(!kUnsupportedScalar, comm, PETSC_ERR_SUP,
             "PCTESSERA computes in real double precision; this PETSc was configured with %s", kUnsupportedScalar);
  PetscCall(MatGetSize(a, &m, &n));
  PetscCheck(m == n, comm, PETSC_ERR_ARG_SIZ, "PCTESSERA needs a square operator; got %" PetscInt_FMT " x %" PetscInt_FMT, m, n);
  PetscCall(PetscObjectBaseTypeCompareAny(reinterpret_cast<PetscObject>(a), &aij, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCheck(aij, comm, PETSC_ERR_SUP,
             "PCTESSERA needs an AIJ operator (seqaij, mpiaij or a type derived from them); got %s: use -mat_type aij "
             "or MatConvert(A, MATAIJ, ...)",
             reinterpret_cast<PetscObject>(a)->type_name);
  PetscFunctionReturn(0);
}

PetscErrorCode PCSetUp_Tessera(PC pc) {
  PcTessera& d = data(pc);
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(pc));
  bool values_only = false;
  PetscFunctionBegin;
  PetscCall(check_operator(pc));
  const bool set_up = d.amg || (d.single && d.single->ready());  // a failed re-setup leaves no one-GPU hierarchy
  const bool same_kinds = (d.separate_kinds == PETSC_TRUE) == (d.separated_kinds > 1);
  if (pc->setupcalled && set_up && pc->flag == SAME_NONZERO_PATTERN && !d.coordinates_changed && same_kinds) {
    bool same = true;
    TesseraPetscTry(comm, same = value_setup(pc, d));
    PetscCheck(same, comm, PETSC_ERR_ARG_INCOMP,
               "PCTESSERA: the operator's nonzero pattern changed but PCSetUp was told SAME_NONZERO_PATTERN; "
               "pass DIFFERENT_NONZERO_PATTERN (or let PETSc track it through MatSetValues/MatAssembly)");
    values_only = true;
  } else {
    TesseraPetscTry(comm, full_setup(pc, d));
  }
  PetscInt global_rows = 0;
  PetscCall(MatGetSize(pc->pmat, &global_rows, nullptr));
  PetscCall(PetscInfo(pc, "Tessera AMG %s setup on %" PetscInt_FMT " global rows\n", values_only ? "numeric" : "full",
                      global_rows));
  PetscFunctionReturn(0);
}

// Host PETSc vectors: the owned entries are staged through d.r / d.z (and, with the gpu
// backend, through the device once per apply: see pc_device_backend.hpp).
PetscErrorCode PCApply_Tessera(PC pc, Vec x, Vec y) {
  PcTessera& d = data(pc);
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(pc));
  const PetscScalar* in = nullptr;
  PetscScalar* out = nullptr;
  PetscInt n = 0;
  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayRead(x, &in));
  TesseraPetscTry(comm, d.r.resize(static_cast<std::size_t>(n)));
  for (PetscInt i = 0; i < n; ++i) d.r[i] = to_double(in[i]);
  PetscCall(VecRestoreArrayRead(x, &in));
  if (d.single) {
    TesseraPetscTry(comm, d.single->apply(d.r, d.z));
  } else if (d.device) {
    TesseraPetscTry(comm, d.device->apply(d.r, d.z));
  } else {
    TesseraPetscTry(comm, {
      TESSERA_REQUIRE_INPUT(d.amg, "PCTESSERA: the hierarchy was not set up before PCApply (its last setup failed)");
      d.amg->apply(d.r, d.z);
    });
  }
  PetscCall(VecGetArrayWrite(y, &out));
  for (PetscInt i = 0; i < n; ++i) out[i] = d.z[i];
  PetscCall(VecRestoreArrayWrite(y, &out));
  PetscFunctionReturn(0);
}

PetscErrorCode PCSetFromOptions_Tessera(PC pc, PetscOptionItems* PetscOptionsObject) {
  PcTessera& d = data(pc);
  amg::AmgOptions& o = d.options;
  PetscInt smoother = static_cast<PetscInt>(o.smoother), cycle = static_cast<PetscInt>(o.cycle);
  PetscInt sweeps = o.jacobi_sweeps, degree = o.chebyshev_degree, levels = o.max_levels;
  PetscInt coarse = static_cast<PetscInt>(o.coarse_size), spgemm = d.spgemm, backend = d.backend_option;
  PetscInt transfer = d.resetup_transfer, hierarchy = d.hierarchy_option;
  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Tessera AMG options");
  PetscCall(PetscOptionsReal("-pc_tessera_strength_threshold", "Keep a_ij if |a_ij| >= theta sqrt(|a_ii a_jj|)",
                             "PCTESSERA", o.strength_threshold, &o.strength_threshold, nullptr));
  PetscCall(PetscOptionsEList("-pc_tessera_smoother", "Smoother on every level", "PCTESSERA", kSmootherNames, 2,
                              kSmootherNames[smoother], &smoother, nullptr));
  PetscCall(PetscOptionsInt("-pc_tessera_smoother_sweeps", "l1-Jacobi sweeps per smoothing step", "PCTESSERA", sweeps,
                            &sweeps, nullptr));
  PetscCall(PetscOptionsInt("-pc_tessera_smoother_degree", "Chebyshev polynomial degree", "PCTESSERA", degree,
                            &degree, nullptr));
  PetscCall(PetscOptionsEList("-pc_tessera_cycle", "Cycle type", "PCTESSERA", kCycleNames, 2, kCycleNames[cycle],
                              &cycle, nullptr));
  PetscCall(PetscOptionsInt("-pc_tessera_coarse_size", "Stop coarsening at this many rows (solved directly)",
                            "PCTESSERA", coarse, &coarse, nullptr));
  PetscCall(PetscOptionsInt("-pc_tessera_max_levels", "Maximum number of levels", "PCTESSERA", levels, &levels, nullptr));
  PetscCall(PetscOptionsEList("-pc_tessera_spgemm",
                              "SpGEMM of the GPU backend's setup products: tile, cusparse, hash, or auto (from a work "
                              "estimate: per product on the distributed hierarchy, once from the finest level on "
                              "the one-GPU hierarchy)",
                              "PCTESSERA", kSpgemmNames, 4, kSpgemmNames[spgemm], &spgemm, nullptr));
  PetscCall(PetscOptionsEList("-pc_tessera_backend",
                              "auto (the GPUs when every rank has its own), host, gpu (ranks sharing a GPU exchange through host memory: slower); fixed at the first setup",
                              "PCTESSERA", kBackendNames, 3, kBackendNames[backend], &backend, nullptr));
  PetscCall(PetscOptionsEList("-pc_tessera_resetup_transfer",
                              "Where SAME_NONZERO_PATTERN re-setups of the distributed hierarchy recompute P, R and "
                              "the coarse operators: host, or device (gpu backend; from the second re-setup on, "
                              "planned in the first; faster, several times the device memory); fixed at the first "
                              "setup (the one-GPU hierarchy re-sets up on the device always)",
                              "PCTESSERA", kTransferNames, 2, kTransferNames[transfer], &transfer, nullptr));
  PetscCall(PetscOptionsEList("-pc_tessera_hierarchy",
                              "auto (on one rank with the gpu backend, the one-GPU hierarchy: every setup and re-setup "
                              "step on the device; otherwise distributed), or distributed (always the distributed "
                              "hierarchy, for comparison); read at each full setup",
                              "PCTESSERA", kHierarchyNames, 2, kHierarchyNames[hierarchy], &hierarchy, nullptr));
  PetscCall(PetscOptionsBool("-pc_tessera_separate_kinds",
                             "Build the hierarchy from the operator without the couplings between its kinds of dof "
                             "(the block size; one constant, block size 1): for slender frames and shells; read at "
                             "each full setup",
                             "PCTESSERA", d.separate_kinds, &d.separate_kinds, nullptr));
  PetscBool filtered = o.filtered_smoothing ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscOptionsBool("-pc_tessera_filtered_smoothing",
                             "Smooth the tentative prolongator with the operator's strong couplings only (the others "
                             "added to the diagonal): sparser coarse levels where the strength threshold drops many "
                             "couplings, as with -pc_tessera_separate_kinds; read at each full setup",
                             "PCTESSERA", filtered, &filtered, nullptr));
  PetscOptionsHeadEnd();
  o.filtered_smoothing = filtered == PETSC_TRUE;
  o.smoother = static_cast<amg::SmootherKind>(smoother);
  o.cycle = static_cast<amg::CycleKind>(cycle);
  o.jacobi_sweeps = static_cast<int>(sweeps);
  o.chebyshev_degree = static_cast<int>(degree);
  o.coarse_size = coarse;
  o.max_levels = static_cast<int>(levels);
  d.spgemm = static_cast<int>(spgemm);
  d.backend_option = static_cast<int>(backend);
  d.resetup_transfer = static_cast<int>(transfer);
  d.hierarchy_option = static_cast<int>(hierarchy);
  TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(pc)), amg::validate(o));
  PetscFunctionReturn(0);
}

PetscErrorCode view_hierarchy(PetscViewer viewer, const amg::HierarchyStats& s) {
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "level %12s %14s %8s\n", "rows", "nnz", "nnz/row"));
  for (std::size_t l = 0; l < s.levels.size(); ++l) {
    const amg::LevelStats& v = s.levels[l];
    PetscCall(PetscViewerASCIIPrintf(viewer, "%5zu %12lld %14lld %8.2f\n", l, static_cast<long long>(v.rows),
                                     static_cast<long long>(v.nnz), v.nnz_per_row));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "grid complexity %.4f, operator complexity %.4f\n", s.grid_complexity,
                                   s.operator_complexity));
  PetscCall(PetscViewerASCIIPrintf(viewer, "coarsest level: %s (%s)\n", s.coarse_method.c_str(), s.stop_reason.c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "setup time %.4g s\n", s.times.total()));
  PetscFunctionReturn(0);
}

// With -pc_tessera_separate_kinds the operator complexity above counts the separated level 0's
// entries; this one counts the operator's, what the cycle's memory and work compare with.
PetscErrorCode view_complexity_over_operator(Mat a, PetscViewer viewer, const amg::HierarchyStats& s) {
  MatInfo info;
  long long entries = 0;
  PetscFunctionBegin;
  PetscCall(MatGetInfo(a, MAT_GLOBAL_SUM, &info));
  for (const amg::LevelStats& level : s.levels) entries += static_cast<long long>(level.nnz);
  const long long operator_entries = static_cast<long long>(info.nz_used);
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "separated kinds: level 0 keeps %lld of the operator's %lld entries; the hierarchy's entries over the "
              "operator's: %.4f\n",
      static_cast<long long>(s.levels.front().nnz), operator_entries,
      double(entries) / double(std::max(1LL, operator_entries))));
  PetscFunctionReturn(0);
}

PetscErrorCode PCView_Tessera(PC pc, PetscViewer viewer) {
  PcTessera& d = data(pc);
  const amg::AmgOptions& o = d.options;
  PetscBool ascii = PETSC_FALSE;
  amg::HierarchyStats stats;
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(viewer), PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "Tessera smoothed-aggregation AMG, %s cycle, %s smoother (%s %d)\n",
                                   amg::to_string(o.cycle), amg::to_string(o.smoother),
                                   o.smoother == amg::SmootherKind::chebyshev ? "degree" : "sweeps",
                                   o.smoother == amg::SmootherKind::chebyshev ? o.chebyshev_degree : o.jacobi_sweeps));
  PetscCall(PetscViewerASCIIPrintf(viewer, "strength threshold %g, coarse size %lld, max levels %d, spgemm %s%s\n",
                                   o.strength_threshold, static_cast<long long>(o.coarse_size), o.max_levels,
                                   kSpgemmNames[d.spgemm],
                                   o.filtered_smoothing ? ", filtered prolongator smoothing" : ""));
  if (d.single)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "backend gpu, one rank: the one-GPU hierarchy on the device (%.1f MiB), every setup "
                                     "and re-setup step there (-pc_tessera_hierarchy distributed for the distributed "
                                     "one); vectors: host PETSc Vecs staged through the device once per apply\n",
                                     double(d.single->device_bytes()) / (1 << 20)));
  else if (d.device)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "backend gpu: hierarchy on the device (%.1f MiB on this rank), the setup's "
                                     "numeric steps on the GPU (symbolic ones on the host), re-setup transfer on "
                                     "the %s; "
                                     "vectors: host PETSc Vecs staged through the device once per apply\n",
                                     double(d.device->device_bytes()) / (1 << 20), kTransferNames[d.resetup_transfer]));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "backend host: hierarchy and vectors on the host (no device copies)\n"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "near-null space: %s\n", d.near_null.c_str()));
  if (d.comm)  // set up at least once: the threads are decided
    PetscCall(PetscViewerASCIIPrintf(viewer, "host threads a rank (the setup's host loops): rank 0: %s\n",
                                     dist::host_threads_summary().c_str()));
  if (d.single && d.single->ready()) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "AMG: %s; setups: %" PetscInt_FMT " full, %" PetscInt_FMT " numeric\n",
                                     "one GPU (tessera::amg::gpu::DeviceHierarchy)", d.full_setups, d.value_setups));
    TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(pc)), stats = d.single->statistics());
    PetscCall(view_hierarchy(viewer, stats));
    std::vector<std::string> engines;
    TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(pc)), engines = d.single->product_engines());
    for (std::size_t l = 0; l < engines.size(); ++l)
      PetscCall(PetscViewerASCIIPrintf(viewer, "level %zu products: %s\n", l, engines[l].c_str()));
    PetscCall(PetscViewerASCIIPrintf(viewer, "cycle as a CUDA graph: %s\n", d.single->cuda_graph_state().c_str()));
  } else if (d.amg) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "AMG: %s; setups: %" PetscInt_FMT " full, %" PetscInt_FMT " numeric\n",
                                     "distributed (tessera::amg::DistAmg)", d.full_setups, d.value_setups));
    TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(pc)), stats = d.amg->statistics());
    PetscCall(view_hierarchy(viewer, stats));
    if (d.device) PetscCall(PetscViewerASCIIPrintf(viewer, "%s (rank 0)\n", d.device->cycle_state().c_str()));
  }
  if (d.separated_kinds > 1 && !stats.levels.empty()) PetscCall(view_complexity_over_operator(pc->pmat, viewer, stats));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

PetscErrorCode PCReset_Tessera(PC pc) {
  PcTessera& d = data(pc);
  PetscFunctionBegin;
  if (d.device) d.device->release();  // the uploaded cycle, before the hierarchy it points into
  d.amg.reset();                       // its copies of A, before the context they were made on
  d.device.reset();
  d.single.reset();
  PetscFunctionReturn(0);
}

// GAMG's interface for the geometry behind the rigid-body modes (PETSc's ex56 calls it unless
// -use_mat_nearnullspace, ex55 with -use_coordinates): `coords` holds nloc nodes of `dim`
// numbers each, interleaved.
PetscErrorCode PCSetCoordinates_Tessera(PC pc, PetscInt dim, PetscInt nloc, PetscReal* coords) {
  PcTessera& d = data(pc);
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(pc));
  PetscFunctionBegin;
  PetscCheck(dim >= 1 && nloc >= 0 && (coords || nloc == 0), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "PCTESSERA: PCSetCoordinates needs dim >= 1 and nloc >= 0 coordinates; got dim %" PetscInt_FMT
             ", nloc %" PetscInt_FMT, dim, nloc);
  for (PetscInt i = 0; i < dim * nloc; ++i)
    PetscCheck(std::isfinite(static_cast<double>(coords[i])), PETSC_COMM_SELF, PETSC_ERR_FP,
               "PCTESSERA: PCSetCoordinates: coordinate %" PetscInt_FMT " of rank %d is not finite", i,
               PetscGlobalRank);
  TesseraPetscTry(comm, d.coordinates.assign(coords, coords + dim * nloc));
  d.coordinate_dim = dim;
  d.coordinates_changed = true;
  PetscFunctionReturn(0);
}

PetscErrorCode PCDestroy_Tessera(PC pc) {
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction(reinterpret_cast<PetscObject>(pc), "PCSetCoordinates_C", nullptr));
  delete static_cast<PcTessera*>(pc->data);
  pc->data = nullptr;
  PetscFunctionReturn(0);
}

}  // namespace
}  // namespace tessera::petsc

PetscErrorCode PCCreate_Tessera(PC pc) {
  using namespace tessera::petsc;
  PetscFunctionBegin;
  TesseraPetscTry(PETSC_COMM_SELF, pc->data = new PcTessera);
  pc->ops->setup = PCSetUp_Tessera;
  pc->ops->apply = PCApply_Tessera;
  pc->ops->setfromoptions = PCSetFromOptions_Tessera;
  pc->ops->view = PCView_Tessera;
  pc->ops->reset = PCReset_Tessera;
  pc->ops->destroy = PCDestroy_Tessera;
  PetscCall(PetscObjectComposeFunction(reinterpret_cast<PetscObject>(pc), "PCSetCoordinates_C",
                                       PCSetCoordinates_Tessera));
  PetscFunctionReturn(0);
}
