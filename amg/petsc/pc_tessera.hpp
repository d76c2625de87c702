#pragma once
// PCTESSERA's constructor, for PCRegister (register.cpp).
#include <petscpc.h>

PetscErrorCode PCCreate_Tessera(PC pc);
