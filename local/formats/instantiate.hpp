#pragma once
// Explicit instantiation over the value types Tessera stores: one line per template.
#include "local/core/half.hpp"

#define TESSERA_FOR_EACH_VALUE_TYPE(MACRO) \
  MACRO(double)                            \
  MACRO(float)                             \
  MACRO(::tessera::Half)
