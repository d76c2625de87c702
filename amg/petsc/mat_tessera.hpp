#pragma once
// The AIJ matrix types whose products run on Tessera (internal to libtessera_petsc).
#include <petscmat.h>

#include "amg/petsc/tessera_petsc.h"

namespace tessera::petsc {
struct MatTesseraData;
}

PetscErrorCode MatCreate_SeqAIJTessera(Mat b);
PetscErrorCode MatCreate_MPIAIJTessera(Mat b);
/// In-place (or copying) conversion of a seqaij/mpiaij matrix to the Tessera type.
PetscErrorCode MatConvert_AIJ_AIJTessera(Mat a, MatType type, MatReuse reuse, Mat* out);
/// MatProduct AB / AtB / PtAP with a Tessera A and an AIJ B (mat_tessera_product.cpp).
PetscErrorCode MatProductSetFromOptions_AIJTessera(Mat c);
/// AIJ's own product hook for `a`'s kind (seq or mpi), for the cases Tessera leaves to AIJ.
PetscErrorCode MatProductSetFromOptions_AIJFallback(Mat c);
/// -log_view events of the Tessera paths (registered once by TesseraPetscRegisterAll).
extern PetscLogEvent TESSERA_MatMult, TESSERA_MatProduct;
