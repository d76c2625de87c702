# Finds what Tessera builds against. CUDA is detected, never assumed: without nvcc the
# host reference backend still builds and every program runs on it.

find_package(MPI REQUIRED COMPONENTS CXX)
find_package(ZLIB REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(Threads REQUIRED)
# OpenMP (optional, found with GCC and Clang): the host loops of the distributed setup
# (local/core/host_ranges.hpp) run on the rank's CPU threads; without it they run on one.
find_package(OpenMP COMPONENTS CXX)

set(TESSERA_HAVE_CUDA OFF)
if(TESSERA_ENABLE_CUDA)
  # Hopper by default; override with -DCMAKE_CUDA_ARCHITECTURES=... (must precede enable_language).
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(TESSERA_HAVE_CUDA ON)
  else()
    message(STATUS "Tessera: no CUDA compiler found; building the host backend only")
  endif()
endif()

# NCCL moves device buffers between ranks; required with CUDA (the MPIs we target are not
# CUDA-aware). Debian/Ubuntu put it in the system paths, the CUDA toolkit image in cuda/lib64.
if(TESSERA_HAVE_CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME PATH_SUFFIXES lib lib64)
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    message(FATAL_ERROR "CUDA is enabled but NCCL was not found (set NCCL_HOME, or -DTESSERA_ENABLE_CUDA=OFF)")
  endif()
  add_library(tessera_nccl INTERFACE)
  target_include_directories(tessera_nccl INTERFACE ${NCCL_INCLUDE_DIR})
  target_link_libraries(tessera_nccl INTERFACE ${NCCL_LIBRARY})
endif()

# PETSc (optional): through pkg-config, as PETSc itself recommends.
set(TESSERA_HAVE_PETSC OFF)
find_package(PkgConfig)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PETSC IMPORTED_TARGET PETSc)
  if(PETSC_FOUND)
    set(TESSERA_HAVE_PETSC ON)
  endif()
endif()

# HYPRE (optional): Debian installs headers in /usr/include/hypre and libHYPRE.
set(TESSERA_HAVE_HYPRE OFF)
find_path(HYPRE_INCLUDE_DIR HYPRE.h PATH_SUFFIXES hypre)
find_library(HYPRE_LIBRARY HYPRE)
if(HYPRE_INCLUDE_DIR AND HYPRE_LIBRARY)
  set(TESSERA_HAVE_HYPRE ON)
  add_library(tessera_hypre INTERFACE)
  target_include_directories(tessera_hypre INTERFACE ${HYPRE_INCLUDE_DIR})
  target_link_libraries(tessera_hypre INTERFACE ${HYPRE_LIBRARY})
endif()
