// MatProduct AB, AtB and PtAP for a Tessera A and an AIJ B (or P): the operands are mirrored
// as dist::DistMatrix, the symbolic phase builds dist::DistSpgemm / dist::DistPtap (which
// also computes the first values) and writes C as an AIJ matrix of A's type; the numeric
// phase refreshes the operands' values and recomputes only the values of C.
#include <petsc/private/matimpl.h>

#include <memory>

#include "amg/petsc/mat_tessera.hpp"
#include "amg/petsc/petsc_boundary.hpp"
#include "amg/petsc/petsc_operator.hpp"
#include "dist/ptap.hpp"
#include "dist/spgemm.hpp"
#include "dist/transpose.hpp"

namespace tessera::petsc {
namespace {

struct ProductData {
  std::unique_ptr<dist::Communicator> comm;
  MatrixMirror a, b;
  dist::DistMatrix at;  // AtB only
  std::unique_ptr<dist::DistSpgemm> spgemm;
  std::unique_ptr<dist::DistPtap> ptap;
  bool fresh = false;  // C holds the values of the current operands (set by symbolic)

  const dist::DistMatrix& result() const { return ptap ? ptap->result() : spgemm->result(); }
};

PetscErrorCode destroy_product(void* p) {
  PetscFunctionBegin;
  delete static_cast<ProductData*>(p);
  PetscFunctionReturn(0);
}

bool is_tessera(Mat m) {
  PetscBool match = PETSC_FALSE;
  PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(m), &match, MATSEQAIJTESSERA, MATMPIAIJTESSERA, "");
  return match;
}

bool is_aij(Mat m) {
  PetscBool match = PETSC_FALSE;
  PetscObjectBaseTypeCompareAny(reinterpret_cast<PetscObject>(m), &match, MATSEQAIJ, MATMPIAIJ, "");
  return match;
}

void compute(ProductData& d, MatProductType type, bool first) {
  const dist::Communicator& comm = *d.comm;
  const dist::DistMatrix &a = d.a.matrix(), &b = d.b.matrix();
  switch (type) {
    case MATPRODUCT_AB:
      if (first) d.spgemm = std::make_unique<dist::DistSpgemm>(comm, a, b);
      else d.spgemm->recompute(comm, a, b);
      break;
    case MATPRODUCT_AtB:
      d.at = dist::transpose(comm, a);
      if (first) d.spgemm = std::make_unique<dist::DistSpgemm>(comm, d.at, b);
      else d.spgemm->recompute(comm, d.at, b);
      break;
    default:  // MATPRODUCT_PtAP (the only other type routed here)
      if (first) d.ptap = std::make_unique<dist::DistPtap>(comm, a, b);
      else d.ptap->recompute(comm, a, b);
  }
}

void symbolic(Mat c, ProductData& d) {
  Mat_Product* p = c->product;
  d.comm = std::make_unique<dist::Communicator>(PetscObjectComm(reinterpret_cast<PetscObject>(c)));
  d.a.sync(*d.comm, p->A);
  d.b.sync(*d.comm, p->B);
  compute(d, p->type, true);
  const dist::DistMatrix& r = d.result();
  const PetscInt m = static_cast<PetscInt>(r.owned_rows()),
                 n = static_cast<PetscInt>(r.col_partition.size(r.rank));
  TESSERA_PETSC_THROW(MatSetSizes(c, m, n, static_cast<PetscInt>(r.global_rows()), static_cast<PetscInt>(r.global_cols())));
  TESSERA_PETSC_THROW(MatSetType(c, reinterpret_cast<PetscObject>(p->A)->type_name));
  TESSERA_PETSC_THROW(MatSetUp(c));
  write_aij(r, c, true);
  d.fresh = true;
}

void numeric(Mat c, ProductData& d) {
  Mat_Product* p = c->product;
  const auto changed_a = d.a.sync(*d.comm, p->A), changed_b = d.b.sync(*d.comm, p->B);
  TESSERA_REQUIRE_INPUT(changed_a != MatrixMirror::Change::pattern && changed_b != MatrixMirror::Change::pattern,
                        "MatProductNumeric: the nonzero pattern of an operand changed since the symbolic product; "
                        "recompute it with MAT_INITIAL_MATRIX");
  const bool same_operands = changed_a == MatrixMirror::Change::none && changed_b == MatrixMirror::Change::none;
  if (d.fresh && same_operands) return;  // symbolic already wrote these values
  compute(d, p->type, false);
  write_aij(d.result(), c, false);
}

PetscErrorCode MatProductNumeric_Tessera(Mat c) {
  auto& d = *static_cast<ProductData*>(c->product->data);
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(TESSERA_MatProduct, c, 0, 0, 0));
  TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(c)), numeric(c, d));
  d.fresh = false;
  PetscCall(PetscLogEventEnd(TESSERA_MatProduct, c, 0, 0, 0));
  PetscCall(PetscInfo(c, "Tessera MatProduct %s numeric\n", MatProductTypes[c->product->type]));
  PetscFunctionReturn(0);
}

PetscErrorCode MatProductSymbolic_Tessera(Mat c) {
  ProductData* d = nullptr;
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(TESSERA_MatProduct, c, 0, 0, 0));
  TesseraPetscTry(PETSC_COMM_SELF, d = new ProductData);
  c->product->data = d;
  c->product->destroy = destroy_product;
  TesseraPetscTry(PetscObjectComm(reinterpret_cast<PetscObject>(c)), symbolic(c, *d));
  c->ops->productnumeric = MatProductNumeric_Tessera;
  PetscCall(PetscLogEventEnd(TESSERA_MatProduct, c, 0, 0, 0));
  PetscCall(PetscInfo(c, "Tessera MatProduct %s symbolic: %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " nonzeros\n",
                      MatProductTypes[c->product->type], c->rmap->N, c->cmap->N,
                      static_cast<PetscInt>(d->result().nnz())));
  PetscFunctionReturn(0);
}

}  // namespace
}  // namespace tessera::petsc

PetscErrorCode MatProductSetFromOptions_AIJTessera(Mat c) {
  using namespace tessera::petsc;
  Mat_Product* p = c->product;
  PetscFunctionBegin;
  const bool routed = is_tessera(p->A) && is_aij(p->B) && !p->C &&
                      (p->type == MATPRODUCT_AB || p->type == MATPRODUCT_AtB || p->type == MATPRODUCT_PtAP);
  if (routed) c->ops->productsymbolic = MatProductSymbolic_Tessera;
  else PetscCall(MatProductSetFromOptions_AIJFallback(c));
  PetscFunctionReturn(0);
}
