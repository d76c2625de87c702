// Registration: PCTESSERA and the Tessera AIJ types, through the public function or PETSc's
// dynamic loader (-dll_append libtessera_petsc.so looks up PetscDLLibraryRegister_tessera_petsc,
// the name derived from the file name; it must stay unmangled: see tests/petsc).
#include "amg/petsc/mat_tessera.hpp"
#include "amg/petsc/pc_tessera.hpp"
#include "amg/petsc/tessera_petsc.h"

PetscErrorCode TesseraPetscRegisterAll(void) {
  static PetscBool registered = PETSC_FALSE;
  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(0);
  registered = PETSC_TRUE;
  PetscCall(PCRegister(PCTESSERA, PCCreate_Tessera));
  PetscCall(MatRegister(MATSEQAIJTESSERA, MatCreate_SeqAIJTessera));
  PetscCall(MatRegister(MATMPIAIJTESSERA, MatCreate_MPIAIJTessera));
  PetscCall(MatRegisterRootName(MATTESSERA, MATSEQAIJTESSERA, MATMPIAIJTESSERA));
  PetscCall(PetscLogEventRegister("TesseraMatMult", MAT_CLASSID, &TESSERA_MatMult));
  PetscCall(PetscLogEventRegister("TesseraMatProd", MAT_CLASSID, &TESSERA_MatProduct));
  PetscCall(PetscLogEventRegister("TesseraPCReadA", PC_CLASSID, &TESSERA_PCReadA));
  PetscCall(PetscLogEventRegister("TesseraPCLevels", PC_CLASSID, &TESSERA_PCHierarchy));
  PetscCall(PetscLogEventRegister("TesseraPCUpload", PC_CLASSID, &TESSERA_PCUpload));
  PetscCall(PetscInfo(NULL, "Tessera: registered PC %s and Mat types %s, %s (root %s)\n", PCTESSERA, MATSEQAIJTESSERA,
                      MATMPIAIJTESSERA, MATTESSERA));
  PetscFunctionReturn(0);
}

PetscErrorCode PetscDLLibraryRegister_tessera_petsc(void) {
  PetscFunctionBegin;
  PetscCall(TesseraPetscRegisterAll());
  PetscFunctionReturn(0);
}
