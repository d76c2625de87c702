#pragma once
/* Tessera inside PETSc: the preconditioner "tessera" (smoothed-aggregation AMG) and the AIJ
   matrix types "seqaijtessera" / "mpiaijtessera" (root name "tessera") whose MatMult,
   MatMultAdd, MatMultTranspose and MatProduct AB / AtB / PtAP run on Tessera.

   Unmodified applications get both through   -dll_append /path/to/libtessera_petsc.so
   (PETSc then calls PetscDLLibraryRegister_tessera_petsc); programs linking the library can
   call TesseraPetscRegisterAll() after PetscInitialize() instead. */
#include <petscksp.h>

#define PCTESSERA        "tessera"
#define MATTESSERA       "tessera"
#define MATSEQAIJTESSERA "seqaijtessera"
#define MATMPIAIJTESSERA "mpiaijtessera"

/* Registers PCTESSERA and the matrix types (idempotent). */
PETSC_EXTERN PetscErrorCode TesseraPetscRegisterAll(void);
/* Entry point PETSc's dynamic loader looks up in libtessera_petsc.so. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_tessera_petsc(void);
