#pragma once
// PCTESSERA's constructor, for PCRegister (register.cpp).
#include <petscpc.h>

PetscErrorCode PCCreate_Tessera(PC pc);
/// -log_view events of PCSetUp's parts (registered once by TesseraPetscRegisterAll): reading the
/// operator's rows (and assembling them), building or re-setting up the hierarchy, and putting it
/// on the GPU (the distributed hierarchy's upload or refresh; the one-GPU cycle and its warm-up).
extern PetscLogEvent TESSERA_PCReadA, TESSERA_PCHierarchy, TESSERA_PCUpload;
