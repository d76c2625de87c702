#pragma once
// The line between PETSc (error codes) and Tessera (exceptions). Code on the Tessera side may
// call PETSc through TESSERA_PETSC_THROW, which turns a failing call into PetscFailure; every
// PETSc callback wraps its Tessera work in TesseraPetscTry, which turns any exception back
// into a PETSc error, so no C++ exception ever unwinds through PETSc's C frames.
#include <petscsys.h>

#include <exception>
#include <new>

#include "local/core/error.hpp"

namespace tessera::petsc {

/// A PETSc call failed inside Tessera code; PETSc has already recorded its traceback.
struct PetscFailure : std::exception {
  explicit PetscFailure(PetscErrorCode c) : code(c) {}
  const char* what() const noexcept override { return "PETSc call failed"; }
  PetscErrorCode code;
};

/// Tessera computes in real double precision; other PETSc scalar types are refused at setup.
#if defined(PETSC_USE_COMPLEX)
constexpr const char* kUnsupportedScalar = "complex PetscScalar";
#elif !defined(PETSC_USE_REAL_DOUBLE)
constexpr const char* kUnsupportedScalar = "PetscScalar other than real double (single, __float128 or __fp16)";
#else
constexpr const char* kUnsupportedScalar = nullptr;
#endif

inline double to_double(PetscScalar v) { return static_cast<double>(PetscRealPart(v)); }

}  // namespace tessera::petsc

#define TESSERA_PETSC_THROW(...)                                              \
  do {                                                                        \
    PetscErrorCode tessera_ierr_ = (__VA_ARGS__);                             \
    if (PetscUnlikely(tessera_ierr_)) throw ::tessera::petsc::PetscFailure(tessera_ierr_); \
  } while (0)

/* InputError is collective in Tessera's distributed layer (every rank throws it), so it is
   reported on the object's communicator; other failures may be local to one rank. */
#define TesseraPetscTry(comm, ...)                                                                       \
  do {                                                                                                   \
    try {                                                                                                \
      __VA_ARGS__;                                                                                       \
    } catch (const ::tessera::petsc::PetscFailure& e) {                                                  \
      return PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, e.code, PETSC_ERROR_REPEAT, " "); \
    } catch (const ::tessera::InputError& e) {                                                           \
      SETERRQ(comm, PETSC_ERR_ARG_WRONG, "Tessera: %s", e.what());                                       \
    } catch (const std::bad_alloc&) {                                                                    \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "Tessera: out of host memory");                            \
    } catch (const std::exception& e) {                                                                  \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "Tessera: %s", e.what());                                  \
    }                                                                                                    \
  } while (0)
