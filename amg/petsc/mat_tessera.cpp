// MATSEQAIJTESSERA / MATMPIAIJTESSERA: AIJ matrices (same data, same ops) of which MatMult,
// MatMultAdd, MatMultTranspose and the AB / AtB / PtAP products run on Tessera, so that every
// other consumer of AIJ (GAMG's "(MPI)AIJ" checks, ILU, direct solvers, viewers) still works.
// As PETSc's own GPU AIJ types: MatCreate_ = AIJ's create, then convert in place.
#include <petsc/private/matimpl.h>

#include <memory>

#include "amg/petsc/mat_tessera.hpp"
#include "amg/petsc/petsc_boundary.hpp"
#include "amg/petsc/petsc_operator.hpp"
#include "dist/spmv.hpp"
#include "dist/transpose.hpp"

// Exported by libpetsc (PETSC_EXTERN in src/mat/impls/aij/{seq,mpi}/*.h, headers a PETSc
// installation does not ship).
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);

PetscLogEvent TESSERA_MatMult = 0, TESSERA_MatProduct = 0;

namespace tessera::petsc {

// Attached to the matrix as a PetscContainer, so it lives and dies with the Mat.
struct MatTesseraData {
  std::unique_ptr<dist::Communicator> comm;
  MatrixMirror a;
  dist::DistMatrix at;  // A^T for MatMultTranspose, rebuilt when A's state moves
  PetscObjectState at_state = -1;
  dist::DistVector x;
  std::vector<double> y;
};

namespace {

constexpr const char* kContainerName = "Tessera_MatData";
// AIJ's product hooks, saved at the first conversion of each kind (the ops table of a freshly
// created seqaij / mpiaij matrix).
PetscErrorCode (*aij_product_hook[2])(Mat) = {nullptr, nullptr};

PetscErrorCode destroy_data(void* p) {
  PetscFunctionBegin;
  delete static_cast<MatTesseraData*>(p);
  PetscFunctionReturn(0);
}

PetscErrorCode get_data(Mat a, MatTesseraData** d) {
  PetscContainer container = nullptr;
  PetscFunctionBegin;
  PetscCall(PetscObjectQuery(reinterpret_cast<PetscObject>(a), kContainerName, reinterpret_cast<PetscObject*>(&container)));
  PetscCheck(container, PetscObjectComm(reinterpret_cast<PetscObject>(a)), PETSC_ERR_PLIB, "Tessera matrix without its data");
  PetscCall(PetscContainerGetPointer(container, reinterpret_cast<void**>(d)));
  PetscFunctionReturn(0);
}

bool is_seq(Mat a) {
  PetscBool seq = PETSC_FALSE;
  PetscObjectBaseTypeCompare(reinterpret_cast<PetscObject>(a), MATSEQAIJ, &seq);
  return seq;
}

// Copies x's owned entries in, runs op, copies the result out: host arrays with a CPU PETSc;
// a CUDA PETSc would hand VecCUDAGetArray pointers to the device backend here instead.
template <class Op>
void with_vectors(MatTesseraData& d, Vec x, Vec y, Op op) {
  PetscInt n = 0, m = 0;
  const PetscScalar* in = nullptr;
  PetscScalar* out = nullptr;
  TESSERA_PETSC_THROW(VecGetLocalSize(x, &n));
  TESSERA_PETSC_THROW(VecGetLocalSize(y, &m));
  d.x.owned.resize(static_cast<std::size_t>(n));
  TESSERA_PETSC_THROW(VecGetArrayRead(x, &in));
  for (PetscInt i = 0; i < n; ++i) d.x.owned[i] = to_double(in[i]);
  TESSERA_PETSC_THROW(VecRestoreArrayRead(x, &in));
  d.y.assign(static_cast<std::size_t>(m), 0.0);
  op();
  TESSERA_PETSC_THROW(VecGetArrayWrite(y, &out));
  for (PetscInt i = 0; i < m; ++i) out[i] = d.y[i];
  TESSERA_PETSC_THROW(VecRestoreArrayWrite(y, &out));
}

void multiply(Mat a, Vec x, Vec y, bool transpose) {
  MatTesseraData* d = nullptr;
  TESSERA_PETSC_THROW(get_data(a, &d));
  if (!d->comm) d->comm = std::make_unique<dist::Communicator>(PetscObjectComm(reinterpret_cast<PetscObject>(a)));
  d->a.sync(*d->comm, a);
  const dist::DistMatrix* op = &d->a.matrix();
  if (transpose) {
    PetscObjectState state = 0;
    TESSERA_PETSC_THROW(PetscObjectStateGet(reinterpret_cast<PetscObject>(a), &state));
    if (state != d->at_state) {
      d->at = dist::transpose(*d->comm, d->a.matrix());
      d->at_state = state;
    }
    op = &d->at;
  }
  with_vectors(*d, x, y, [&] { dist::spmv(*d->comm, *op, d->x, d->y); });
}

PetscErrorCode MatMult_AIJTessera(Mat a, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(TESSERA_MatMult, a, x, y, 0));
  TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(a)), multiply(a, x, y, false));
  PetscCall(PetscLogEventEnd(TESSERA_MatMult, a, x, y, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode MatMultTranspose_AIJTessera(Mat a, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(TESSERA_MatMult, a, x, y, 0));
  TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(a)), multiply(a, x, y, true));
  PetscCall(PetscLogEventEnd(TESSERA_MatMult, a, x, y, 0));
  PetscFunctionReturn(0);
}

// z = y + A x (z may be y).
PetscErrorCode MatMultAdd_AIJTessera(Mat a, Vec x, Vec y, Vec z) {
  Vec ax = nullptr;
  PetscFunctionBegin;
  PetscCall(VecDuplicate(z, &ax));
  PetscCall(MatMult_AIJTessera(a, x, ax));
  if (z != y) PetscCall(VecCopy(y, z));
  PetscCall(VecAXPY(z, 1.0, ax));
  PetscCall(VecDestroy(&ax));
  PetscFunctionReturn(0);
}

PetscErrorCode attach_data(Mat b) {
  PetscContainer container = nullptr;
  MatTesseraData* d = nullptr;
  PetscFunctionBegin;
  TesseraPetscTry(PETSC_COMM_SELF, d = new MatTesseraData);
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &container));
  PetscCall(PetscContainerSetPointer(container, d));
  PetscCall(PetscContainerSetUserDestroy(container, destroy_data));
  PetscCall(PetscObjectCompose(reinterpret_cast<PetscObject>(b), kContainerName, reinterpret_cast<PetscObject>(container)));
  PetscCall(PetscContainerDestroy(&container));
  PetscFunctionReturn(0);
}

// Product hooks under every name MatProductSetFromOptions queries for mixed operand types.
PetscErrorCode compose_product_hooks(Mat b, const char* type, const char* aij) {
  char name[256];
  PetscFunctionBegin;
  const char* pairs[][2] = {{type, type}, {type, aij}, {aij, type}};
  for (auto& p : pairs) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", p[0], p[1]));
    PetscCall(PetscObjectComposeFunction(reinterpret_cast<PetscObject>(b), name, MatProductSetFromOptions_AIJTessera));
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", aij, type));
  PetscCall(PetscObjectComposeFunction(reinterpret_cast<PetscObject>(b), name, MatConvert_AIJ_AIJTessera));
  PetscFunctionReturn(0);
}

}  // namespace

PetscErrorCode aij_product_fallback(Mat c, bool seq) {
  PetscFunctionBegin;
  if (aij_product_hook[seq ? 0 : 1]) PetscCall(aij_product_hook[seq ? 0 : 1](c));
  PetscFunctionReturn(0);
}

}  // namespace tessera::petsc

PetscErrorCode MatProductSetFromOptions_AIJFallback(Mat c) {
  PetscFunctionBegin;
  PetscCall(tessera::petsc::aij_product_fallback(c, tessera::petsc::is_seq(c->product->A)));
  PetscFunctionReturn(0);
}

PetscErrorCode MatConvert_AIJ_AIJTessera(Mat a, MatType, MatReuse reuse, Mat* out) {
  using namespace tessera::petsc;
  Mat b = nullptr;
  PetscFunctionBegin;
  PetscCheck(!kUnsupportedScalar, PetscObjectComm(reinterpret_cast<PetscObject>(a)), PETSC_ERR_SUP,
             "Tessera matrix types compute in real double precision; this PETSc was configured with %s",
             kUnsupportedScalar);
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(a, MAT_COPY_VALUES, out));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(a, *out, SAME_NONZERO_PATTERN));
  b = reuse == MAT_INPLACE_MATRIX ? a : *out;
  PetscBool done = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(b), &done, MATSEQAIJTESSERA, MATMPIAIJTESSERA, ""));
  if (done) PetscFunctionReturn(0);  // MatDuplicate of a Tessera matrix already made one
  const bool seq = is_seq(b);
  const char* type = seq ? MATSEQAIJTESSERA : MATMPIAIJTESSERA;
  if (!aij_product_hook[seq ? 0 : 1]) aij_product_hook[seq ? 0 : 1] = b->ops->productsetfromoptions;
  PetscCall(attach_data(b));
  b->ops->mult = MatMult_AIJTessera;
  b->ops->multadd = MatMultAdd_AIJTessera;
  b->ops->multtranspose = MatMultTranspose_AIJTessera;
  b->ops->productsetfromoptions = MatProductSetFromOptions_AIJTessera;
  PetscCall(compose_product_hooks(b, type, seq ? MATSEQAIJ : MATMPIAIJ));
  PetscCall(PetscObjectChangeTypeName(reinterpret_cast<PetscObject>(b), type));
  if (reuse == MAT_INPLACE_MATRIX) *out = b;
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_SeqAIJTessera(Mat b) {
  PetscFunctionBegin;
  PetscCall(MatCreate_SeqAIJ(b));
  PetscCall(MatConvert_AIJ_AIJTessera(b, MATSEQAIJTESSERA, MAT_INPLACE_MATRIX, &b));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCreate_MPIAIJTessera(Mat b) {
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIAIJ(b));
  PetscCall(MatConvert_AIJ_AIJTessera(b, MATMPIAIJTESSERA, MAT_INPLACE_MATRIX, &b));
  PetscFunctionReturn(0);
}
